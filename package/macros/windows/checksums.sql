{% macro window_checksums(version_counts, pipeline, aggregates, plan) %}
    {#- A select, per window (window_start and the series key, with final_at, partition_start and
        series_bucket), of the pipeline's aggregates (late_data.aggregates) over `version_counts`
        read with `plan` (late_data.count_plan):
        - `<checksum>` and `<recomputed measure>`: over the versions that count now, when the run
          recomputes (first build, --full-refresh, reconcile, backfill);
        - `<checksum>__change`: what changed since the result's previous run (plan.counted_run_time),
          the versions that count now but did not then minus those that counted then but no
          longer do (a distinct count: the values present now but not then minus the reverse,
          late_data.distinct_changes), `changed_by_late_write`: a version written later than
          write_delay_seconds changed the window (see late_data.version_counts), and for a
          pipeline with dimensions `changed_by_dimension`: a dimension change did. -#}
    {%- set fresh = plan.mode != 'delta' -%}
    {%- set change = plan.counted_run_time is not none -%}
    {%- set window_columns = ['window_start'] + pipeline.series_key -%}
    {%- set group_columns = window_columns + ['final_at', 'partition_start', 'series_bucket'] -%}
    {%- set grouped = group_columns -%}
    {%- if pipeline.session_gap -%}
        {%- set version_counts, group_columns, grouped = late_data.session_grouping(version_counts, pipeline) -%}
    {%- endif -%}
    {%- set columns, distincts = late_data.checksum_columns(aggregates, fresh, change) -%}
    {%- if change and pipeline.dimensions -%}
        {%- do columns.append('max(counts_now != counted_before and dimension_changed) as changed_by_dimension') -%}
    {%- endif %}
    {%- if distincts %}
    with

    counted_windows as (
    {%- endif %}
    select
        {{ (group_columns + columns) | join(',\n        ') }}
    from {{ version_counts }}
    where counts_now or counted_before
    group by {{ grouped | join(', ') }}
    {%- if distincts %}

    )
    {%- for name, column in distincts %},

    {{ name }}__changes as (

        {{ late_data.distinct_changes(version_counts, pipeline, column, name, plan) }}

    )
    {%- endfor %}

    select
        counted_windows.*
        {%- for name, column in distincts %},
        coalesce({{ name }}__changes.{{ name }}__change, 0) as {{ name }}__change
        {%- endfor %}
    from counted_windows
    {%- for name, column in distincts %}
    left join {{ name }}__changes using ({{ window_columns | join(', ') }})
    {%- endfor %}
    {%- endif %}
{%- endmacro %}


{% macro checksum_columns(aggregates, fresh, change) %}
    {#- (aggregate columns, distinct counts whose change late_data.distinct_changes works out as
        [(name, column)]) of late_data.window_checksums: `fresh` (over the versions that count
        now) and `change` (what changed since the previous run) as the run needs them. -#}
    {%- set columns, distincts = [], [] -%}
    {%- for name, spec in aggregates.checksums.items() -%}
        {%- if spec.get('distinct') -%}
            {%- if fresh -%}
                {%- do columns.append('count(distinct if(counts_now, ' ~ spec.distinct ~ ', null)) as ' ~ name) -%}
            {%- endif -%}
            {%- if change -%}{%- do distincts.append((name, spec.distinct)) -%}{%- endif -%}
        {%- else -%}
            {%- if fresh -%}
                {%- do columns.append('sum(if(counts_now, ' ~ spec.expression ~ ', 0)) as ' ~ name) -%}
            {%- endif -%}
            {%- if change -%}
                {%- do columns.append('sum(case when counts_now and not counted_before then ' ~ spec.expression
                    ~ ' when counted_before and not counts_now then -(' ~ spec.expression ~ ') else 0 end) as ' ~ name ~ '__change') -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for name, spec in aggregates.recomputed.items() if fresh -%}
        {%- do columns.append(late_data.recomputed_aggregate(spec, 'if(counts_now, ' ~ spec.column ~ ', null)') ~ ' as ' ~ name) -%}
    {%- endfor -%}
    {%- if change -%}
        {%- do columns.append('max(written_late and counts_now != counted_before) as changed_by_late_write') -%}
    {%- endif -%}
    {{- return((columns, distincts)) -}}
{% endmacro %}


{% macro distinct_changes(version_counts, pipeline, column, name, plan) %}
    {#- A select, per window, of how its number of distinct `column` values changed since the
        result's previous run (`name`__change): per window and value, present now (a version with
        it counts now) minus present then (one counted then), summed. A recomputation reads the
        presence from `version_counts`, which holds every version of its range; a scheduled run's
        `version_counts` holds only the events that got a version, so the versions of every event
        that shares a window and value with one of those changes are looked up and chained
        (late_data.version_counts with `matching`): the run reads what arrived and the versions
        that share its values, never a whole window again. -#}
    {%- set window_columns = ['window_start'] + pipeline.series_key -%}
    {%- set value_columns = window_columns + [column] %}
    with
    {%- if plan.mode == 'delta' %}

    changed_values as (

        select distinct {{ value_columns | join(', ') }}
        from {{ version_counts }}
        where counts_now != counted_before

    ),

    value_versions as (

        {{ late_data.version_counts(pipeline, plan, matching={'relation': 'changed_values', 'columns': value_columns}) }}

    ),
    {%- endif %}

    value_presence as (

        select
            {{ value_columns | join(', ') }},
            max(counts_now) as is_present,
            max(counted_before) as was_present
        from {{ 'value_versions' if plan.mode == 'delta' else version_counts }}
        where counts_now or counted_before
        group by {{ value_columns | join(', ') }}

    )

    select
        {{ window_columns | join(', ') }},
        sum(cast(is_present as int) - cast(was_present as int)) as {{ name }}__change
    from value_presence
    {%- if plan.mode == 'delta' %}
    left semi join changed_values using ({{ value_columns | join(', ') }})
    {%- endif %}
    group by {{ window_columns | join(', ') }}
{%- endmacro %}


{% macro window_key(key_columns) %}
    {#- The text key of a window, e.g. window_start|location: the history snapshots' unique key and
        how the audit names vanished windows. -#}
    concat_ws('|', {% for column in key_columns %}cast({{ column }} as string){{ ', ' if not loop.last }}{% endfor %})
{%- endmacro %}


{% macro key_columns(pipeline) %}
    {#- What identifies a window of the pipeline: its start and the series key. -#}
    {{- return(['window_start'] + pipeline.series_key) -}}
{% endmacro %}
