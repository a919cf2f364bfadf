"""Where `DbtProject` was imported from before the Python side was grouped by role: kept, so a
script written against the docs of then still runs (late_data.runtime.dbt_project holds it; a
new script imports it from `late_data`)."""

from late_data.runtime.dbt_project import DbtProject

__all__ = ["DbtProject"]
