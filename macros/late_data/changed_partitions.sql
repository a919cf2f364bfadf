{% macro late_data_floor_to_partition(moment, partition_size_seconds=none) %}
    {#- The start of the partition holding a datetime. -#}
    {%- set size = partition_size_seconds or var('partition_size_seconds') -%}
    {%- set epoch = modules.datetime.datetime(1970, 1, 1) -%}
    {%- set seconds = ((moment - epoch).total_seconds() | int) // size * size -%}
    {{- return(epoch + modules.datetime.timedelta(seconds=seconds)) -}}
{% endmacro %}


{% macro late_data_checked_range(target, late_window_seconds=none) %}
    {#- The partitions a run compares, as {'lower': datetime, 'upper': datetime or none}.
        Scheduled run: from the partition holding the oldest window that can have changed since
        the previous scheduled run of `target` (or since run_time - late window, if older), on.
        Backfill (var `backfill`): the partitions overlapping [backfill.from, backfill.to).
        `late_window_seconds` defaults to the late window of the model being built. -#}
    {%- set late_window_seconds = late_window_seconds or late_data_model_late_window_seconds() -%}
    {%- set run_time = late_data_run_time_value() -%}
    {%- set last_run_time = late_data_last_run_time(target) -%}
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


{% macro late_data_checked_partitions(target, late_window_seconds=none, partition_column='partition_start') %}
    {#- SQL predicate selecting the partitions of late_data_checked_range(target). -#}
    {%- set checked = late_data_checked_range(target, late_window_seconds) -%}
    {%- set predicate = partition_column ~ ' >= ' ~ late_data_timestamp_literal(checked.lower) -%}
    {%- if checked.upper is not none -%}
        {%- set predicate = predicate ~ ' and ' ~ partition_column ~ ' < ' ~ late_data_timestamp_literal(checked.upper) -%}
    {%- endif -%}
    {{- return(predicate) -}}
{% endmacro %}


{% macro late_data_changed_partitions(fresh, stored, key_columns, checksum_columns, partition_column='partition_start') %}
    {#- A select of the partitions holding at least one window whose fresh checksum differs from
        the stored one, including windows present on one side only (new, or emptied). -#}
    select distinct coalesce(fresh.{{ partition_column }}, stored.{{ partition_column }}) as {{ partition_column }}
    from {{ fresh }} as fresh
    full outer join {{ stored }} as stored
        on
        {%- for key in key_columns %}
            fresh.{{ key }} = stored.{{ key }}{{ ' and' if not loop.last }}
        {%- endfor %}
    where not (
        {%- for column in checksum_columns %}
        fresh.{{ column }} <=> stored.{{ column }}{{ ' and' if not loop.last }}
        {%- endfor %}
    )
{%- endmacro %}


{% macro late_data_delete_emptied_partitions(target, counted_row_relations, partition_column='partition_start') %}
    {#- For a pre-hook. A dynamic insert_overwrite replaces only partitions present in its output,
        so a partition whose every window lost its rows (say a correction moved the only reading
        to another minute) would keep its stale rows. This returns a delete of exactly those
        partitions, or nothing when there are none. -#}
    {%- if not execute or not is_incremental() -%}
        {{- return('') -}}
    {%- endif -%}
    {%- set checked_partitions = late_data_checked_partitions(target, partition_column=partition_column) -%}
    {%- set emptied_partitions_query -%}
        select distinct {{ partition_column }}
        from {{ target }}
        where {{ checked_partitions }}
        except
        select {{ partition_column }}
        from (
            {%- for relation in counted_row_relations %}
            select {{ partition_column }}
            from {{ relation }}
            where {{ checked_partitions }}
                and {{ late_data_counts_as_of(late_data_run_time()) }}
            {{ 'union all' if not loop.last }}
            {%- endfor %}
        )
    {%- endset -%}
    {%- set emptied_partitions = run_query(emptied_partitions_query).columns[0].values() -%}
    {%- if emptied_partitions | length == 0 -%}
        {{- return('') -}}
    {%- endif -%}
    {%- set literals = [] -%}
    {%- for partition in emptied_partitions -%}
        {%- do literals.append(late_data_timestamp_literal(partition)) -%}
    {%- endfor -%}
    {{- return('delete from ' ~ target ~ ' where ' ~ partition_column ~ ' in (' ~ literals | join(', ') ~ ')') -}}
{% endmacro %}


{% macro late_data_windows_to_write(fresh, key_columns, checksum_columns, partition_column='partition_start') %}
    {#- A select of the rows of `fresh` (fresh per-window checksums with the partition column) that
        an insert_overwrite model writes: on the first build or --full-refresh every row; on an
        incremental run the rows of the checked partitions holding at least one window whose
        checksum differs from the one stored in {{ this }}. -#}
    {%- if not is_incremental() %}
    select * from {{ fresh }}
    {%- else %}
    {%- set checked_partitions = late_data_checked_partitions(this, partition_column=partition_column) %}
    with

    fresh_checksums as (

        select * from {{ fresh }}
        where {{ checked_partitions }}

    ),

    stored_checksums as (

        select {{ (key_columns + [partition_column] + checksum_columns) | join(', ') }}
        from {{ this }}
        where {{ checked_partitions }}

    ),

    changed_partitions as (

        {{ late_data_changed_partitions(
            fresh='fresh_checksums',
            stored='stored_checksums',
            key_columns=key_columns,
            checksum_columns=checksum_columns,
            partition_column=partition_column,
        ) }}

    )

    select fresh_checksums.*
    from fresh_checksums
    left semi join changed_partitions
        on fresh_checksums.{{ partition_column }} = changed_partitions.{{ partition_column }}
    {%- endif %}
{%- endmacro %}
