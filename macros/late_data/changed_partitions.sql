{% macro late_data_floor_to_partition(moment, partition_size_seconds=none) %}
    {#- The start of the partition holding a datetime. -#}
    {%- set size = partition_size_seconds or var('partition_size_seconds') -%}
    {%- set epoch = modules.datetime.datetime(1970, 1, 1) -%}
    {%- set seconds = ((moment - epoch).total_seconds() | int) // size * size -%}
    {{- return(epoch + modules.datetime.timedelta(seconds=seconds)) -}}
{% endmacro %}


{% macro late_data_checked_range(target, late_window_seconds=none) %}
    {#- The partitions a run of `target` compares, as {'lower': datetime, 'upper': datetime or
        none}: late_data_checked_range_after with the last run of `target` from the audit.
        `late_window_seconds` defaults to the late window of the model being built. -#}
    {{- return(late_data_checked_range_after(target, late_data_last_run_time(target), late_window_seconds)) -}}
{% endmacro %}


{% macro late_data_checked_range_after(target, last_run_time, late_window_seconds=none) %}
    {#- The partitions a run of `target` compares, given the run time of its last scheduled run.
        Scheduled run: from the partition holding the oldest window that can have changed since
        that run (or since run_time - late window, if older), on. Backfill (var `backfill`): the
        partitions overlapping [backfill.from, backfill.to). -#}
    {%- set late_window_seconds = late_window_seconds or late_data_model_late_window_seconds() -%}
    {%- set run_time = late_data_run_time_value() -%}
    {%- set since = [run_time, last_run_time] | min if last_run_time is not none else run_time -%}
    {%- set scheduled_from = late_data_floor_to_partition(since - modules.datetime.timedelta(
        seconds=late_window_seconds + var('window_size_seconds'))) -%}
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
    {%- set upper = upper + modules.datetime.timedelta(seconds=var('partition_size_seconds')) -%}
    {#- Scheduled runs recompute whole partitions from scheduled_from on under the normal rule; a
        backfill that counts too-late rows there would be undone by the next scheduled run. -#}
    {%- if backfill.include_too_late and upper > scheduled_from -%}
        {%- do exceptions.raise_compiler_error(
            "a backfill with include_too_late must end by " ~ scheduled_from ~ ": later partitions are"
            ~ " still recomputed by scheduled runs (run one at a later run time first); got to=" ~ backfill.to
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


{% macro late_data_checked_partitions(target, late_window_seconds=none, partition_column='partition_start') %}
    {#- SQL predicate selecting the partitions of late_data_checked_range(target). -#}
    {{- return(late_data_range_predicate(late_data_checked_range(target, late_window_seconds), partition_column)) -}}
{% endmacro %}


{% macro late_data_windows_to_write(fresh, key_columns, checksum_columns, partition_column='partition_start') %}
    {#- A select of the rows an insert_overwrite result model writes, from `fresh` (fresh checksums,
        one row per window) plus the partition column: on the first build or --full-refresh every
        row; on an incremental run, in one pass over fresh and stored checksums, the rows of the
        checked partitions that hold at least one window whose checksum differs from the one
        stored in {{ this }} (windows present on one side only included). A changed partition
        left without any window (a correction moved its only reading away) is returned as marker
        rows whose window_start is null: late-data's get_insert_overwrite_sql deletes those
        partitions, which a dynamic overwrite alone would leave untouched. -#}
    {%- set partition_of_window = late_data_time_bucket('fresh_checksums.window_start', var('partition_size_seconds')) -%}
    {%- if not is_incremental() %}
    select
        fresh_checksums.*,
        {{ partition_of_window }} as {{ partition_column }}
    from {{ fresh }} as fresh_checksums
    {%- else %}
    {%- set checked = late_data_checked_range(this) %}
    with

    fresh_checksums as (

        select * from {{ fresh }} as fresh_checksums
        where {{ late_data_range_predicate(checked, partition_of_window) }}

    ),

    stored_checksums as (

        select {{ (key_columns + [partition_column] + checksum_columns) | join(', ') }}
        from {{ this }}
        where {{ late_data_range_predicate(checked, partition_column) }}

    ),

    compared_windows as (

        select
            fresh_checksums.*,
            coalesce({{ partition_of_window }}, stored_checksums.{{ partition_column }}) as {{ partition_column }},
            not (
                {%- for column in checksum_columns %}
                fresh_checksums.{{ column }} <=> stored_checksums.{{ column }}{{ ' and' if not loop.last }}
                {%- endfor %}
            ) as is_window_changed
        from fresh_checksums
        full outer join stored_checksums
            on
            {%- for key in key_columns %}
                fresh_checksums.{{ key }} = stored_checksums.{{ key }}{{ ' and' if not loop.last }}
            {%- endfor %}

    ),

    compared_partitions as (

        select
            *,
            max(is_window_changed) over checked_partition as is_partition_changed,
            count(window_start) over checked_partition as fresh_windows_in_partition
        from compared_windows
        window checked_partition as (partition by {{ partition_column }})

    )

    select *
    from compared_partitions
    where is_partition_changed and (window_start is not null or fresh_windows_in_partition = 0)
    {%- endif %}
{%- endmacro %}
