"""Running pipelines: the scheduler (scheduled runs on a simulated or a real clock, their upkeep, the
files handed to it loaded before each run) and the in-place backfill.

May import: late_data.runtime, late_data.project, late_data.loading.
"""
