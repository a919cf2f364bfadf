"""Where `prepare_environment` was imported from before the Python side was grouped by role: kept,
so a script written against the docs of then still runs (late_data.runtime.environment holds it; a
new script imports it from `late_data`)."""

from late_data.runtime.environment import prepare_environment

__all__ = ["prepare_environment"]
