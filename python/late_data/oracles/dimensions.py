"""The oracle of a pipeline whose select joins dimensions at event time, independent of the macros.

A dimension changes under facts that already arrived, so what a window counted depends on what each
run saw of the dimension. The package records, per run, the dimension rows it applied (the
pipeline's `<model>__applied_<dimension>` table: each row with the run time it was applied from and,
once it changed or went, the run time it was applied to). From that record and the raw facts this
module replays the contract:

- a run applies the dimension as it is when the run starts; a fact delivery first counts with the
  dimension the run that loads it applied (the first run at or after its ingested_at), arriving at
  its ingested_at;
- when a run applies a changed dimension, each event's newest delivery (loaded by an earlier run)
  joined again with it, if that differs from the event's newest version, is a new version arriving
  at that run's time;
- windows count, per event, the newest version that arrived by min(run time, final_at)
  (oracle.windows_of), so a change that reaches a window already final is too late for it.

A first build or --full-refresh loads every fact with the dimension as it then is, so the replay
starts at the last such run at or before the moment checked.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


def dimension_view(spark: Any, dimension: Any, moment: datetime, name: str) -> None:
    """A temporary view `name` of the rows of `dimension` the run at `moment` applied."""
    from pyspark.sql import functions as F

    schema = spark.table(dimension.relation).schema
    stamp = F.lit(moment).cast("timestamp")
    rows = (
        spark.table(dimension.applied)
        .where((F.col("applied_from") <= stamp) & (F.col("applied_to").isNull() | (F.col("applied_to") > stamp)))
        .select(F.from_json("row_json", schema).alias("row"))
        .select("row.*")
    )
    rows.createOrReplaceTempView(name)


def model_rows(spark: Any, pipeline: Any, compiled_sql: str, moment: datetime) -> Any:
    """The model's rows with every dimension as the run at `moment` applied it: its compiled select,
    each dimension's relation read from a view of the applied rows instead."""
    sql = compiled_sql
    for index, dimension in enumerate(pipeline.dimensions):
        view = f"late_data_oracle_dimension_{index}"
        dimension_view(spark, dimension, moment, view)
        schema, table = dimension.relation.split(".")
        for spelling in (f"`{schema}`.`{table}`", f"{schema}.{table}", f"spark_catalog.{schema}.{table}"):
            sql = sql.replace(spelling, view)
    return spark.sql(sql)


def replayed_versions(spark: Any, pipeline: Any, compiled_sql: str, runs: list[tuple[datetime, str]]) -> Any:
    """Every version of the pipeline's events as the runs `runs` ((run time, run kind), ascending,
    the last the moment checked) made them, each with its arrival in ingested_at and, in
    made_by_dimension, whether a dimension change made it (rather than a delivery).

    The versions after each run that applied a change are materialized (a local checkpoint, which
    spills to disk) before the next run's are worked out from them: each step reads the previous
    one twice, so without it the plan, and the driver's memory, doubled with every such run."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    start = max(index for index, (_, kind) in enumerate(runs) if index == 0 or kind == "full_refresh")
    runs = runs[start:]
    applied = _applied_moments(spark, pipeline)
    changed = [runs[0][0]] + [moment for moment, _ in runs[1:] if moment in applied]
    run_times = [moment for moment, _ in runs]
    columns = spark.sql(compiled_sql).columns
    order = [F.col(column).desc_nulls_last() for column in ("arrival", "event_time", *pipeline.tie_breaker)]
    newest = Window.partitionBy(*pipeline.event_key).orderBy(*order)
    versions = None
    for index, moment in enumerate(changed):
        rows = model_rows(spark, pipeline, compiled_sql, moment).withColumn("source_ingested_at", F.col("ingested_at"))
        # Deliveries the runs from this one up to the next change loaded, with this dimension.
        loaded_after = _previous_run(run_times, moment) if index else None
        loaded_until = _previous_run(run_times, changed[index + 1]) if index + 1 < len(changed) else run_times[-1]
        window = F.col("ingested_at") <= F.lit(loaded_until)
        if loaded_after is not None:
            window = window & (F.col("ingested_at") > F.lit(loaded_after))
        first_loads = rows.where(window).withColumn("arrival", F.col("ingested_at"))
        if versions is not None:
            current = versions.withColumn("newness", F.row_number().over(newest)).where("newness = 1")
            joined = rows.alias("now").join(
                current.alias("then"),
                [F.col(f"now.{key}") == F.col(f"then.{key}") for key in pipeline.event_key]
                + [F.col("now.source_ingested_at") == F.col("then.source_ingested_at")],
            )
            same = F.lit(True)
            for column in columns:
                if column != "ingested_at":
                    same = same & F.col(f"now.{column}").eqNullSafe(F.col(f"then.{column}"))
            reversions = joined.where(~same).select("now.*").withColumn("arrival", F.lit(moment).cast("timestamp"))
            versions = versions.unionByName(reversions).unionByName(first_loads)
        else:
            versions = first_loads
        if index + 1 < len(changed):
            versions = versions.localCheckpoint(eager=True)
    assert versions is not None
    return (
        versions.withColumn("made_by_dimension", F.col("arrival") != F.col("source_ingested_at"))
        .drop("ingested_at", "source_ingested_at")
        .withColumnRenamed("arrival", "ingested_at")
    )


def _applied_moments(spark: Any, pipeline: Any) -> set[datetime]:
    """The run times at which a run applied a change of one of the pipeline's dimensions (a row
    opened or closed then), in one query."""
    selects = " union all ".join(
        f"select applied_from as moment from {dimension.applied}"
        f" union all select applied_to as moment from {dimension.applied} where applied_to is not null"
        for dimension in pipeline.dimensions
    )
    return {row["moment"] for row in spark.sql(f"select distinct moment from ({selects})").collect()}


def _previous_run(run_times: list[datetime], moment: datetime) -> datetime | None:
    earlier = [run_time for run_time in run_times if run_time < moment]
    return earlier[-1] if earlier else None
