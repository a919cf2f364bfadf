{% macro late_data_scan_horizon(relation, source_tables) %}
    {#- SQL predicate over `relation` (row versions with event_time and ingested_at, read from the
        raw tables `source_tables`) keeping exactly the rows this run needs, so a run reads the raw
        partitions of its late window, not all of history:
        - every version whose event time lies in the partitions the run checks (from the lowest
          first checked partition of the late-data models selected in this invocation that read
          these sources; a backfill's range);
        - every version that arrived since the earliest arrival among those, which includes every
          version that can supersede one of them (a correction moving a reading out of the range
          included) and every arrival since the previous run.
        'true' (everything) when any of those models is built from scratch (first build,
        --full-refresh) or no such model is selected. -#}
    {%- set checked = late_data_checked_event_range(source_tables) -%}
    {%- if checked is none -%}
        {{- return('true') -}}
    {%- endif -%}
    {%- set in_range = 'event_time >= ' ~ late_data_timestamp_literal(checked.lower) -%}
    {%- if checked.upper is not none -%}
        {%- set in_range = in_range ~ ' and event_time < ' ~ late_data_timestamp_literal(checked.upper) -%}
    {%- endif -%}
    {%- set earliest_arrival_query -%}
        select min(ingested_at) from {{ relation }} where {{ in_range }}
    {%- endset -%}
    {%- set earliest_arrival = run_query(earliest_arrival_query).columns[0].values()[0] -%}
    {%- set arrived_from = [earliest_arrival, checked.lower] | min if earliest_arrival is not none else checked.lower -%}
    {{- return('((' ~ in_range ~ ') or ingested_at >= ' ~ late_data_timestamp_literal(arrived_from) ~ ')') -}}
{% endmacro %}


{% macro late_data_checked_event_range(source_tables) %}
    {#- The event-time range {lower, upper} covering the checked partitions of every selected
        incremental model whose meta.late_data_sources names one of `source_tables`, or none when
        one of them is built from scratch or none is selected. -#}
    {%- if not execute or flags.FULL_REFRESH -%}
        {{- return(none) -}}
    {%- endif -%}
    {%- set ranges = [] -%}
    {%- set last_run_times = late_data_last_run_times() -%}
    {%- for node in graph.nodes.values()
        if node.unique_id in selected_resources
        and node.resource_type == 'model'
        and node.config.materialized == 'incremental'
        and (node.config.meta.get('late_data_sources') or []) | select('in', source_tables) | list -%}
        {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
        {%- if relation is none -%}
            {{- return(none) -}}
        {%- endif -%}
        {%- do ranges.append(late_data_checked_range_after(
            relation, last_run_times.get(node.alias), late_data_model_late_window_seconds(node.config)
        )) -%}
    {%- endfor -%}
    {%- if ranges | length == 0 -%}
        {{- return(none) -}}
    {%- endif -%}
    {%- set uppers = ranges | map(attribute='upper') | list -%}
    {{- return({
        'lower': ranges | map(attribute='lower') | min,
        'upper': none if none in uppers else uppers | max,
    }) -}}
{% endmacro %}
