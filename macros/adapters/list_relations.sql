{#- Follows dbt-spark 1.11.0 (python/tests/test_adapter_overrides.py checks the installed code
    against these fingerprints): its macro, and the Python that reads the macro's answer.
    upstream: dbt-spark spark/macros/adapters.sql spark__list_relations_without_caching bc24c71003a2
    upstream: dbt-spark python dbt.adapters.spark.impl:SparkAdapter._get_relation_information 28575522a4ba
    upstream: dbt-spark python dbt.adapters.spark.impl:SparkAdapter._build_spark_relation_list a7601967d4f2 -#}

{% macro spark__list_relations_without_caching(relation) %}
    {#- dbt-spark lists relations with SHOW TABLE EXTENDED, which Iceberg's session catalog
        refuses; its fallback then describes every table one by one (a statement each), and reads
        the Iceberg tables as Hive tables (`Provider: hive`), which breaks the second run of a
        snapshot. With Iceberg, every table of the project's schemas is an Iceberg table (the
        profile's catalog creates them), so the listing is SHOW TABLES and SHOW VIEWS, two
        statements per schema, answered in dbt-spark's SHOW TABLE EXTENDED shape. Other formats
        keep dbt-spark's listing. A missing schema lists as empty. -#}
    {%- if env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') != 'iceberg' -%}
        {{- return(dbt.spark__list_relations_without_caching(relation)) -}}
    {%- endif -%}
    {%- call statement('list_relations_show_tables', fetch_result=True) -%}
        show tables in {{ relation.schema }}
    {%- endcall -%}
    {%- set tables = load_result('list_relations_show_tables').table -%}
    {%- call statement('list_relations_show_views', fetch_result=True) -%}
        show views in {{ relation.schema }}
    {%- endcall -%}
    {%- set views = [] -%}
    {%- for row in load_result('list_relations_show_views').table if not row[2] -%}
        {%- do views.append(row[1]) -%}
    {%- endfor -%}
    {%- set listed = [] -%}
    {%- for row in tables if not row[2] -%}
        {%- set information = 'Type: VIEW' if row[1] in views else 'Type: MANAGED\nProvider: iceberg' -%}
        {%- do listed.append('(' ~ late_data_string_literal(relation.schema) ~ ', ' ~ late_data_string_literal(row[1])
            ~ ', false, ' ~ late_data_string_literal(information) ~ ')') -%}
    {%- endfor -%}
    {%- call statement('list_relations_without_caching', fetch_result=True) -%}
        select * from values
        {{ listed | join(', ') if listed else "('', '', false, '')" }}
        as listed(namespace, table_name, is_temporary, information)
        {{ '' if listed else 'where false' }}
    {%- endcall -%}
    {%- do return(load_result('list_relations_without_caching').table) -%}
{% endmacro %}
