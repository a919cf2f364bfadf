"""The oracle of a pipeline with dimensions (late_data.oracles.dimensions) replays every run that
applied a dimension change; `late-data check` runs it on every such pipeline, so its cost must
follow the data, not double with every run."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

from late_data.oracles.dimensions import replayed_versions
from late_data.project.pipelines import Dimension
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.timeutil import format_timestamp

SCHEMA = "dimension_oracle"
T0 = datetime(2026, 5, 1, 0, 0, 0)
CHANGES = 10


def plan_leaves(frame: Any) -> int:
    """How many relations the frame's analyzed plan reads (each checkpoint is one)."""
    return int(frame._jdf.queryExecution().analyzed().collectLeaves().size())


def test_the_replay_of_many_dimension_changes_reads_a_plan_that_does_not_double_per_change(
    project: DbtProject,
) -> None:
    """Ten runs, each applying a change of customer c1's region: each run re-versions c1's two
    orders. Every version is there once, and the plan reads a few relations (it read 6,140 of them,
    doubling per run that applied a change, until the driver ran out of memory)."""
    spark = project.spark
    spark.sql(f"drop schema if exists {SCHEMA} cascade")
    spark.sql(f"create schema {SCHEMA}")
    orders = [
        ("o1", "c1", T0 + timedelta(minutes=5), 10.0, T0 + timedelta(minutes=6)),
        ("o2", "c1", T0 + timedelta(minutes=7), 20.0, T0 + timedelta(minutes=8)),
        ("o3", "c2", T0 + timedelta(minutes=9), 30.0, T0 + timedelta(minutes=9)),
    ]
    spark.createDataFrame(
        orders, "event_id string, customer_id string, event_time timestamp, amount double, ingested_at timestamp"
    ).write.saveAsTable(f"{SCHEMA}.orders")
    spark.createDataFrame(
        [("c1", "north", T0, None), ("c2", "south", T0, None)],
        "customer_id string, region string, dbt_valid_from timestamp, dbt_valid_to timestamp",
    ).write.saveAsTable(f"{SCHEMA}.customers")
    runs = [T0 + timedelta(minutes=10 + run) for run in range(CHANGES + 1)]

    def row(customer: str, region: str) -> tuple[Any, ...]:
        as_json = json.dumps(
            {"customer_id": customer, "region": region, "dbt_valid_from": format_timestamp(T0).replace(" ", "T")}
        )
        return (customer, T0, None, as_json)

    # c2 applied once; c1 in a new region at every run after the first.
    applied = [(*row("c2", "south"), runs[0], None)]
    for index, moment in enumerate(runs):
        region = "north" if index % 2 == 0 else "south"
        closed = runs[index + 1] if index + 1 < len(runs) else None
        applied.append((*row("c1", region), moment, closed))
    spark.createDataFrame(
        applied,
        "dimension_key string, valid_from timestamp, valid_to timestamp, row_json string,"
        " applied_from timestamp, applied_to timestamp",
    ).write.saveAsTable(f"{SCHEMA}.orders_by_region__applied_customers")
    pipeline = SimpleNamespace(
        event_key=("event_id",),
        tie_breaker=("region", "amount"),
        dimensions=(
            Dimension(
                name="customers",
                relation=f"{SCHEMA}.customers",
                key="customer_id",
                fact_key="customer_id",
                valid_from="dbt_valid_from",
                valid_to="dbt_valid_to",
                applied=f"{SCHEMA}.orders_by_region__applied_customers",
            ),
        ),
    )
    compiled = (
        f"select orders.event_id, orders.customer_id, customers.region, orders.event_time, orders.amount,"
        f" orders.ingested_at from {SCHEMA}.orders as orders join {SCHEMA}.customers as customers"
        " on orders.customer_id = customers.customer_id and orders.event_time >= customers.dbt_valid_from"
        " and (customers.dbt_valid_to is null or orders.event_time < customers.dbt_valid_to)"
    )

    versions = replayed_versions(spark, pipeline, compiled, [(moment, "scheduled") for moment in runs])

    assert plan_leaves(versions) <= 10
    by_event = versions.groupBy("event_id").count().collect()
    # o1 and o2: the delivery and one version per change; o3: its delivery.
    assert {row["event_id"]: row["count"] for row in by_event} == {"o1": CHANGES + 1, "o2": CHANGES + 1, "o3": 1}
    made = versions.where("made_by_dimension").select("event_id", "region", "ingested_at").collect()
    assert len(made) == 2 * CHANGES
    assert {(row["region"], row["ingested_at"]) for row in made if row["event_id"] == "o1"} == {
        ("north" if index % 2 == 0 else "south", runs[index]) for index in range(1, CHANGES + 1)
    }
    spark.sql(f"drop schema {SCHEMA} cascade")
