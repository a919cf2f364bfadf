"""The commands that read or make a project: `check` (each pipeline against its oracle), `explain`
(the SQL a run executes), `init` (a new project) and `status` (what the runs did).

May import: late_data.runtime, late_data.tables, late_data.oracles, late_data.project.
"""
