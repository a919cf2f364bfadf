"""Safe publishing (docs/publishing.md): a backfill staged beside the published tables with its
validation summary (stage), acceptance thresholds and publish (publish), rollback (rollback), the
named versions that record each state and journal each switch (named_versions); what they write
into the run audit is written by late_data.project.audit_writes.

May import: late_data.runtime, late_data.tables, late_data.project, late_data.running.
"""
