"""A small dbt project written for the tests of a pipeline's upstream definition: one staging model
(a macro and a var in its select) read by two late-data pipelines, one of which joins a seed, the
package installed by `local:` path. The tests change its files as a user would."""

from __future__ import annotations

from pathlib import Path

from late_data.runtime.environment import CHECKOUT

RAW_SCHEMA = "upstream_raw"
READINGS = "event_id string, sensor string, event_time timestamp, value double, ingested_at timestamp"

FILES = {
    "dbt_project.yml": """
name: upstream_example
version: "1.0.0"
config-version: 2
profile: late_data
models:
  upstream_example:
    +file_format: "{{ env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') }}"
    stg_readings: {+materialized: view}
seeds:
  upstream_example:
    +file_format: "{{ env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') }}"
vars:
  reading_scale: 1
on-run-start:
  - "{{ late_data.on_run_start() }}"
on-run-end:
  - "{{ late_data.on_run_end(results) }}"
dispatch:
  - macro_namespace: dbt
    search_order: ["upstream_example", "late_data", "dbt"]
""",
    "macros/to_meters.sql": """
{% macro to_meters(column) %}{{ column }} * 0.3048{% endmacro %}

{% macro log_definition_changes(recorded, current, legacy_select=none) %}
    {%- do log('definition changes ' ~ tojson(late_data.definition_changes(recorded, current, legacy_select)), info=true) -%}
{% endmacro %}
""",
    "macros/late_data.sql": """
{% materialization view, adapter='spark' %}
    {{- return(late_data.materialization_view_spark()) -}}
{% endmaterialization %}
""",
    "seeds/sensor_groups.csv": "sensor,sensor_group\ns1,north\ns2,south\n",
    "models/sources.yml": f"""
version: 2
sources:
  - name: upstream
    schema: {RAW_SCHEMA}
    tables:
      - name: readings
models:
  - name: stg_readings
    description: The readings in meters.
""",
    "models/stg_readings.sql": """
select
    event_id,
    sensor,
    event_time,
    {{ to_meters('value') }} * {{ var('reading_scale') }} as level,
    ingested_at
from {{ source('upstream', 'readings') }}
""",
    "models/levels.sql": """
{{ config(materialized='late_data', meta={'late_data': {
    'series_key': 'sensor', 'late_window_seconds': 600, 'partition_size_seconds': 600,
    'measures': {'reading_count': 'count', 'level_sum': {'sum': 'level'}},
}}) }}

select event_id, sensor, event_time, level, ingested_at from {{ ref('stg_readings') }}
""",
    "models/group_levels.sql": """
{{ config(materialized='late_data', meta={'late_data': {
    'series_key': 'sensor_group', 'late_window_seconds': 600, 'partition_size_seconds': 600,
    'measures': {'reading_count': 'count', 'level_sum': {'sum': 'level'}},
}}) }}

select readings.event_id, groups.sensor_group, readings.event_time, readings.level, readings.ingested_at
from {{ ref('stg_readings') }} as readings
inner join {{ ref('sensor_groups') }} as groups on readings.sensor = groups.sensor
""",
}


def write_upstream_project(folder: Path) -> Path:
    """The project's files in `folder` (made), its package the checkout's."""
    for name, text in {**FILES, "packages.yml": f"packages:\n  - local: {CHECKOUT / 'package'}\n"}.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"))
    return folder


def edit(folder: Path, name: str, old: str, new: str) -> None:
    """Replace `old` (which must be there) by `new` in one of the project's files."""
    path = folder / name
    text = path.read_text()
    assert old in text, (name, old)
    path.write_text(text.replace(old, new))
