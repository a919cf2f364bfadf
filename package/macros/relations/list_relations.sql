{#- dbt-spark's relation listing and schema list, made right for Iceberg's session catalog and
    cheap for a warm process. They apply to every model of a project whose `dispatch` config lists
    this package for the `dbt` namespace (docs/your-own-pipeline.md); without it, dbt-spark's
    own listing runs. Follows dbt-spark 1.11.0 (python/tests/test_adapter_overrides.py checks the
    installed code against these fingerprints):
    upstream: dbt-spark spark/macros/adapters.sql spark__list_relations_without_caching bc24c71003a2
    upstream: dbt-spark python dbt.adapters.spark.impl:SparkAdapter._build_spark_relation_list a7601967d4f2
    upstream: dbt-spark spark/macros/adapters.sql spark__list_schemas 2540eda6fcee -#}

{% macro spark__list_relations_without_caching(relation) %}
    {#- dbt-spark's listing (SHOW TABLE EXTENDED, one statement per schema), each table labelled by
        its real provider: Iceberg's session catalog reports its tables as `Provider: hive` with
        `table_type=ICEBERG` among their properties (dbt-spark would take them for Hive tables,
        and its snapshot refuses those), so they are labelled `Provider: iceberg`; every other
        table keeps what Spark says. A warm process (late-data schedule) answers the first
        listing of a schema in an invocation, which fills dbt's relation cache before any node
        runs, with the listing of its previous invocation (dbt's cache then follows every change
        dbt makes in the invocation itself); every later listing in the invocation lists again,
        and so does the first one after an invocation that created or dropped a relation
        (late_data.on_run_end). A schema that does not exist lists as empty (dbt-spark's Python). -#}
    {%- set remembered = late_data.process_state().setdefault('relations', {}) -%}
    {%- set listed = late_data.invocation_state().setdefault('listed', []) -%}
    {%- if relation.schema in remembered and relation.schema not in listed -%}
        {%- do listed.append(relation.schema) -%}
        {{- return(remembered[relation.schema]) -}}
    {%- endif -%}
    {%- do listed.append(relation.schema) -%}
    {%- set rows = [] -%}
    {%- for row in dbt.spark__list_relations_without_caching(relation) -%}
        {%- set information = row[3] -%}
        {%- if 'Provider: hive' in information and modules.re.search('table_type=ICEBERG[,\\]]', information) -%}
            {%- set information = information.replace('Provider: hive', 'Provider: iceberg') -%}
        {%- endif -%}
        {%- do rows.append((row[0], row[1], row[2], information)) -%}
    {%- endfor -%}
    {%- do remembered.update({relation.schema: rows}) -%}
    {{- return(rows) -}}
{% endmacro %}


{% macro spark__list_schemas(database) %}
    {#- The schemas, as rows whose first value is the name (all dbt's Python reads of the answer):
        SHOW DATABASES, reused once per invocation by a warm process as the listing above is. -#}
    {%- set state = late_data.process_state() -%}
    {%- set invocation = late_data.invocation_state() -%}
    {%- if 'schemas' not in state or invocation.get('schemas_listed') -%}
        {%- set schemas = [] -%}
        {%- for row in run_query('show databases') -%}
            {%- do schemas.append((row[0],)) -%}
        {%- endfor -%}
        {%- do state.update({'schemas': schemas}) -%}
    {%- endif -%}
    {%- do invocation.update({'schemas_listed': true}) -%}
    {{- return(state['schemas']) -}}
{% endmacro %}
