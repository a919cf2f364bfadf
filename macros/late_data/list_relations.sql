{% macro spark__list_relations_without_caching(relation) %}
    {#- Iceberg tables in the session catalog report `Provider: hive` under `show table extended`,
        which dbt-spark reads as "not iceberg" (snapshots then fail on their second run). Raising
        the message dbt-spark already handles sends it down its own `show tables` + `describe
        extended` path, which reports the provider correctly. A missing schema lists as empty. -#}
    {%- call statement('list_relations_show_tables', fetch_result=True) -%}
        show tables in {{ relation.schema }}
    {%- endcall -%}
    {%- if env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') == 'iceberg' -%}
        {%- do exceptions.raise_compiler_error('SHOW TABLE EXTENDED is not supported for v2 tables') -%}
    {%- endif -%}
    {%- call statement('list_relations_without_caching', fetch_result=True) -%}
        show table extended in {{ relation.schema }} like '*'
    {%- endcall -%}
    {%- do return(load_result('list_relations_without_caching').table) -%}
{% endmacro %}
