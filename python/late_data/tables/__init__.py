"""The table formats' own records, read the same way for Iceberg and Delta: each commit (commit),
Delta's commit log read faithfully (delta_log; its files, delta_log_files; its typed values,
delta_values), what a table's commits touched (history), and its versions, as-of reads and the
retention a named version holds (versions).

May import: late_data.runtime.
"""
