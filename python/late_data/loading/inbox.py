"""The inbox: files handed to whichever process holds the project, loaded by it between runs.

On the embedded targets one process at a time opens the catalog (its Derby metastore admits one),
and a warm scheduler holds it for its whole life. `late-data load` therefore never writes the source
itself while another process holds the project: it copies each file into LATE_DATA_HOME/inbox/ (a
copy under a temporary name, then renamed: a killed copy leaves nothing the loader would take), and
the holder loads what waits there before its next run (running.scheduler), or the load itself does
when the project is free.

A file loads exactly once. Before its rows are appended (one commit, every row stamped
`ingested_at` = the moment of the load, which the next run's arrivals are found by), the stamp is
written beside it; after the commit the file and its stamp are deleted. A loader killed in between
leaves the stamp: the next one finds the source holding rows of that stamp and only deletes the file;
killed before the commit, it finds none and loads the file again, stamped anew. A file that cannot be
read is moved to inbox/refused/ with a .reasons file, one line per row it could not read.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from late_data.loading.files import STAMP, ReadFile, UnreadableFile, file_format, read_for_table, typed_view
from late_data.runtime.settings import SetupError, validate_identifier, validate_relation
from late_data.runtime.sql_text import sql_string, timestamp_literal

log = logging.getLogger(__name__)

INBOX = "inbox"
REFUSED = "refused"
# The pid of the scheduler that loads the inbox between its runs, while it runs.
SCHEDULER = "scheduler.pid"
# <order: nanoseconds>-<id>.<format>.<the file's own name>; a file's stamp is hidden beside it.
# A table's new rows: <order>-<id>.table.<schema>.<table>.<its new-by column>, the mark of what was
# loaded last kept in MARKS under the same name.
PENDING = re.compile(r"^\d{20}-[0-9a-f]{8}\.(?P<format>csv|json|parquet|table)\.(?P<original>[\w.-]+)$")
MARKS = "marks"


@dataclass(frozen=True)
class Loaded:
    """What became of one handed file: `rows` appended to `source` stamped `stamp`, or refused
    with `reasons` (then `rows` is 0 and the file is in inbox/refused/)."""

    source: str
    name: str
    rows: int
    stamp: datetime | None
    reasons: tuple[str, ...] = ()

    def line(self) -> str:
        if self.reasons:
            return f"load: refused {self.name} for {self.source}:\n  " + "\n  ".join(self.reasons)
        if self.stamp is None:
            return f"load: nothing new in {self.name} for {self.source}"
        return (
            f"load: {self.rows} rows of {self.name} into {self.source}, ingested_at {self.stamp:%Y-%m-%d %H:%M:%S.%f}"
        )


def inbox(home: Path) -> Path:
    return home / INBOX


def hand_over(home: Path, source: str, files: Iterable[Path], given_format: str | None = None) -> list[Path]:
    """Each file copied into the inbox of `source`, in the order given, under a name that keeps that
    order and the format; the originals are left as they are."""
    folder = inbox(home) / source
    folder.mkdir(parents=True, exist_ok=True)
    handed = []
    for path in files:
        fmt = file_format(path, given_format)
        if not path.is_file():
            raise SetupError(f"load: {path} is not a file")
        name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.{fmt}." + re.sub(r"[^\w.-]", "_", path.name)[:120]
        partial = folder / f".{name}.partial"
        shutil.copyfile(path, partial)
        with open(partial, "rb") as copied:
            os.fsync(copied.fileno())
        os.replace(partial, folder / name)
        handed.append(folder / name)
    return handed


def hand_over_table(home: Path, source: str, table: str, new_by: str) -> Path:
    """A request for the rows of `table` (schema.table) that are new by its column `new_by` since
    the previous such load into `source`, put in the inbox like a file."""
    relation = validate_relation("load --from-table", table)
    column = validate_identifier("load --new-by", new_by)
    folder = inbox(home) / source
    folder.mkdir(parents=True, exist_ok=True)
    request = folder / f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.table.{relation}.{column}"
    _write_durably(request, "")
    return request


def waiting(home: Path) -> list[tuple[str, Path]]:
    """(source, file) of every file waiting in the inbox, oldest first within a source."""
    root = inbox(home)
    if not root.is_dir():
        return []
    found: list[tuple[str, Path]] = []
    for folder in sorted(root.iterdir()):
        if folder.name == REFUSED or not folder.is_dir():
            continue
        found.extend((folder.name, path) for path in sorted(folder.iterdir()) if PENDING.match(path.name))
    return found


def load_waiting(spark: Any, home: Path, now: Callable[[], datetime] | None = None) -> list[Loaded]:
    """Every waiting file (or table's new rows) loaded into its source, or refused, oldest first: see
    the module's doc. `now` gives the stamps (naive UTC, to the microsecond; each later than the one
    before)."""
    outcomes = []
    previous: datetime | None = None
    for source, path in waiting(home):
        match = PENDING.match(path.name)
        assert match is not None
        fmt, original = match["format"], match["original"]
        stamp_file = path.with_name(f".{path.name}.stamp")
        mark_file = path.parent / MARKS / original if fmt == "table" else None
        if stamp_file.exists():
            left = json.loads(stamp_file.read_text())
            if _holds_stamp(spark, source, datetime.fromisoformat(left["stamp"])):
                log.info(
                    "load: %s was loaded into %s before a restart (ingested_at %s)", original, source, left["stamp"]
                )
                if mark_file is not None:
                    _write_durably(mark_file, left["upper"])
                _remove(path, stamp_file)
                continue
        view = f"late_data_load_{uuid.uuid4().hex[:12]}"
        try:
            if mark_file is None:
                read, upper = read_for_table(spark, path, fmt, source, view), None
            else:
                read, upper = _new_rows(spark, original, mark_file, source, view)
        except UnreadableFile as refused:
            outcomes.append(_refuse(home, source, path, original, stamp_file, refused.reasons))
            continue
        except Exception as error:  # Spark's: a file it cannot open, a table that does not exist
            outcomes.append(_refuse(home, source, path, original, stamp_file, [_first_line(error)]))
            continue
        stamp = None
        if read.rows:
            stamp = now() if now is not None else datetime.now(UTC).replace(tzinfo=None)
            if previous is not None and stamp <= previous:
                stamp = previous + timedelta(microseconds=1)
            previous = stamp
            _write_durably(stamp_file, json.dumps({"stamp": stamp.isoformat(sep=" "), "upper": upper}))
            # The table's own column order, the stamp in its place.
            columns = [
                timestamp_literal(stamp) if field.name == STAMP else f"`{field.name}`"
                for field in spark.table(source).schema.fields
            ]
            spark.sql(f"insert into {source} select {', '.join(columns)} from {read.view}")
        if mark_file is not None and upper is not None:
            _write_durably(mark_file, upper)
        _remove(path, stamp_file)
        spark.catalog.dropTempView(read.view)
        spark.catalog.dropTempView(f"{read.view}__raw")
        outcomes.append(Loaded(source, original, read.rows, stamp))
    return outcomes


def _new_rows(spark: Any, request: str, mark_file: Path, source: str, view: str) -> tuple[ReadFile, str | None]:
    """A table's rows whose `new_by` column lies after the mark of its previous load into `source`
    (all of them on the first), up to its largest value now, which becomes the next mark."""
    schema_name, table_name, column = request.split(".")
    table = f"{schema_name}.{table_name}"
    column_type = spark.table(table).schema[column].dataType.simpleString()
    upper = spark.sql(f"select cast(max(`{column}`) as string) from {table}").first()[0]
    lower = mark_file.read_text() if mark_file.exists() else None
    bounds = [f"`{column}` <= cast({sql_string(upper)} as {column_type})"] if upper is not None else ["false"]
    if lower is not None:
        bounds.append(f"`{column}` > cast({sql_string(lower)} as {column_type})")
    target = [field for field in spark.table(source).schema.fields if field.name != STAMP]
    rows = spark.table(table).where(" and ".join(bounds))
    return typed_view(spark, rows, target, source, view, Path(table), "a row of its type", []), upper or lower


def _holds_stamp(spark: Any, source: str, stamp: datetime) -> bool:
    return bool(spark.sql(f"select 1 from {source} where {STAMP} = {timestamp_literal(stamp)} limit 1").count())


def _refuse(home: Path, source: str, path: Path, original: str, stamp_file: Path, reasons: list[str]) -> Loaded:
    folder = inbox(home) / REFUSED / source
    folder.mkdir(parents=True, exist_ok=True)
    (folder / (path.name + ".reasons")).write_text("\n".join(reasons) + "\n")
    os.replace(path, folder / path.name)
    stamp_file.unlink(missing_ok=True)
    log.warning("load: refused %s for %s (inbox/refused/%s/%s.reasons)", path.name, source, source, path.name)
    return Loaded(source, original, 0, None, tuple(reasons))


def _remove(path: Path, stamp_file: Path) -> None:
    path.unlink(missing_ok=True)
    stamp_file.unlink(missing_ok=True)


def _write_durably(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name("." + path.name + ".partial")
    with open(partial, "w") as written:
        written.write(text)
        written.flush()
        os.fsync(written.fileno())
    os.replace(partial, path)


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0][:300] if text else type(error).__name__


class SchedulerMark:
    """For a scheduler that holds the project: its pid where `late-data load` looks for a process
    that loads the inbox between its runs, removed when closed (the project closes what it holds)."""

    def __init__(self, home: Path) -> None:
        self.path = home / SCHEDULER
        self.path.write_text(str(os.getpid()))

    def close(self) -> None:
        self.path.unlink(missing_ok=True)


def running_scheduler(home: Path) -> int | None:
    """The pid of a scheduler that is running on `home`, if one is."""
    try:
        pid = int((home / SCHEDULER).read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid
