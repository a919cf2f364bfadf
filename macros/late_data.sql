{#- The late_data package's snapshot materialization, for this project's late-data histories
    (strategy late_data.history; every other snapshot still gets dbt-spark's own): dbt lets no
    package override a built-in materialization, so the project wraps it
    (docs/your-own-pipeline.md).
    upstream: dbt-spark spark/macros/materializations/snapshot.sql materialization:snapshot:spark 11b4a58dc34f -#}
{% materialization snapshot, adapter='spark' %}
    {{- return(late_data.materialization_snapshot_spark()) -}}
{% endmaterialization %}
