{% macro delivered_versions(pipeline, sql, columns) %}
    {#- A select of the pipeline's model's rows (`sql`, its columns [(name, type)]) as versions: the
        model's columns, each version's quarantine reason (late_data.quarantine_reason; it replaces
        the model's own quarantine_reason column, which it takes first), loaded_at, this run's
        time, and for a pipeline with dimensions source_ingested_at, the delivery's ingested_at. -#}
    select
        {%- for name, type in columns if name != 'quarantine_reason' %}
        {{ name }},
        {%- endfor %}
        {{ late_data.quarantine_reason(pipeline, columns) }} as quarantine_reason,
        {{ late_data.run_time() }} as loaded_at
        {%- if pipeline.dimensions %},
        -- The delivery a version comes from: a dimension change makes new versions of it, stamped later.
        ingested_at as source_ingested_at
        {%- endif %}
    from (
        {{ sql }}
    ) as delivered
{%- endmacro %}


{% macro result_query(pipeline, aggregates, plan, helper_columns, chain=none) %}
    {#- The select of a pipeline's result rows in this run: the windows to write
        (late_data.windows_to_write over the version counts of `plan`, or over the version chain
        staged as `chain`) with the pipeline's measures worked out (means from their sums,
        expressions over the other measures) and the window_change and window_repaired helper
        columns the write reads (`helper_columns`). -#}
    with

    version_counts as (

        {{ 'select * from ' ~ chain if chain else late_data.version_counts(pipeline, plan) }}

    ),

    window_checksums as (

        {{ late_data.window_checksums('version_counts', pipeline, aggregates, plan) }}

    ),

    windows_to_write as (

        {{ late_data.windows_to_write('window_checksums', pipeline, aggregates, plan) }}

    ),

    measured_windows as (

        select
            *
            {%- for name, sum_name in aggregates.means.items() %},
            cast({{ sum_name }} as double) / {{ pipeline.count_column }} as {{ name }}
            {%- endfor %}
        from windows_to_write

    )

    select
        {{- late_data.window_bounds(pipeline) }}
        {%- for measure in pipeline.measures %}
        {{ '(' ~ measure.expression ~ ') as ' if measure.kind == 'expression' }}{{ measure.name }},
        {%- endfor %}
        is_final,
        final_at,
        {%- for name in late_data.hidden_sums(pipeline) %}
        {{ name }},
        {%- endfor %}
        {{ pipeline.digest }},
        {%- for column in pipeline.state_columns %}
        {{ column }},
        {%- endfor %}
        computed_at,
        invocation_id,
        written_at,
        partition_start,
        series_bucket{{ ', window_change, window_repaired' if helper_columns }}{{ ', window_dimension_change' if helper_columns and pipeline.dimensions }}
    from measured_windows
{%- endmacro %}


{% macro window_bounds(pipeline) %}
    {#- The first columns of a result row (each followed by a comma): window_start, window_end and
        the series key (sessions: late_data.session_bounds). #}
    {%- if pipeline.session_gap -%}
        {{- return(late_data.session_bounds(pipeline)) -}}
    {%- endif %}
        window_start,
        {{ late_data.add_seconds('window_start', pipeline.window_size) }} as window_end,
        {%- for column in pipeline.series_key %}
        {{ column }},
        {%- endfor %}
{%- endmacro %}


{% macro quarantine_select(pipeline) %}
    {#- The quarantine view of a pipeline: the versions it counts toward no window, with the
        columns its versions table and too-late listing have, by the source's own names, the
        source table (source_table), the reason and the run that loaded it (quarantined_at). A
        view over the versions table, so quarantining costs a run nothing beyond loading the
        versions it loads anyway. -#}
    {%- set versions = late_data.pipeline_relation(pipeline, 'versions') -%}
    {%- set columns = [] -%}
    {%- for name, type in late_data.known_columns(versions) if name not in ('quarantine_reason', 'loaded_at', 'source_ingested_at') -%}
        {%- do columns.append(name) -%}
    {%- endfor %}
    select
        {%- if pipeline.source_column != 'source_table' %}
        {{ pipeline.source_column or late_data.sql_string(late_data.source_table_name(pipeline)) }} as source_table,
        {%- endif %}
        {%- for column in columns %}
        {{ column }},
        {%- endfor %}
        quarantine_reason,
        loaded_at as quarantined_at
    from {{ versions }}
    where quarantine_reason is not null
{%- endmacro %}


{% macro text_key(columns, alias=none) %}
    {#- SQL: one column as text, or several joined with '|'; of the relation `alias`, if given. -#}
    {%- if alias -%}
        {%- set qualified = [] -%}
        {%- for column in columns -%}
            {%- do qualified.append(alias ~ '.' ~ column) -%}
        {%- endfor -%}
        {{- return(late_data.text_key(qualified)) -}}
    {%- endif -%}
    {%- if columns | length == 1 -%}
        {{- 'cast(' ~ columns[0] ~ ' as string)' -}}
    {%- else -%}
        {{- 'concat_ws(\'|\', ' ~ columns | map('string') | join(', ') ~ ')' -}}
    {%- endif -%}
{% endmacro %}


{% macro listing_query(pipeline) %}
    {#- The select of what a pipeline's too-late listing lists in this run (late_data.too_late_versions
        over the version chain its result staged in this invocation, else over the version counts
        of its own plan): the versions' own columns, the window each missed and why. -#}
    {%- set version_columns = [] -%}
    {%- for name, type in late_data.known_columns(late_data.pipeline_relation(pipeline, 'versions'))
        if name not in ('quarantine_reason', 'loaded_at') -%}
        {%- do version_columns.append(name) -%}
    {%- endfor -%}
    {%- set chain = late_data.staged_chain(pipeline) %}
    with

    version_counts as (

        {{ 'select * from ' ~ chain if chain else late_data.version_counts(pipeline, late_data.count_plan(pipeline, 'listing')) }}

    ),

    too_late_versions as (

        {{ late_data.too_late_versions('version_counts', pipeline, late_data.listing_since(pipeline)) }}

    ),

    -- One entry per version and window: copies of one version delivered together (a versions
    -- table loaded before copies were stored once) are listed once.
    too_late_entries as (

        select
            *,
            row_number() over (partition by version_id order by too_late_reason) as copy_number
        from too_late_versions

    )

    select
        version_id,
        {%- for column in version_columns %}
        {{ column }},
        {%- endfor %}
        missed_window_start as window_start,
        missed_final_at as final_at,
        too_late_reason,
        seconds_after_final,
        {{ late_data.run_time() }} as detected_at,
        '{{ invocation_id }}' as invocation_id
    from too_late_entries
    where copy_number = 1
{%- endmacro %}
