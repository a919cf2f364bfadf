"""Safe publishing: a backfill staged beside the published tables, its validation summary and
thresholds, publish, rollback and the named versions (publish).

May import: late_data.runtime, late_data.tables, late_data.project, late_data.running.
"""
