"""The table formats' own records, read the same way for Iceberg and Delta: each commit (commit),
Delta's commit log read faithfully (delta_log), what a table's commits touched (history), and its
versions, as-of reads and the retention a named version holds (versions).

May import: late_data.runtime.
"""
