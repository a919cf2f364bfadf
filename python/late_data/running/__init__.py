"""Running pipelines: the scheduler (scheduled runs on a simulated or a real clock, their upkeep) and
the in-place backfill.

May import: late_data.runtime, late_data.project.
"""
