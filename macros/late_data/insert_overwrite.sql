{% macro get_insert_overwrite_sql(source_relation, target_relation, existing_relation) %}
    {#- dbt-spark's insert_overwrite, extended for late-data result models (those declaring
        meta.late_data_sources). Their query (late_data_windows_to_write) yields the windows of the
        changed partitions plus marker rows, window_start null, for changed partitions left
        without any window. The query runs once, into a scratch directory (Spark 3.5 cannot reuse
        a cached plan that contains CTEs, and dbt's SQL is made of them); the emptied partitions
        are deleted, then the windows overwrite their partitions. Other models get dbt-spark's
        statement unchanged. -#}
    {%- if not (config.get('meta') or {}).get('late_data_sources') -%}
        {{- return(dbt.get_insert_overwrite_sql(source_relation, target_relation, existing_relation)) -}}
    {%- endif -%}
    {%- set partition_column = config.get('partition_by')[0] -%}
    {%- set scratch_path = late_data_scratch_path(target_relation) -%}
    {%- set written = source_relation.incorporate(path={'identifier': source_relation.identifier ~ '_written'}) -%}
    {%- set windows = source_relation.incorporate(path={'identifier': source_relation.identifier ~ '_windows'}) -%}
    {%- do adapter.execute("insert overwrite directory '" ~ scratch_path ~ "' using parquet select * from " ~ source_relation) -%}
    {%- do adapter.execute(
        'create or replace temporary view ' ~ written ~ " using parquet options (path '" ~ scratch_path ~ "')"
    ) -%}
    {%- set emptied_query -%}
        select distinct {{ partition_column }} from {{ written }} where window_start is null
    {%- endset -%}
    {%- set emptied_partitions = run_query(emptied_query).columns[0].values() -%}
    {%- if emptied_partitions | length > 0 -%}
        {%- set literals = [] -%}
        {%- for partition in emptied_partitions -%}
            {%- do literals.append(late_data_timestamp_literal(partition)) -%}
        {%- endfor -%}
        {%- do adapter.execute(
            'delete from ' ~ target_relation ~ ' where ' ~ partition_column ~ ' in (' ~ literals | join(', ') ~ ')'
        ) -%}
    {%- endif -%}
    {%- do adapter.execute(
        'create or replace temporary view ' ~ windows ~ ' as select * from ' ~ written ~ ' where window_start is not null'
    ) -%}
    {{- return(dbt.get_insert_overwrite_sql(windows, target_relation, existing_relation)) -}}
{% endmacro %}


{% macro late_data_scratch_path(relation) %}
    {#- Where a late-data model's rows to write are staged for one run: under LATE_DATA_SCRATCH,
        else LATE_DATA_HOME/scratch (the profile keeps the warehouse there too). On a cluster it
        must be a path every executor can reach, like the warehouse. -#}
    {%- set scratch_dir = env_var('LATE_DATA_SCRATCH', env_var('LATE_DATA_HOME', '.late_data') ~ '/scratch') -%}
    {{- return(scratch_dir ~ '/' ~ relation.schema ~ '/' ~ relation.identifier) -}}
{% endmacro %}
