{#- Follows dbt-spark 1.11.0 and dbt-adapters 1.24 (python/tests/test_adapter_overrides.py checks
    the installed macros against these fingerprints):
    upstream: dbt-spark spark/macros/materializations/snapshot.sql materialization:snapshot:spark 11b4a58dc34f
    upstream: dbt-adapters global_project/macros/materializations/snapshots/helpers.sql default__build_snapshot_table cdbebee0341b
    upstream: dbt-adapters global_project/macros/adapters/timestamps.sql default__snapshot_get_time 78ba7a3be809

    History snapshots of late-data result models (tag `late_data_history`): once the table exists,
    late_data_record_history records each run's changes, stamping every version with the run time
    that published it (the result row's computed_at), so history lives on the runs' time axis.
    Their first build, and every other snapshot, get dbt-spark's materialization and dbt's macros. -#}

{% materialization snapshot, adapter='spark' %}
    {%- if late_data_is_history() and late_data_relation_exists(this) -%}
        {{- return(late_data_record_history(sql)) -}}
    {%- endif -%}
    {%- do late_data_forget_relation(this) -%}
    {%- set built = dbt.materialization_snapshot_spark() -%}
    {%- if late_data_is_history() -%}
        {%- do late_data_record_rebuild(this, 'history') -%}
    {%- endif -%}
    {{- return(built) -}}
{% endmaterialization %}


{% macro spark__snapshot_get_time() %}
    {#- Late-data histories stamp deletions and dbt_updated_at with the run time, not the wall clock. -#}
    {%- if late_data_is_history() -%}
        {{- late_data_run_time() -}}
    {%- else -%}
        {{- dbt.default__snapshot_get_time() -}}
    {%- endif -%}
{% endmacro %}


{% macro spark__build_snapshot_table(strategy, sql) %}
    {#- A late-data history's first build: every window, valid from the run that published it. -#}
    {%- if not late_data_is_history() -%}
        {{- return(dbt.default__build_snapshot_table(strategy, sql)) -}}
    {%- endif %}
    select
        *,
        {{ late_data_version_id() }} as dbt_scd_id,
        computed_at as dbt_updated_at,
        computed_at as dbt_valid_from,
        cast(null as timestamp) as dbt_valid_to,
        true as is_current_version
    from (
        {{ sql }}
    ) as published_windows
{%- endmacro %}


{% macro late_data_is_history() %}
    {#- Whether the node being built is a late-data history snapshot (tag `late_data_history`),
        checked to be configured as these overrides need (late_data_check_history_config). -#}
    {%- if model is not defined or model.resource_type != 'snapshot' or 'late_data_history' not in model.tags -%}
        {{- return(false) -}}
    {%- endif -%}
    {%- set columns_renamed = (config.get('snapshot_table_column_names') or get_snapshot_table_column_names())
        != get_snapshot_table_column_names() -%}
    {%- do late_data_check_history_config(model.name, config.get, columns_renamed) -%}
    {{- return(true) -}}
{% endmacro %}


{% macro late_data_check_history_config(name, setting, columns_renamed) %}
    {#- A late-data history configured with a snapshot setting these overrides do not implement is
        refused, naming the setting, rather than have it silently ignored. `setting(name)` reads
        the snapshot's config (config.get while it is built; node.config.get from on-run-start);
        `columns_renamed`: snapshot_meta_column_names renames a column. -#}
    {%- set expected = {'strategy': 'check', 'unique_key': 'window_key', 'hard_deletes': 'invalidate'} -%}
    {%- for key, value in expected.items() if setting(key) != value -%}
        {%- do exceptions.raise_compiler_error(
            "late-data history " ~ name ~ ": snapshot setting " ~ key ~ "=" ~ setting(key)
            ~ " is not supported; it must be " ~ value
        ) -%}
    {%- endfor -%}
    {%- for key in ['dbt_valid_to_current', 'updated_at', 'snapshot_meta_column_names']
        if (columns_renamed if key == 'snapshot_meta_column_names' else setting(key)) -%}
        {%- do exceptions.raise_compiler_error(
            "late-data history " ~ name ~ ": snapshot setting " ~ key ~ " is not supported: open versions"
            ~ " have dbt_valid_to null and is_current_version true, stamped with the run times"
        ) -%}
    {%- endfor -%}
{% endmacro %}
