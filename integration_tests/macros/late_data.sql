{#- The late_data package's snapshot materialization for this project's late-data histories
    (every other snapshot still gets dbt-spark's own): dbt lets no package override a built-in
    materialization, so the project wraps it. -#}
{% materialization snapshot, adapter='spark' %}
    {{- return(late_data.materialization_snapshot_spark()) -}}
{% endmaterialization %}
