"""Python side of the late_data dbt project: what dbt cannot do itself.

A script's names are importable from here and stay here when the modules behind them move
(late_data.api): open_project, append_rows, run, check, pipelines_with_sources, DbtProject,
prepare_environment, RunReport, PipelineCheck. They are imported on first use, so `import
late_data` (and the `late-data` command's start) loads neither dbt nor Spark."""

from __future__ import annotations

from typing import Any

__all__ = [
    "DbtProject",
    "PipelineCheck",
    "RunReport",
    "append_rows",
    "check",
    "open_project",
    "pipelines_with_sources",
    "prepare_environment",
    "run",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from late_data import api

        return getattr(api, name)
    raise AttributeError(f"module 'late_data' has no attribute {name!r}")
