{#- Follows dbt-spark 1.11.0 (python/tests/test_adapter_overrides.py checks the installed code
    against these fingerprints): its macro, and the Python that reads the macro's answer.
    upstream: dbt-spark spark/macros/adapters.sql spark__list_relations_without_caching bc24c71003a2
    upstream: dbt-spark python dbt.adapters.spark.impl:SparkAdapter._get_relation_information 28575522a4ba
    upstream: dbt-spark python dbt.adapters.spark.impl:SparkAdapter._build_spark_relation_list a7601967d4f2
    upstream: dbt-spark spark/macros/adapters.sql spark__list_schemas 2540eda6fcee
    upstream: dbt-adapters python dbt.adapters.sql.impl:SQLAdapter.list_schemas 32c5f699916a
    upstream: dbt-spark python dbt.adapters.spark.impl:SparkAdapter.check_schema_exists a6b9544e2098 -#}

{% macro spark__list_relations_without_caching(relation) %}
    {#- The relations of a schema, as rows (schema, name, is_temporary, information) in SHOW TABLE
        EXTENDED's shape, which is all dbt-spark's Python reads of the answer. Listed once per
        process (late_data_process_state): only this process's own runs create or drop relations
        there, and the audit hook forgets the listing after any invocation that did.
        dbt-spark lists with SHOW TABLE EXTENDED, which Iceberg's session catalog refuses; its
        fallback then describes every table one by one (a statement each) and reads the Iceberg
        tables as Hive tables (`Provider: hive`), which breaks the second run of a snapshot. With
        Iceberg every table of the project's schemas is an Iceberg table (the profile's catalog
        creates them), so the listing is SHOW TABLES and SHOW VIEWS. Other formats keep dbt-spark's
        listing. A missing schema lists as empty. -#}
    {%- set listed = late_data_process_state().setdefault('relations', {}) -%}
    {%- if relation.schema in listed -%}
        {{- return(listed[relation.schema]) -}}
    {%- endif -%}
    {%- set rows = [] -%}
    {%- if env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') != 'iceberg' -%}
        {%- for row in dbt.spark__list_relations_without_caching(relation) -%}
            {%- do rows.append((row[0], row[1], row[2], row[3])) -%}
        {%- endfor -%}
    {%- else -%}
        {%- set tables = run_query('show tables in ' ~ relation.schema) -%}
        {%- set views = [] -%}
        {%- for row in run_query('show views in ' ~ relation.schema) if not row[2] -%}
            {%- do views.append(row[1]) -%}
        {%- endfor -%}
        {%- for row in tables if not row[2] -%}
            {%- do rows.append((relation.schema, row[1], false, 'Type: VIEW' if row[1] in views else 'Type: MANAGED\nProvider: iceberg')) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- do listed.update({relation.schema: rows}) -%}
    {{- return(rows) -}}
{% endmacro %}


{% macro spark__list_schemas(database) %}
    {#- The schemas, as rows whose first value is the name (all dbt's Python reads of the answer):
        SHOW DATABASES once per process (late_data_process_state). The audit hook adds the schemas
        an invocation built in, which dbt created before its first node. -#}
    {%- set state = late_data_process_state() -%}
    {%- if 'schemas' not in state -%}
        {%- set schemas = [] -%}
        {%- for row in run_query('show databases') -%}
            {%- do schemas.append((row[0],)) -%}
        {%- endfor -%}
        {%- do state.update({'schemas': schemas}) -%}
    {%- endif -%}
    {{- return(state['schemas']) -}}
{% endmacro %}
