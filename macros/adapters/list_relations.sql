{% macro spark__list_relations_without_caching(relation) %}
    {#- dbt-spark lists relations with SHOW TABLE EXTENDED, which Iceberg's session catalog
        refuses; its fallback then describes every table one by one (a statement each), and reads
        the Iceberg tables as Hive tables (`Provider: hive`), which breaks the second run of a
        snapshot. With Iceberg, every table of the project's schemas is an Iceberg table (the
        profile's catalog creates them), so the listing is SHOW TABLES and SHOW VIEWS, two
        statements per schema, answered in dbt-spark's SHOW TABLE EXTENDED shape. Other formats
        keep dbt-spark's listing. A missing schema lists as empty. -#}
    {%- set file_format = env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') -%}
    {%- if file_format != 'iceberg' -%}
        {%- call statement('list_relations_without_caching', fetch_result=True) -%}
            show table extended in {{ relation.schema }} like '*'
        {%- endcall -%}
        {%- do return(load_result('list_relations_without_caching').table) -%}
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
        {%- do listed.append("('" ~ relation.schema ~ "', '" ~ row[1] ~ "', false, '" ~ information ~ "')") -%}
    {%- endfor -%}
    {%- call statement('list_relations_without_caching', fetch_result=True) -%}
        select * from values
        {{ listed | join(', ') if listed else "('', '', false, '')" }}
        as listed(namespace, table_name, is_temporary, information)
        {{ '' if listed else 'where false' }}
    {%- endcall -%}
    {%- do return(load_result('list_relations_without_caching').table) -%}
{% endmacro %}
