{% macro window_checksums(version_counts, pipeline, aggregates, plan) %}
    {#- A select, per window (window_start and the series key, with final_at, partition_start and
        series_bucket), of the pipeline's aggregates (late_data.aggregates) over `version_counts`
        read with `plan` (late_data.count_plan):
        - `<checksum>` and `<extreme>`: over the versions that count now, when the run recomputes
          (first build, --full-refresh, reconcile, backfill, a pipeline with a min or max);
        - `<checksum>__change`: what changed since the result's previous run (plan.counted_run_time),
          the versions that count now but did not then minus those that counted then but no
          longer do, and `changed_by_late_write`: a version written later than
          write_delay_seconds changed the window (see late_data.version_counts). -#}
    {%- set fresh = plan.mode != 'delta' -%}
    {%- set change = plan.counted_run_time is not none -%}
    {%- set group_columns = ['window_start'] + pipeline.series_key + ['final_at', 'partition_start', 'series_bucket'] -%}
    {%- set columns = [] -%}
    {%- for name, spec in aggregates.checksums.items() -%}
        {%- if fresh -%}
            {%- do columns.append('sum(if(counts_now, ' ~ spec.expression ~ ', 0)) as ' ~ name) -%}
        {%- endif -%}
        {%- if change -%}
            {%- do columns.append('sum(case when counts_now and not counted_before then ' ~ spec.expression
                ~ ' when counted_before and not counts_now then -(' ~ spec.expression ~ ') else 0 end) as ' ~ name ~ '__change') -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for name, extreme in aggregates.extremes.items() if fresh -%}
        {%- do columns.append(extreme.kind ~ '(if(counts_now, ' ~ extreme.column ~ ', null)) as ' ~ name) -%}
    {%- endfor -%}
    {%- if change -%}
        {%- do columns.append('max(written_late and counts_now != counted_before) as changed_by_late_write') -%}
    {%- endif %}
    select
        {{ (group_columns + columns) | join(',\n        ') }}
    from {{ version_counts }}
    where counts_now or counted_before
    group by {{ group_columns | join(', ') }}
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
