"""A file of rows read for a source table: CSV (with a header line), JSON lines or Parquet, each
value cast to the table's column type. What cannot be read is named row by row, and the file is
refused whole: a load never keeps part of a file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMATS = {".csv": "csv", ".jsonl": "json", ".json": "json", ".ndjson": "json", ".parquet": "parquet"}
STAMP = "ingested_at"
# Spark's column for a CSV or JSON record it cannot parse (its own default name, set explicitly).
CORRUPT = "_corrupt_record"
# How many unreadable rows a refusal names; the rest are counted.
NAMED_ROWS = 20


class UnreadableFile(Exception):
    """A file refused whole: each line of `reasons` names one row or column that cannot be loaded."""

    def __init__(self, path: Path, reasons: list[str]) -> None:
        super().__init__(f"{path.name}: " + "; ".join(reasons[:3]))
        self.path = path
        self.reasons = reasons


def file_format(path: Path, given: str | None = None) -> str:
    """csv, json (JSON lines) or parquet: `given`, else from the file's extension."""
    if given is not None:
        return given
    found = FORMATS.get(path.suffix.lower())
    if found is None:
        raise ValueError(
            f"{path.name}: cannot tell its format from its extension (.csv, .jsonl, .parquet): pass --format"
        )
    return found


@dataclass(frozen=True)
class ReadFile:
    """A file's rows as a temporary view of the source's columns (less the stamp), typed."""

    view: str
    rows: int


def read_for_table(spark: Any, path: Path, fmt: str, table: str, view: str) -> ReadFile:
    """The rows of `path` as the temporary view `view`: every column of `table` but its stamp
    (`ingested_at`, which the load sets), each value cast to the table's type. Refused whole
    (UnreadableFile) when a column is missing, unknown or the stamp itself, or when a row cannot be
    parsed or a value is not of its column's type."""
    target = [field for field in spark.table(table).schema.fields if field.name != STAMP]
    raw = _read_raw(spark, path, fmt)
    present = [name for name in raw.columns if name != CORRUPT]
    problems = []
    if STAMP in present:
        problems.append(f"has the column {STAMP}: a load stamps every row with the moment it loads it")
    unknown = [name for name in present if name not in {field.name for field in target} and name != STAMP]
    if unknown:
        problems.append(f"has columns {table} does not have: {', '.join(unknown)}")
    return typed_view(spark, raw, target, table, view, path, fmt, problems)


def typed_view(
    spark: Any, raw: Any, target: list[Any], table: str, view: str, origin: Path, label: str, problems: list[str]
) -> ReadFile:
    """`raw`'s columns of `target` (the source's fields but its stamp) as the temporary view `view`,
    each cast to its type; refused (UnreadableFile, naming `origin`) with `problems`, a column
    missing, a record that is not `label` or a value not of its column's type."""
    names = [field.name for field in target]
    missing = [name for name in names if name not in raw.columns]
    if missing:
        problems = [*problems, f"lacks the columns of {table}: {', '.join(missing)}"]
    if problems:
        raise UnreadableFile(origin, problems)
    raw = raw.cache()
    raw.createOrReplaceTempView(f"{view}__raw")
    casts = {field.name: f"try_cast(`{field.name}` as {field.dataType.simpleString()})" for field in target}
    failing = ", ".join(f"if(`{name}` is not null and {cast} is null, '{name}', null)" for name, cast in casts.items())
    corrupt = f"`{CORRUPT}`" if CORRUPT in raw.columns else "cast(null as string)"
    bad = spark.sql(
        f"select {corrupt} as record, to_json(struct({', '.join(f'`{name}`' for name in names)})) as row_json,"
        f" failing from (select *, array_compact(array({failing})) as failing from {view}__raw)"
        f" where {corrupt} is not null or size(failing) > 0"
    ).collect()
    if bad:
        raise UnreadableFile(origin, _row_reasons(bad, target, label))
    spark.sql(
        f"create or replace temporary view {view} as select "
        + ", ".join(f"{cast} as `{name}`" for name, cast in casts.items())
        + f" from {view}__raw"
    )
    return ReadFile(view=view, rows=raw.count())


def _read_raw(spark: Any, path: Path, fmt: str) -> Any:
    """The file as Spark reads it: CSV and JSON values as text (cast afterwards, so a value that is not
    of its type is seen, not read as null), a record Spark cannot parse in CORRUPT; Parquet as typed."""
    if fmt == "parquet":
        return spark.read.parquet(str(path))
    from pyspark.sql.types import StringType, StructField, StructType

    if fmt == "csv":
        header = spark.read.option("header", True).csv(str(path)).columns
        fields = header
    else:
        fields = [name for name in spark.read.json(str(path)).columns if name != CORRUPT]
    schema = StructType([StructField(name, StringType()) for name in fields] + [StructField(CORRUPT, StringType())])
    reader = spark.read.schema(schema).option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT)
    if fmt == "csv":
        return reader.option("header", True).option("enforceSchema", False).csv(str(path))
    return reader.json(str(path))


def _row_reasons(bad: list[Any], target: list[Any], fmt: str) -> list[str]:
    reasons = []
    types = {field.name: field.dataType.simpleString() for field in target}
    for row in bad[:NAMED_ROWS]:
        if row["record"] is not None:
            reasons.append(f"a row that is not {fmt}: {str(row['record']).strip()[:200]}")
            continue
        values = json.loads(row["row_json"])
        wrong = ", ".join(f"{name}={values.get(name)!r} is not a {types[name]}" for name in row["failing"])
        reasons.append(f"row {row['row_json'][:200]}: {wrong}")
    if len(bad) > NAMED_ROWS:
        reasons.append(f"and {len(bad) - NAMED_ROWS} more rows")
    return reasons
