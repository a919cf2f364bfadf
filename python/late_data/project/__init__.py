"""The user's dbt project as late-data sees it: its pipelines (pipelines), its raw tables
(raw_tables), the run audit (every read outside dbt in audit, every write outside dbt in
audit_writes: a publish's and a rollback's rows and marks), and the generator of demo and test data
(generator).

May import: late_data.runtime.
"""
