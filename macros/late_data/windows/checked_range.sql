{% macro late_data_checked_range_after(target, last_run_time, late_window_seconds=none) %}
    {#- The partitions a recomputation of `target` compares, given the run time of its last
        scheduled run, as {'lower': datetime, 'upper': datetime or none}. Scheduled (reconcile):
        from the partition holding the oldest window that can have changed since that run (or since
        run_time minus the late window, if older), on. Backfill (var `backfill`): the partitions
        overlapping [backfill.from, backfill.to). -#}
    {%- set late_window_seconds = late_window_seconds or late_data_model_late_window_seconds() -%}
    {%- set run_time = late_data_run_time_value() -%}
    {%- set since = [run_time, last_run_time] | min if last_run_time is not none else run_time -%}
    {%- set scheduled_from = late_data_floor_to_partition(since - modules.datetime.timedelta(
        seconds=late_window_seconds + late_data_window_size_seconds())) -%}
    {%- set backfill = late_data_backfill() -%}
    {%- if backfill is none -%}
        {{- return({'lower': scheduled_from, 'upper': none}) -}}
    {%- endif -%}
    {#- History versions are stamped with the run time: a backfill stamped at or before the last
        scheduled run would collide with, or predate, versions that run recorded. -#}
    {%- if last_run_time is not none and run_time <= last_run_time -%}
        {%- do exceptions.raise_compiler_error(
            "a backfill's run_time must be after the last scheduled run of " ~ target.identifier ~ " ("
            ~ last_run_time ~ "); got run_time=" ~ run_time
        ) -%}
    {%- endif -%}
    {%- set upper = late_data_floor_to_partition(backfill.to - modules.datetime.timedelta(microseconds=1)) -%}
    {%- set upper = upper + modules.datetime.timedelta(seconds=late_data_partition_size_seconds()) -%}
    {#- Scheduled runs change the partitions from scheduled_from on, relative to what the last run
        stored; a backfill rewriting them would be counted twice or undone. -#}
    {%- if upper > scheduled_from -%}
        {%- do exceptions.raise_compiler_error(
            "a backfill must end by " ~ scheduled_from ~ ": later partitions are still kept by scheduled runs"
            ~ " (use late-data reconcile for them, or run one at a later run time first); got to=" ~ backfill.to
        ) -%}
    {%- endif -%}
    {{- return({'lower': late_data_floor_to_partition(backfill['from']), 'upper': upper}) -}}
{% endmacro %}


{% macro late_data_range_predicate(checked, partition_column='partition_start') %}
    {#- SQL predicate selecting the partitions of a checked range; `partition_column` may be any
        expression giving a row's partition. -#}
    {%- set predicate = partition_column ~ ' >= ' ~ late_data_timestamp_literal(checked.lower) -%}
    {%- if checked.upper is not none -%}
        {%- set predicate = predicate ~ ' and ' ~ partition_column ~ ' < ' ~ late_data_timestamp_literal(checked.upper) -%}
    {%- endif -%}
    {{- return(predicate) -}}
{% endmacro %}
