{% macro late_data_run_audit_relation() %}
    {{- return(api.Relation.create(schema=target.schema, identifier='late_data_run_audit', type='table')) -}}
{% endmacro %}


{% macro late_data_run_audit_columns() %}
    {#- The audit's columns, in order. A column added here is added to an existing audit table by
        late_data_create_run_audit, so an upgrade keeps the audit's past rows. -#}
    {{- return([
        ('invocation_id', 'string'),
        ('model', 'string'),
        ('model_role', 'string'),
        ('run_kind', 'string'),
        ('run_time', 'timestamp'),
        ('late_window_seconds', 'bigint'),
        ('series_buckets', 'int'),
        ('checked_from', 'timestamp'),
        ('windows_checked', 'bigint'),
        ('windows_changed', 'bigint'),
        ('windows_repaired', 'bigint'),
        ('partitions_rewritten', 'array<struct<partition_start: timestamp, series_bucket: int>>'),
        ('vanished_windows', 'array<string>'),
        ('rows_written', 'bigint'),
        ('seconds', 'double'),
        ('outcome', 'string'),
        ('recorded_at', 'timestamp'),
        ('rows_quarantined', 'bigint'),
    ]) -}}
{% endmacro %}


{% macro late_data_create_run_audit() %}
    {#- For on-run-start: the audit table every late-data model run appends to, created when dbt's
        relation cache does not know it, given the columns it lacks (an upgrade) otherwise. -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set audit = late_data_run_audit_relation() -%}
    {%- set columns = late_data_run_audit_columns() -%}
    {#- The target schema may not exist yet: a first command may be dbt test (unit tests) or docs generate. -#}
    {%- do adapter.create_schema(audit) -%}
    {%- if adapter.get_relation(database=none, schema=target.schema, identifier=audit.identifier) is not none -%}
        {%- set present = adapter.get_columns_in_relation(audit) | map(attribute='name') | map('lower') | list -%}
        {%- set missing = [] -%}
        {%- for name, type in columns if name not in present -%}
            {%- do missing.append(name ~ ' ' ~ type) -%}
        {%- endfor -%}
        {{- return('alter table ' ~ audit ~ ' add columns (' ~ missing | join(', ') ~ ')' if missing else '') -}}
    {%- endif -%}
    create table if not exists {{ audit }} (
    {%- for name, type in columns %}
        {{ name }} {{ type }}{{ ',' if not loop.last }}
    {%- endfor %}
    )
    using {{ env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') }}
{% endmacro %}


{% macro late_data_selected_nodes() %}
    {#- The late-data models and snapshots (tag `late_data`) this invocation builds (an ephemeral
        model builds nothing: it runs inside the model it feeds). -#}
    {%- set nodes = [] -%}
    {%- for node in graph.nodes.values()
        if node.resource_type in ('model', 'snapshot') and 'late_data' in node.tags and node.unique_id in selected_resources
        and node.config.materialized != 'ephemeral' -%}
        {%- do nodes.append(node) -%}
    {%- endfor -%}
    {{- return(nodes) -}}
{% endmacro %}


{% macro late_data_record_started() %}
    {#- For on-run-start, after the audit exists: refuses a run time that goes back in time, then
        records one `started` row per late-data node this invocation builds, before anything is
        written, so a run that is killed shows in the audit as started without an outcome. -#}
    {%- if not execute or flags.WHICH not in ('run', 'build', 'snapshot') -%}{{ return('') }}{%- endif -%}
    {%- set nodes = late_data_selected_nodes() -%}
    {%- if not nodes -%}{{ return('') }}{%- endif -%}
    {%- do late_data_check_run_time_moves_forward(nodes) -%}
    {%- set rows = [] -%}
    {%- for node in nodes -%}
        {%- do rows.append(late_data_audit_row(node, outcome='started')) -%}
    {%- endfor -%}
    insert into {{ late_data_run_audit_relation() }}
    {{ rows | join('\nunion all\n') }}
{% endmacro %}


{% macro late_data_check_run_time_moves_forward(nodes) %}
    {#- Time only moves forward: a scheduled, reconcile or full-refresh run at a run time before the
        last successful such run of one of `nodes` would record history versions that end before
        they begin, so it is refused before anything is written. The same run time again is an
        idempotent rerun (it writes nothing new). Backfills recompute the past by design. -#}
    {%- if late_data_backfill() -%}{{ return(none) }}{%- endif -%}
    {%- set run_time = late_data_run_time_value() -%}
    {%- for node in nodes -%}
        {%- set last_run_time = late_data_last_runs().get(node.alias, {}).get('run_time') -%}
        {%- if last_run_time is not none and run_time < last_run_time -%}
            {%- do exceptions.raise_compiler_error(
                "var run_time='" ~ run_time ~ "' is before the last run of " ~ node.alias ~ " at '" ~ last_run_time
                ~ "': runs only move forward in time. Pass a later run_time (a scheduler resumes after its last"
                ~ " audited run), recompute the past with a backfill (late-data backfill), or drop the late-data"
                ~ " tables to start over."
            ) -%}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}


{% macro late_data_last_runs() %}
    {#- Per model, from the audit as it stood when this invocation began (it is appended on-run-end):
        {model: {'run_time': the last successful scheduled, reconcile or full-refresh run (what the
        model's stored state reflects; backfills only touch old partitions, held runs write
        nothing), 'any_run_time': the last
        successful run of any kind, 'series_buckets': the bucket count of its last run}}. One query
        per invocation; none before the audit exists (commands that run no hooks, such as docs
        generate, on a new warehouse). -#}
    {%- if not execute -%}{{ return({}) }}{%- endif -%}
    {%- set state = late_data_invocation_state() -%}
    {%- if 'last_runs' not in state and not late_data_relation_exists(late_data_run_audit_relation()) -%}
        {%- do state.update({'last_runs': {}}) -%}
    {%- endif -%}
    {%- if 'last_runs' not in state -%}
        {%- set query -%}
            select
                model,
                max(if(run_kind not in ('backfill', 'held'), run_time, null)) as run_time,
                max(run_time) as any_run_time,
                max_by(series_buckets, run_time) as series_buckets
            from {{ late_data_run_audit_relation() }}
            where outcome = 'success'
            group by model
        {%- endset -%}
        {%- set last_runs = {} -%}
        {%- for row in run_query(query).rows -%}
            {%- do last_runs.update({row[0]: {'run_time': row[1], 'any_run_time': row[2], 'series_buckets': row[3]}}) -%}
        {%- endfor -%}
        {%- do state.update({'last_runs': last_runs}) -%}
    {%- endif -%}
    {{- return(state['last_runs']) -}}
{% endmacro %}


{% macro late_data_interrupted_run() %}
    {#- The run time of an invocation that recorded `started` rows and no outcome after the last
        outcome the audit holds: a run killed while it wrote (or, on a shared catalog, one still
        running), or none. One query per invocation, never at parse time. -#}
    {%- if not execute or flags.WHICH not in ('run', 'build', 'snapshot') or late_data_backfill() -%}{{ return(none) }}{%- endif -%}
    {%- set state = late_data_invocation_state() -%}
    {%- if 'interrupted_run' not in state -%}
        {%- set query -%}
            select max(run_time)
            from {{ late_data_run_audit_relation() }}
            where invocation_id in (
                select invocation_id
                from {{ late_data_run_audit_relation() }}
                where invocation_id != '{{ invocation_id }}'
                group by invocation_id
                having
                    count_if(outcome != 'started') = 0
                    and max(recorded_at) > (
                        select coalesce(max(recorded_at), timestamp'1970-01-01 00:00:00')
                        from {{ late_data_run_audit_relation() }}
                        where outcome != 'started'
                    )
            )
        {%- endset -%}
        {%- set interrupted = run_query(query).columns[0].values()[0] if late_data_relation_exists(late_data_run_audit_relation()) else none -%}
        {%- if interrupted is not none -%}
            {%- do log('late-data: the run at ' ~ interrupted ~ ' was interrupted before it recorded its outcome;'
                ~ ' this run reconciles (recomputes its checked windows from the versions and repairs them)', info=true) -%}
        {%- endif -%}
        {%- do state.update({'interrupted_run': interrupted}) -%}
    {%- endif -%}
    {{- return(state['interrupted_run']) -}}
{% endmacro %}


{% macro late_data_last_run(target) %}
    {#- late_data_last_runs' entry for `target`, empty when it never ran. -#}
    {{- return(late_data_last_runs().get(target.identifier, {})) -}}
{% endmacro %}


{% macro late_data_last_run_time(target) %}
    {#- The run time of the last successful scheduled, reconcile or full-refresh run of `target`, or none. -#}
    {{- return(late_data_last_run(target).get('run_time')) -}}
{% endmacro %}


{% macro late_data_run_kind() %}
    {{- return('backfill' if late_data_backfill() else ('full_refresh' if flags.FULL_REFRESH else ('reconcile' if late_data_reconcile() else 'scheduled'))) -}}
{% endmacro %}


{% macro late_data_node_role(node) %}
    {#- What a late-data node keeps: versions (a source's loaded row versions), windows (a result
        table), too_late_rows (a listing) or history (a snapshot); from meta.late_data_role. -#}
    {{- return((node.config.meta or {}).get('late_data_role') or ('history' if node.resource_type == 'snapshot' else 'windows')) -}}
{% endmacro %}


{% macro late_data_record_runs(results) %}
    {#- For on-run-end: one audit row per late-data model or snapshot (tag `late_data`) that ran,
        from what each recorded in this invocation (late_data_record_write), in one insert, so one
        table commit per invocation. Only commands that build (run, build, snapshot) are recorded. -#}
    {%- if not execute or flags.WHICH not in ('run', 'build', 'snapshot') -%}{{ return('') }}{%- endif -%}
    {%- set audit_rows = [] -%}
    {%- for result in results if result.node.resource_type in ('model', 'snapshot') and 'late_data' in result.node.tags
        and result.node.config.materialized != 'ephemeral' -%}
        {%- do audit_rows.append(late_data_audit_row(result.node, result=result)) -%}
    {%- endfor -%}
    {%- if audit_rows -%}
        {%- call statement('record_runs', fetch_result=false) -%}
            insert into {{ late_data_run_audit_relation() }}
            {{ audit_rows | join('\nunion all\n') }}
        {%- endcall -%}
    {%- endif -%}
{% endmacro %}


{% macro late_data_audit_row(node, result=none, outcome=none) %}
    {#- A select of one audit row for a late-data `node`: from its run `result` and what it recorded
        in this invocation (late_data_record_write), or, before it runs, with `outcome` (started). -#}
    {%- set target = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') -%}
    {%- set role = late_data_node_role(node) -%}
    {%- set written = (late_data_written(target) or {}) if result else {} -%}
    {%- set succeeded = result is not none and result.status == 'success' -%}
    {%- set partitions = [] -%}
    {%- for partition in written.get('partitions', []) -%}
        {%- do partitions.append('named_struct(\'partition_start\', ' ~ late_data_timestamp_literal(partition[0]) ~ ', \'series_bucket\', ' ~ partition[1] ~ ')') -%}
    {%- endfor -%}
    {%- set vanished = [] -%}
    {%- for key in written.get('vanished', []) -%}
        {%- do vanished.append(late_data_string_literal(key)) -%}
    {%- endfor -%}
    {%- set quarantined = written.get('rows_quarantined') -%}
    {%- if succeeded and role == 'versions' and quarantined is none -%}
        {#- A rebuilt versions table: what it holds is what this run quarantined. -#}
        {%- set quarantined = run_query('select count_if(quarantine_reason is not null) from ' ~ target).columns[0].values()[0] -%}
    {%- endif -%}
    {%- set row -%}
        select
            '{{ invocation_id }}',
            {{ late_data_string_literal(node.alias) }},
            {{ late_data_string_literal(role) }},
            {{ late_data_string_literal('held' if written.get('mode') == 'held' else late_data_run_kind()) }},
            {{ late_data_run_time() }},
            {{ late_data_model_late_window_seconds(node.config) }},
            {{ late_data_series_buckets() }},
            {{ late_data_timestamp_literal(written.checked_from) if written.get('checked_from') else 'null' }},
            {{ written.get('windows_checked', 'null') if succeeded else 'null' }},
            {{ written.get('windows_changed', 'null') if succeeded else 'null' }},
            {{ written.get('windows_repaired', 'null') if succeeded else 'null' }},
            {{ ('array(' ~ partitions | join(', ') ~ ')') if succeeded and partitions else ('cast(array() as array<struct<partition_start: timestamp, series_bucket: int>>)' if succeeded else 'null') }},
            {{ ('array(' ~ vanished | join(', ') ~ ')') if succeeded and vanished else ('cast(array() as array<string>)' if succeeded else 'null') }},
            {{ written.get('rows_written', 'null') if succeeded else 'null' }},
            {{ result.execution_time if result else 'null' }},
            {{ late_data_string_literal(late_data_outcome(result) if result else outcome) }},
            current_timestamp(),
            {{ quarantined if succeeded and quarantined is not none else 'null' }}
    {%- endset -%}
    {{- return(row) -}}
{% endmacro %}


{% macro late_data_outcome(result) %}
    {#- A node's outcome for the audit: dbt's status, except that a model skipped because an
        ephemeral model it refs failed (dbt gives only such a skip a message) failed itself: its
        comparison step could not be worked out. -#}
    {{- return('error' if result.status == 'skipped' and result.message else result.status | string) -}}
{% endmacro %}
