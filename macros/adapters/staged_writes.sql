{#- Follows dbt-spark 1.11.0 (python/tests/test_adapter_overrides.py checks the installed macros
    against these fingerprints):
    upstream: dbt-spark spark/macros/materializations/incremental/incremental.sql materialization:incremental:spark 1d0a72d537ab
    upstream: dbt-spark spark/macros/materializations/incremental/strategies.sql get_insert_overwrite_sql 15fd676c9220
    upstream: dbt-spark spark/macros/materializations/incremental/strategies.sql get_insert_into_sql db478c8f676f
    upstream: dbt-spark spark/macros/materializations/incremental/strategies.sql spark__get_merge_sql fba0e261df9d

    Writes of late-data models (those declaring meta.late_data_role). Each stages its query's rows
    once in a scratch directory (Spark 3.5 cannot reuse a cached plan over these tables, and the
    statements below read the rows several times), looks at what it staged, and writes only if
    there is something to write, so a run that finds nothing new commits nothing. Other models get
    dbt-spark's statements unchanged. -#}

{% macro get_insert_overwrite_sql(source_relation, target_relation, existing_relation) %}
    {#- Late-data result models (role `windows`): the staged rows are every window of the rewritten
        partitions plus marker rows for vanished windows (late_data_windows_to_write). Partitions
        left without any window are deleted (a dynamic overwrite would leave them untouched), then
        the windows overwrite their partitions. What was written is remembered for the history
        snapshot and the audit. -#}
    {%- if late_data_role() != 'windows' -%}
        {{- return(dbt.get_insert_overwrite_sql(source_relation, target_relation, existing_relation)) -}}
    {%- endif -%}
    {%- set staged = late_data_stage(source_relation, target_relation) -%}
    {%- set written = late_data_written(target_relation) or {} -%}
    {%- set stats_query -%}
        select
            partition_start,
            series_bucket,
            count_if(window_change != 'vanished') as kept_windows,
            count_if(window_change != 'unchanged') as changed_windows,
            count_if(window_repaired) as repaired_windows,
            to_json(collect_list(if(window_change = 'vanished', {{ late_data_window_key(written.key_columns) }}, null)))
                as vanished_windows
        from {{ staged }}
        group by partition_start, series_bucket
    {%- endset -%}
    {%- set partitions = run_query(stats_query).rows -%}
    {%- set rewritten, emptied, vanished = [], [], [] -%}
    {%- for partition in partitions -%}
        {%- do rewritten.append([partition[0], partition[1] | int]) -%}
        {%- if partition[2] == 0 -%}
            {%- do emptied.append('(partition_start = ' ~ late_data_timestamp_literal(partition[0]) ~ ' and series_bucket = ' ~ partition[1] ~ ')') -%}
        {%- endif -%}
        {%- do vanished.extend(fromjson(partition[5])) -%}
    {%- endfor -%}
    {%- set kept_windows = partitions | sum(attribute=2) | int -%}
    {%- do written.update({
        'partitions': rewritten,
        'windows_changed': partitions | sum(attribute=3) | int,
        'windows_repaired': partitions | sum(attribute=4) | int,
        'vanished': vanished,
        'rows_written': kept_windows,
    }) -%}
    {%- do late_data_record_write(target_relation, written) -%}
    {%- if emptied -%}
        {%- do adapter.execute('delete from ' ~ target_relation ~ ' where ' ~ emptied | join(' or ')) -%}
    {%- endif -%}
    {%- if kept_windows == 0 -%}
        {{- return('select 1 as nothing_to_overwrite') -}}
    {%- endif -%}
    {%- set windows = source_relation.incorporate(path={'identifier': source_relation.identifier ~ '_windows'}) -%}
    {%- do adapter.execute(
        'create or replace temporary view ' ~ windows ~ ' as select * from ' ~ staged ~ " where window_change != 'vanished'"
    ) -%}
    {{- return(dbt.get_insert_overwrite_sql(windows, target_relation, existing_relation)) -}}
{% endmacro %}


{% macro get_insert_into_sql(source_relation, target_relation) %}
    {#- Late-data versions tables (role `versions`, incremental append): the new row versions are
        appended, if there are any; how many, and how many of them are quarantined, go to the audit. -#}
    {%- if late_data_role() != 'versions' -%}
        {{- return(dbt.get_insert_into_sql(source_relation, target_relation)) -}}
    {%- endif -%}
    {%- set staged = late_data_stage(source_relation, target_relation) -%}
    {%- set counts = run_query('select count(*), count_if(quarantine_reason is not null) from ' ~ staged).rows[0] -%}
    {%- set rows = counts[0] | int -%}
    {%- do late_data_record_write(target_relation, {'mode': 'append', 'rows_written': rows, 'rows_quarantined': counts[1] | int}) -%}
    {%- if rows == 0 -%}
        {{- return('select 1 as nothing_to_append') -}}
    {%- endif -%}
    {{- return(dbt.get_insert_into_sql(staged, target_relation)) -}}
{% endmacro %}


{% macro spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) %}
    {#- Late-data listings (role `too_late_rows`, incremental merge on a version id): the listed
        versions are merged, if there are any. -#}
    {%- if late_data_role() != 'too_late_rows' -%}
        {{- return(dbt.spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates)) -}}
    {%- endif -%}
    {%- set staged = late_data_stage(source, target) -%}
    {%- set rows = run_query('select count(*) from ' ~ staged).columns[0].values()[0] | int -%}
    {%- do late_data_record_write(target, {'mode': 'merge', 'rows_written': rows}) -%}
    {%- if rows == 0 -%}
        {{- return('select 1 as nothing_to_merge') -}}
    {%- endif -%}
    {{- return(dbt.spark__get_merge_sql(target, staged, unique_key, dest_columns, incremental_predicates)) -}}
{% endmacro %}


{% macro late_data_role() %}
    {#- The meta.late_data_role of the model being built: versions, windows, too_late_rows or none. -#}
    {{- return((config.get('meta') or {}).get('late_data_role')) -}}
{% endmacro %}


{% macro late_data_stage(source_relation, target_relation) %}
    {#- Runs the query behind `source_relation` once into target_relation's scratch directory and
        returns a temporary view over what it wrote. -#}
    {%- set scratch_path = late_data_scratch_path(target_relation) -%}
    {%- set staged = source_relation.incorporate(path={'identifier': source_relation.identifier ~ '_staged'}) -%}
    {%- do adapter.execute('insert overwrite directory ' ~ late_data_string_literal(scratch_path) ~ ' using parquet select * from ' ~ source_relation) -%}
    {%- do adapter.execute('create or replace temporary view ' ~ staged ~ ' using parquet options (path ' ~ late_data_string_literal(scratch_path) ~ ')') -%}
    {{- return(staged) -}}
{% endmacro %}


{% macro late_data_scratch_path(relation) %}
    {#- Where a late-data model's rows to write are staged for one run: under LATE_DATA_SCRATCH,
        else LATE_DATA_HOME/scratch (the profile keeps the warehouse there too). On a cluster it
        must be a path the Spark driver and every executor reach, like the warehouse. -#}
    {%- set scratch_dir = env_var('LATE_DATA_SCRATCH', env_var('LATE_DATA_HOME', '.late_data') ~ '/scratch') -%}
    {{- return(scratch_dir ~ '/' ~ relation.schema ~ '/' ~ relation.identifier) -}}
{% endmacro %}
