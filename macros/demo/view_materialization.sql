{#- The late_data package's view materialization (a view dropped before it is created again: with
    Iceberg's session catalog, CREATE OR REPLACE VIEW keeps the old SQL text), for this project's
    views: dbt lets no package override a built-in materialization, so the project wraps it
    (docs/your-own-pipeline.md).
    upstream: dbt-spark spark/macros/materializations/view.sql materialization:view:spark cad1f7004bda -#}
{% materialization view, adapter='spark' %}
    {{- return(late_data.materialization_view_spark()) -}}
{% endmaterialization %}
