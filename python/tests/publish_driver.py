"""A process for the publish kill test (test_publishing.py): in LATE_DATA_HOME, `publish_killed`
builds the water-level scenario of test_publishing, stages a backfill, publishes it and SIGKILLs
itself right after the first table's commit (no cleanup of any kind); `finish` reports what the
killed publish left, then publishes again. Run as `python -m tests.publish_driver <step>` from
python/; prints one JSON object per line."""

from __future__ import annotations

import json
import os
import signal
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from late_data.project.pipelines import select_pipelines
from late_data.publishing import publish as publishing
from late_data.publishing.named_versions import PublishRefused, require_nothing_unfinished, unfinished_lines
from late_data.publishing.publish import publish
from late_data.publishing.stage import pipeline_tables, stage_backfill
from late_data.runtime.dbt_project import DbtProject
from late_data.runtime.environment import prepare_environment
from late_data.tables import versions as table_versions
from tests.helpers import TEST_VARS, Pipeline
from tests.test_publishing import at, built, result

NAME = "resend"


def emit(record: dict[str, Any]) -> None:
    print(json.dumps(record, default=str), flush=True)


def tables(project: DbtProject) -> dict[str, int | None]:
    [settings] = select_pipelines(project, ["water_level_window_means"])
    return {table: table_versions.current_version(project, table) for table in pipeline_tables(project, settings)}


def main(step: str) -> None:
    project = DbtProject(prepare_environment(), TEST_VARS)
    if step == "publish_killed":
        pipeline = built(Pipeline(project, TEST_VARS))
        settings = select_pipelines(project, ["water_level_window_means"])
        home = Path(os.environ["LATE_DATA_HOME"])
        stage_backfill(project, settings, at(0), at(5), timedelta(hours=1), True, at(20.5), NAME, home)
        emit({"tables": tables(project), "result": result(pipeline)})
        real_copy = publishing.copy_partitions

        def copy_then_die(*args: Any) -> None:
            real_copy(*args)
            emit({"killing": "after the first table's commit", "table": args[2]})
            os.kill(os.getpid(), signal.SIGKILL)

        publishing.copy_partitions = copy_then_die  # type: ignore[assignment]
        publish(project, NAME, {})
    elif step == "finish":
        emit({"tables": tables(project), "status": unfinished_lines(project)})
        try:
            require_nothing_unfinished(project)
        except PublishRefused as refusal:
            emit({"refused": str(refusal)})
        publish(project, NAME, {})
        emit({"tables": tables(project), "status": unfinished_lines(project)})
    project.close()


if __name__ == "__main__":
    main(sys.argv[1])
