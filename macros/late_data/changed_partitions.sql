{% macro late_data_checked_from(target, late_window_seconds=none, window_size_seconds=none, partition_size_seconds=none) %}
    {#- The oldest partition a run must compare: it holds the oldest window that can have changed
        since the previous successful run of `target` (or since run_time - late window, if
        that is older). Windows before it were final when they were last computed. -#}
    {%- set late_window_seconds = late_window_seconds or var('late_window_seconds') -%}
    {%- set window_size_seconds = window_size_seconds or var('window_size_seconds') -%}
    {%- set partition_size_seconds = partition_size_seconds or var('partition_size_seconds') -%}
    {%- set run_time = late_data_run_time_value() -%}
    {%- set last_run_time = late_data_last_run_time(target) -%}
    {%- set since = [run_time, last_run_time] | min if last_run_time is not none else run_time -%}
    {%- set oldest_changeable = since - modules.datetime.timedelta(seconds=late_window_seconds + window_size_seconds) -%}
    {%- set epoch = modules.datetime.datetime(1970, 1, 1) -%}
    {%- set epoch_seconds = (oldest_changeable - epoch).total_seconds() | int -%}
    {%- set partition_epoch_seconds = (epoch_seconds // partition_size_seconds) * partition_size_seconds -%}
    {%- set checked_from = epoch + modules.datetime.timedelta(seconds=partition_epoch_seconds) -%}
    {{- return(late_data_timestamp_literal(checked_from)) -}}
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
    {%- set checked_from = late_data_checked_from(target) -%}
    {%- set emptied_partitions_query -%}
        select distinct {{ partition_column }}
        from {{ target }}
        where {{ partition_column }} >= {{ checked_from }}
        except
        select {{ partition_column }}
        from (
            {%- for relation in counted_row_relations %}
            select {{ partition_column }}
            from {{ relation }}
            where {{ partition_column }} >= {{ checked_from }}
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
