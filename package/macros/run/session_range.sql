{% macro session_range(pipeline, since) %}
    {#- The range a session pipeline's run recomputes, given the run time its stored sessions
        reflect (`since`): {'lower': the partition it reads and compares from, 'upper': none,
        'sessions_from': a moment before which no session can change}. Every version that can
        change a session since then has an event time after since - late window - write delay
        (late_data.windowed), so a session ending (last event + gap) at or before sessions_from =
        that minus the gap is as stored. The versions are read from the first event (burst_start)
        of every stored session ending later: a burst cut by max_session_seconds is cut again from
        its first event. One small query over the stored sessions. -#}
    {%- set cache = late_data.invocation_state().setdefault('session_ranges', {}) -%}
    {%- if pipeline.unique_id in cache -%}{{ return(cache[pipeline.unique_id]) }}{%- endif -%}
    {%- set sessions_from = since - late_data.seconds(pipeline.late_window + pipeline.session_gap + late_data.write_delay_seconds()) -%}
    {%- set lower = sessions_from -%}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- if execute and not late_data.is_explain() and late_data.relation_exists(result) -%}
        {%- set earliest = run_query(
            'select min(burst_start) from ' ~ result ~ ' where window_end > ' ~ late_data.timestamp_literal(sessions_from)
        ).columns[0].values()[0] -%}
        {%- if earliest is not none and earliest < lower -%}{%- set lower = earliest -%}{%- endif -%}
    {%- endif -%}
    {%- set checked = {'lower': late_data.floor_to(lower, pipeline.partition_size), 'upper': none, 'sessions_from': sessions_from} -%}
    {%- do cache.update({pipeline.unique_id: checked}) -%}
    {{- return(checked) -}}
{% endmacro %}


{% macro range_predicate(checked, partition_column='partition_start') %}
    {#- SQL predicate selecting the partitions of a checked range; `partition_column` may be any
        expression giving a row's partition. -#}
    {%- set predicate = partition_column ~ ' >= ' ~ late_data.timestamp_literal(checked.lower) -%}
    {%- if checked.upper is not none -%}
        {%- set predicate = predicate ~ ' and ' ~ partition_column ~ ' < ' ~ late_data.timestamp_literal(checked.upper) -%}
    {%- endif -%}
    {{- return(predicate) -}}
{% endmacro %}
