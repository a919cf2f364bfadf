"""What the run audit says, every read of it outside dbt: each model's last run, failed, interrupted and
recovered runs, reconciliations, what an invocation did, publishes a rollback undid. What commands
other than dbt write into it is in late_data.project.audit_writes; dbt's own rows, the package's
macros (audit/)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from late_data.project.generator import GENERATED_EVENT_ID
from late_data.project.raw_tables import RAW_TABLES, existing_tables
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.settings import SetupError
from late_data.runtime.sql_text import sql_string
from late_data.runtime.timeutil import format_timestamp

AUDIT = "late_data_run_audit"

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
    if AUDIT not in existing_tables(project.query, project.target_schema()):
        return ResumePoint(None, None, None)
    audit = f"{project.target_schema()}.{AUDIT}"
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
    if AUDIT not in existing_tables(project.query, schema):
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
        from {project.target_schema()}.{AUDIT}
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
        from {project.target_schema()}.{AUDIT}
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


def audit_model(table: str) -> str:
    """The audit's `model` for a late-data table (schema.table): its name, except that a history's
    closed versions are recorded under the history's own name (the snapshot node's)."""
    return table.split(".")[-1].removesuffix("__closed")


def audit_models(tables: list[str]) -> str:
    """The audit's `model` values of schema.table names, as an SQL list."""
    return ", ".join(sql_string(audit_model(table)) for table in dict.fromkeys(tables))


def undone_by(project: DbtProject) -> dict[str, str]:
    """Published backfills that a rollback undid (the audit's publish rows of them are rolled back),
    each with the name of the rollback that did."""
    if AUDIT not in existing_tables(project.query, project.target_schema()):
        return {}
    rows = project.query(
        f"select invocation_id, max(rolled_back_by) as rolled_back_by from {project.target_schema()}.{AUDIT}"
        " where run_kind = 'publish' and outcome = 'rolled_back' group by invocation_id"
    )
    return {row["invocation_id"]: row["rolled_back_by"] for row in rows}


def invocation_totals(project: DbtProject, invocation_id: str) -> dict[str, Any]:
    """What one dbt invocation did, summed over its audit rows: versions loaded, windows changed and
    repaired, partitions rewritten, result rows written, too-late rows listed."""
    (totals,) = project.query(
        f"""
        select
            coalesce(sum(if(model_role = 'versions', rows_written, 0)), 0) as versions_loaded,
            coalesce(sum(windows_changed), 0) as windows_changed,
            coalesce(sum(windows_repaired), 0) as windows_repaired,
            coalesce(sum(if(model_role = 'windows', size(partitions_rewritten), 0)), 0) as partitions_rewritten,
            coalesce(sum(if(model_role = 'windows', rows_written, 0)), 0) as rows_written,
            coalesce(sum(if(model_role = 'too_late_rows', rows_written, 0)), 0) as too_late_rows
        from {project.target_schema()}.{AUDIT}
        where invocation_id = {sql_string(invocation_id)}
        """
    )
    return totals


def run_recorded_at(project: DbtProject, tables: list[str], run_time: datetime) -> Any:
    """When the successful run at `run_time` of these tables was last recorded (a run a rollback
    undid included: its state is still the run's); None when none succeeded."""
    (row,) = project.query(
        f"""
        select max(recorded_at) as recorded_at from {project.target_schema()}.{AUDIT}
        where model in ({audit_models(tables)}) and run_time = timestamp'{format_timestamp(run_time)}'
            and run_kind in ('scheduled', 'reconcile', 'full_refresh')
            and (outcome = 'success' or (outcome = 'rolled_back' and rolled_back_outcome = 'success'))
        """
    )
    return row["recorded_at"]


def last_runs(project: DbtProject) -> list[dict[str, Any]]:
    """Each model's last recorded run (a run still going is not one yet)."""
    return project.query(
        f"""
        select model, run_kind, run_time, outcome, rows_written, windows_changed, rows_quarantined, seconds
        from (
            select *, row_number() over (partition by model order by recorded_at desc) as newest
            from {project.target_schema()}.{AUDIT}
            where outcome != 'started' and coalesce(model_role, '') != 'upstream'
        )
        where newest = 1
        order by model
        """
    )


def interrupted_writes(project: DbtProject, results: dict[str, str]) -> list[dict[str, Any]]:
    """Of `results` (model -> its result table), those holding a write (written_at) later than the last
    run the audit recorded as a success: a run killed after it wrote, not yet recovered."""
    if not results:
        return []
    return project.query(
        " union all ".join(
            f"""
            select '{model}' as model, written_until, recorded_until
            from (select max(written_at) as written_until from {result})
            cross join (
                select max(run_time) as recorded_until
                from {project.target_schema()}.{AUDIT}
                where model = '{model}' and outcome = 'success'
            )
            where written_until > coalesce(recorded_until, timestamp'1970-01-01 00:00:00')
            """
            for model, result in results.items()
        )
    )


def last_recovery(project: DbtProject) -> dict[str, Any] | None:
    """The last run that found an interrupted write and recovered it (it ran as a reconciliation)."""
    rows = project.query(
        f"""
        select run_time, max(recovered_from) as recovered_from
        from {project.target_schema()}.{AUDIT}
        where recovered_from is not null and outcome = 'success'
        group by invocation_id, run_time
        order by run_time desc
        limit 1
        """
    )
    return rows[0] if rows else None


def last_reconciliation(project: DbtProject) -> dict[str, Any] | None:
    """The last successful reconciliation and the windows it repaired."""
    rows = project.query(
        f"""
        select run_time, sum(windows_repaired) as windows_repaired
        from {project.target_schema()}.{AUDIT}
        where run_kind = 'reconcile' and outcome = 'success' and model_role = 'windows'
        group by invocation_id, run_time
        order by run_time desc
        limit 1
        """
    )
    return rows[0] if rows else None
