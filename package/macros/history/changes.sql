{% macro version_id(relation_alias=none) %}
    {#- A history version's id (dbt_scd_id): its window and the run that published it. -#}
    {%- set prefix = relation_alias ~ '.' if relation_alias else '' -%}
    {{- return(late_data.snapshot_hash([prefix ~ 'window_key', prefix ~ 'computed_at'])) -}}
{% endmacro %}


{% macro result_versions(source, pipeline, where='true') %}
    {#- A select of the rows of `source` (a pipeline's result, or an expression reading it, e.g. as
        of a past moment) as open history versions: window_key, the result's columns but the
        bookkeeping of its writes (written_at, the digest, the sums a mean divides), then the
        snapshot columns, each version valid from the run that published it (computed_at). -#}
    select
        *,
        {{ late_data.version_id() }} as dbt_scd_id,
        computed_at as dbt_updated_at,
        computed_at as dbt_valid_from,
        cast(null as timestamp) as dbt_valid_to,
        true as is_current_version
    from (
        select
            {{ late_data.window_key(late_data.key_columns(pipeline)) }} as window_key,
            {{ late_data.history_columns(pipeline)[1:] | join(', ') }}
        from {{ source }}
        where {{ where }}
    ) as published_windows
{%- endmacro %}


{% macro history_columns(pipeline) %}
    {#- The columns a history version takes from its pipeline's result, after its window_key: the
        result's columns but the bookkeeping of its writes (written_at, the digest, the sums a
        mean divides, a session's burst_start). -#}
    {%- set columns = ['window_key'] -%}
    {%- for name, type in late_data.known_columns(late_data.pipeline_relation(pipeline))
        if name not in ['written_at', 'burst_start', pipeline.digest] + late_data.hidden_sums(pipeline) -%}
        {%- do columns.append(name) -%}
    {%- endfor -%}
    {{- return(columns) -}}
{% endmacro %}


{% macro closed_versions(history, pipeline, closing) %}
    {#- A select of the versions a late-data history closes in this run: each window of the result
        as it stood at closing.base (before this run's write, or when the history last recorded)
        that the result now holds published by a later run (closed then: its new version's
        computed_at) or no longer holds (vanished: closed at this run's time, or at the run the
        audit says found it vanished). Only the (time partition, series bucket) pairs the result
        rewrote are read, when this run's write is all there is to record. A history that missed
        runs or recovers an interrupted one leaves out the versions it closed already. -#}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- set rewritten = 'true' if closing.partitions is none else late_data.partition_pairs(closing.partitions, 'stored') -%}
    {%- set vanished_in_audit = closing.catching_up and closing.since is not none %}
    with

    base_versions as (

        {{ late_data.result_versions(result ~ ' ' ~ closing.base ~ ' as stored', pipeline, rewritten) }}

    ),

    current_windows as (

        select {{ late_data.window_key(late_data.key_columns(pipeline)) }} as window_key, computed_at
        from {{ result }} as stored
        where {{ rewritten }}

    ),
    {%- if vanished_in_audit %}

    vanished_runs as (

        {{ late_data.vanished_runs(result, closing.since) }}

    ),
    {%- endif %}

    closed_versions as (

        select
            {%- for column in late_data.history_columns(pipeline) + ['dbt_scd_id', 'dbt_updated_at', 'dbt_valid_from'] %}
            base_versions.{{ column }},
            {%- endfor %}
            coalesce(
                current_windows.computed_at,
                {{ 'vanished_runs.vanished_at, ' if vanished_in_audit }}{{ late_data.run_time() }}
            ) as dbt_valid_to,
            false as is_current_version
        from base_versions
        left join current_windows on base_versions.window_key = current_windows.window_key
        {%- if vanished_in_audit %}
        left join vanished_runs on base_versions.window_key = vanished_runs.window_key
        {%- endif %}
        where current_windows.window_key is null or current_windows.computed_at != base_versions.dbt_valid_from

    )

    select * from closed_versions
    {%- if closing.recorded_before %}
    where dbt_scd_id not in (select dbt_scd_id from {{ late_data.closed_versions_relation(history) }})
    {%- endif %}
{%- endmacro %}


{% macro vanished_runs(result, since) %}
    {#- A select of the windows the successful runs of `result` found vanished after `since`, with
        the last such run time (vanished_at). -#}
    select window_key, max(run_time) as vanished_at
    from {{ late_data.run_audit_relation() }}
    lateral view explode(vanished_windows) vanished as window_key
    where
        model = {{ late_data.sql_string(result.identifier) }}
        and outcome = 'success'
        and run_time > {{ late_data.timestamp_literal(since) }}
    group by window_key
{%- endmacro %}


{% macro snapshot_hash(args) %}
    {#- dbt-spark's snapshot_hash_arguments, for the version ids of a history (dbt_scd_id). -#}
    md5({%- for arg in args -%}
        coalesce(cast({{ arg }} as string), '')
        {% if not loop.last %} || '|' || {% endif %}
    {%- endfor -%})
{%- endmacro %}
