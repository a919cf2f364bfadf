"""Lint-time stand-ins for the late_data package's macros (sqlfluff's jinja templater reaches a
package's namespace, `late_data.x(...)`, through a Python module of that name in library_path; it
has no dbt adapter, graph or run_query). Each returns SQL of the same shape as the real macro."""

RUN_TIME = "timestamp'2026-01-01 01:00:10'"


class _Pipeline(dict):
    """A pipeline's settings, readable as attributes as in Jinja."""

    __getattr__ = dict.get


def pipeline_named(name, stand_in=None):
    """`stand_in` is a meta.late_data, by its settings' names, as the package's pipeline_named takes it."""
    meta = stand_in or {}
    return _Pipeline(
        name=name,
        series_key=meta.get("series_key", ["series_key"]),
        source_column=meta.get("source_column"),
        window_size=60,
        partition_size=600,
        late_window=3600,
        late_window_by_source={},
        session_gap=meta.get("session_gap_seconds"),
    )


def windowed(relation, pipeline):
    return (
        "select *, window_start + interval 60 second as window_end, window_start + interval 3660 second as final_at,"
        " window_start + interval 3660 second as version_final_at, window_start as partition_start,"
        f" 0 as series_bucket from {relation}"
    )


def run_time():
    return RUN_TIME


def counts_as_of(judged_at, superseded_at="superseded_at"):
    return f"(ingested_at <= {judged_at} and coalesce({superseded_at} > {judged_at}, true))"


def judged_at(run_time, final_at="final_at"):
    return f"least({run_time}, {final_at})"


def as_of(history, moment=None):
    return f"select * from {history} where dbt_valid_to is null"


def window_revisions(history, pipeline, count_column=None, value_column=None):
    return f"select *, 1 as version_number from {history}"


def target_share():
    return 0.999


def exact_sum_bound():
    return "1e19"


def count_bound():
    return 2147483647


def plain_identifier(name, value):
    return value


def arrivals(relation, pipeline):
    return (
        "select source_table, event_id, series_key, event_time, ingested_at, window_end, final_at,"
        f" late_window_seconds, lateness_seconds, seconds_after_window_end, is_first_delivery from {relation}"
    )


def counted_arrivals(arrivals):
    return f"select * from {arrivals} where is_first_delivery"


def recommended_late_windows(arrivals):
    return (
        "select source_table, count(*) as arrived_rows, 0.999 as target_share,"
        " max(late_window_seconds) as configured_late_window_seconds, 1.0 as configured_captured_share,"
        " 0 as recommended_late_window_seconds, true as configured_meets_target"
        f" from {arrivals} group by source_table"
    )


def time_bucket(column, size):
    return f"timestamp_seconds(floor(unix_timestamp({column}) / {size}) * {size})"
