"""What the run audit says: each model's last run, interrupted runs, the quarantine, reconciliation."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from late_data.project.generator import GENERATED_EVENT_ID
from late_data.project.raw_tables import RAW_TABLES, existing_tables
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.settings import SetupError
from late_data.runtime.timeutil import format_timestamp

# Per late-data model and run time, the outcome of its last attempt at that run time (a retry at the
# same run time replaces a failed attempt), and per model the last run time it succeeded at. A
# backfill recomputes the past and is no run of the schedule.
_ATTEMPTS = """
    with attempts as (
        select model, run_time, max_by(outcome, recorded_at) as outcome
        from {audit}
        -- A run a rollback undid (outcome rolled_back) is no failure: the schedule goes on after the
        -- run rolled back to; a publish's and a rollback's own rows are no run.
        where run_kind not in ('backfill', 'publish', 'rollback') and outcome not in ('started', 'rolled_back')
        group by model, run_time
    ),
    reach as (
        select model, max(if(outcome = 'success', run_time, null)) as succeeded_until
        from attempts
        group by model
    ),
    judged as (
        select
            attempts.*,
            -- Not finished: its last attempt failed (or was skipped after a failure upstream) and
            -- no later run of the model succeeded since, which would have carried its state on.
            outcome != 'success' and coalesce(succeeded_until < run_time, true) as is_unfinished
        from attempts
        join reach using (model)
    )
"""


@dataclass(frozen=True)
class ResumePoint:
    """Where a restarted scheduler goes on, from the audit. `retry`: the earliest run time at which
    a late-data model or snapshot failed and no later run of it succeeded: that run is not
    finished (its results, or its history snapshot, were never written) and is run again first.
    `last_success`: the latest run time at which a late-data node succeeded. `last_recorded`: the
    latest run time the audit records at all, success or not: its scheduler fed that run's rows."""

    retry: datetime | None
    last_success: datetime | None
    last_recorded: datetime | None


def resume_point(project: DbtProject) -> ResumePoint:
    if "late_data_run_audit" not in existing_tables(project.query, project.target_schema()):
        return ResumePoint(None, None, None)
    audit = f"{project.target_schema()}.late_data_run_audit"
    (row,) = project.query(
        _ATTEMPTS.format(audit=audit)
        + f"""
        select
            min(if(is_unfinished, run_time, null)) as retry,
            max(if(outcome = 'success', run_time, null)) as last_success,
            -- Runs a rollback undid count here: the scheduler fed their rows, which the next runs load again.
            greatest(
                max(run_time),
                (
                    select max(run_time) from {audit}
                    where run_kind not in ('backfill', 'publish', 'rollback') and outcome = 'rolled_back'
                )
            ) as last_recorded
        from judged
        """
    )
    return ResumePoint(row["retry"], row["last_success"], row["last_recorded"])


def unfinished_runs(project: DbtProject, audit: str) -> list[dict[str, Any]]:
    """The failed attempts not yet made good (ResumePoint.retry), one row per model and run time."""
    return project.query(
        _ATTEMPTS.format(audit=audit)
        + """
        select run_time, model, outcome
        from judged
        where is_unfinished
        order by run_time, model
        """
    )


def fed_until(project: DbtProject, next_run_time: datetime | None, after: datetime) -> datetime:
    """How far a simulated feed has got, given the last run time the audit records (`after`): a
    scheduler feeds each run's rows just before the run starts, so a process killed between the
    two leaves the rows of the next run (`next_run_time`) fed and unrecorded. Only generated rows
    (their event ids, generator.GENERATED_EVENT_ID) stamped in [`after`, next_run_time), the ticks
    that run's feed writes, say so: a row written by anything else, at any stamp, does not move
    the feed on."""
    if next_run_time is None:
        return after
    existing = existing_tables(project.query, project.raw_schema())
    tables = [f"{project.raw_schema()}.{table}" for table in RAW_TABLES if table in existing]
    if not tables:
        return after
    window = (
        f"ingested_at >= timestamp'{format_timestamp(after)}'"
        f" and ingested_at < timestamp'{format_timestamp(next_run_time)}'"
        f" and event_id rlike '{GENERATED_EVENT_ID}'"
    )
    (row,) = project.query(
        "select count(*) as fed from ("
        + " union all ".join(f"select 1 from {table} where {window}" for table in tables)
        + ")"
    )
    return next_run_time if row["fed"] else after


def require_built(project: DbtProject) -> None:
    """Commands that read, repair or recompute what the runs built refuse a schema no run has
    built in yet (a check would compare nothing; a reconcile or backfill would build from scratch
    and report it as a repair)."""
    schema = project.target_schema()
    if "late_data_run_audit" not in existing_tables(project.query, schema):
        raise SetupError(
            f"nothing is built in schema {schema} yet: run `late-data schedule` (or `LATE_DATA_RUN_TIME=..."
            " dbt build`) first"
        )


@dataclass(frozen=True)
class PublishedRun:
    """For a result table and a moment: `at` the last run at or before the moment that wrote the
    table (a scheduled, reconcile or full-refresh run; a backfill recomputes the past and a held
    run writes nothing), `latest` its last such run: what the table holds now."""

    at: datetime | None
    latest: datetime | None


def published_run(project: DbtProject, model: str, moment: datetime | None) -> PublishedRun:
    until = f"timestamp'{format_timestamp(moment)}'" if moment is not None else "null"
    (row,) = project.query(
        f"""
        select
            max(if(run_time <= coalesce({until}, run_time), run_time, null)) as at,
            max(run_time) as latest
        from {project.target_schema()}.late_data_run_audit
        where model = '{model}' and outcome = 'success' and run_kind in ('scheduled', 'reconcile', 'full_refresh')
        """
    )
    return PublishedRun(row["at"], row["latest"])


def load_runs(project: DbtProject, model: str, until: datetime) -> list[tuple[datetime, str]]:
    """(run time, run kind) of every successful run of a result `model` up to `until` that loaded
    versions (held runs load too; backfills do not), ascending."""
    rows = project.query(
        f"""
        select run_time, run_kind
        from {project.target_schema()}.late_data_run_audit
        where
            model = '{model}' and outcome = 'success'
            and run_kind in ('scheduled', 'reconcile', 'full_refresh', 'held')
            and run_time <= timestamp'{format_timestamp(until)}'
        group by run_time, run_kind
        order by run_time
        """
    )
    return [(row["run_time"], row["run_kind"]) for row in rows]


def history_as_of(spark: Any, history: str, run_time: datetime, columns: str) -> Any:
    """A history snapshot's versions valid at `run_time`: the result table as the run at that time
    left it (`columns`: a select list)."""
    stamp = f"timestamp'{format_timestamp(run_time)}'"
    return spark.sql(
        f"""
        select {columns} from {history}
        where dbt_valid_from <= {stamp} and (dbt_valid_to > {stamp} or dbt_valid_to is null)
        """
    )
