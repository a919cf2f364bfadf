{#- Follows dbt-spark 1.11.0 and dbt-adapters 1.24 (python/tests/test_adapter_overrides.py checks
    the installed macros against these fingerprints):
    upstream: dbt-spark spark/macros/materializations/view.sql materialization:view:spark cad1f7004bda
    upstream: dbt-adapters global_project/macros/relations/view/replace.sql create_or_replace_view 934abf4b4759 -#}

{% materialization view, adapter='spark' -%}
    {#- dbt-spark's view materialization with an existing view dropped first. With Iceberg's
        SparkSessionCatalog over a Hive metastore, CREATE OR REPLACE VIEW keeps the old SQL text of
        an existing view (apache/iceberg#15490): a changed staging model, macro or var would
        silently keep serving the old query, and a pipeline downstream of it would read it while
        its definition says otherwise. A package cannot override dbt's view materialization: the
        project that installs this one wraps it, returning late_data.materialization_view_spark()
        from a view materialization of its own (docs/your-own-pipeline.md). Not atomic: a reader
        may miss the view for the instant between the statements. The drop lives here, in the
        materialization, so rendering the view's DDL (spark__create_view_as, dbt-spark's own) has
        no side effect. -#}
    {%- set existing = load_cached_relation(this) -%}
    {%- if existing is not none and existing.is_view -%}
        {%- do adapter.drop_relation(existing) -%}
    {%- endif -%}
    {{- return(create_or_replace_view()) -}}
{%- endmaterialization %}
