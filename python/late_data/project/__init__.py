"""The user's dbt project as late-data sees it: its pipelines (pipelines), its raw tables
(raw_tables), the run audit's reads (audit), and the generator of demo and test data (generator).

May import: late_data.runtime.
"""
