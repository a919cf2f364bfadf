{#- The late_data package's snapshot materialization for this project's late-data histories
    (every other snapshot still gets dbt-spark's own), and its view materialization (a view dropped
    before it is created again: with Iceberg's session catalog, CREATE OR REPLACE VIEW keeps the
    old SQL text): dbt lets no package override a built-in materialization, so the project wraps
    them. -#}
{% materialization snapshot, adapter='spark' %}
    {{- return(late_data.materialization_snapshot_spark()) -}}
{% endmaterialization %}

{% materialization view, adapter='spark' %}
    {{- return(late_data.materialization_view_spark()) -}}
{% endmaterialization %}
