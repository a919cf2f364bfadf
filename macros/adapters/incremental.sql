{#- Follows dbt-spark 1.11.0 (python/tests/test_adapter_overrides.py checks the installed macros
    against these fingerprints):
    upstream: dbt-spark spark/macros/materializations/incremental/incremental.sql materialization:incremental:spark 1d0a72d537ab -#}

{% materialization incremental, adapter='spark', supported_languages=['sql', 'python'] -%}
    {#- Late-data models (those declaring meta.late_data_role) are written by
        late_data_write_model: their query runs once, and the table is written only when there is
        something to write, in as few statements as the write needs. Every other incremental model
        gets dbt-spark's materialization, unchanged. -#}
    {%- if not late_data_role() -%}
        {{- return(dbt.materialization_incremental_spark()) -}}
    {%- endif -%}
    {{- return(late_data_write_model(sql)) -}}
{%- endmaterialization %}


{% macro late_data_role() %}
    {#- The meta.late_data_role of the model being built: versions, windows, too_late_rows or none. -#}
    {{- return((config.get('meta') or {}).get('late_data_role')) -}}
{% endmacro %}
