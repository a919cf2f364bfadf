{% macro run_audit_relation() %}
    {{- return(api.Relation.create(schema=target.schema, identifier='late_data_run_audit', type='table')) -}}
{% endmacro %}


{% macro run_audit_columns() %}
    {#- The audit's columns, in order. A column added here is added to an existing audit table by
        late_data.prepare_run_audit, so an upgrade keeps the audit's past rows. -#}
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
        ('recovered_from', 'timestamp'),
        ('pipeline', 'string'),
        ('plan', 'string'),
        ('dimension_windows', 'array<string>'),
        ('rolled_back_by', 'string'),
        ('rolled_back_outcome', 'string'),
        ('definition', 'string'),
        ('code_commit', 'string'),
        ('package_version', 'string'),
    ]) -}}
{% endmacro %}


{% macro prepare_run_audit() %}
    {#- For on-run-start: the audit table every late-data model run appends to, created when missing
        and given the columns it lacks (an upgrade keeps the audit's past rows), checked once per
        process (late_data.process_state). -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- if late_data.is_explain() -%}{{ return('') }}{%- endif -%}
    {%- set state = late_data.process_state() -%}
    {%- if state.get('audit_ready') -%}{{ return('') }}{%- endif -%}
    {%- set audit = late_data.run_audit_relation() -%}
    {%- set columns = late_data.run_audit_columns() -%}
    {#- The target schema may not exist yet: a first command may be dbt test (unit tests) or docs generate. -#}
    {%- if not late_data.relation_exists(audit) -%}
        {%- do adapter.create_schema(audit) -%}
        {%- call statement('create_run_audit') -%}
            create table if not exists {{ audit }} (
            {%- for name, type in columns %}
                {{ name }} {{ type }}{{ ',' if not loop.last }}
            {%- endfor %}
            )
            using {{ late_data.audit_format() }}
            {{ late_data.tblproperties(late_data.audit_format()) }}
        {%- endcall -%}
        {%- do late_data.forget_relation(audit) -%}
    {%- else -%}
        {%- set present = late_data.known_columns(audit) | map(attribute=0) | list -%}
        {%- set missing = [] -%}
        {%- for name, type in columns if name not in present -%}
            {%- do missing.append(name ~ ' ' ~ type) -%}
        {%- endfor -%}
        {%- if missing -%}
            {%- do adapter.execute('alter table ' ~ audit ~ ' add columns (' ~ missing | join(', ') ~ ')') -%}
            {%- do late_data.forget_relation(audit) -%}
        {%- endif -%}
    {%- endif -%}
    {%- do state.update({'audit_ready': true}) -%}
    {{- return('') -}}
{% endmacro %}


{% macro check_run_time_moves_forward(nodes) %}
    {#- Time only moves forward: a scheduled, reconcile or full-refresh run at a run time before the
        last successful such run of one of `nodes` would record history versions that end before
        they begin, so it is refused before anything is written. The same run time again is an
        idempotent rerun (it writes nothing new). Backfills recompute the past by design. -#}
    {%- if late_data.backfill() -%}{{ return(none) }}{%- endif -%}
    {%- set run_time = late_data.run_time_value() -%}
    {%- for node in nodes -%}
        {%- for relation, role, pipeline in late_data.node_tables(node) -%}
        {%- set last_run_time = late_data.last_runs().get(relation.identifier, {}).get('run_time') -%}
        {%- if last_run_time is not none and run_time < last_run_time -%}
            {%- do exceptions.raise_compiler_error(
                "var run_time='" ~ run_time ~ "' is before the last run of " ~ relation.identifier ~ " at '" ~ last_run_time
                ~ "': runs only move forward in time. Pass a later run_time (a scheduler resumes after its last"
                ~ " audited run), recompute the past with a backfill (late-data backfill), or drop the late-data"
                ~ " tables to start over."
            ) -%}
        {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
{% endmacro %}


{% macro last_runs() %}
    {#- Per model, from the audit as it stood when this invocation began (it is appended on-run-end):
        {model: {'run_time': the last successful scheduled, reconcile or full-refresh run (what the
        model's stored state reflects; backfills only touch old partitions, held runs write
        nothing), 'any_run_time': the last successful run of any kind, 'loaded_run_time': the
        last successful run that loaded versions (any but a backfill), 'reconciled_run_time': the
        last reconcile or full-refresh run, 'first_run_time': its first run (of those read: a
        reconciliation due is all it is asked for), 'series_buckets': the bucket count of its last run, 'written_until': for a result table selected in this
        invocation, the latest run time a run wrote into it (its rows' written_at)}}. Read once
        per invocation, with the result tables' written_at in the same query on Iceberg (file
        statistics answer it); none before the audit exists (commands that run no hooks, such as
        docs generate, on a new warehouse). A warm process whose previous invocation recorded its
        runs knows them without a query (late_data.remember_runs), once it has read the written_at
        of every result table selected now. -#}
    {%- if not execute -%}{{ return({}) }}{%- endif -%}
    {%- set state = late_data.invocation_state() -%}
    {%- if 'last_runs' not in state and not late_data.relation_exists(late_data.run_audit_relation()) -%}
        {%- do state.update({'last_runs': {}}) -%}
    {%- endif -%}
    {%- set remembered = late_data.process_state().get('last_runs') -%}
    {%- if 'last_runs' not in state and remembered is not none
        and late_data.written_results() | map(attribute='identifier') | reject('in', remembered.checked) | list | length == 0 -%}
        {%- do state.update({'last_runs': late_data.copy_runs(remembered.runs)}) -%}
    {%- endif -%}
    {%- if 'last_runs' not in state -%}
        {%- set results = late_data.written_results() -%}
        {%- do state.update({'written_checked': results | map(attribute='identifier') | list}) -%}
        {%- set on_iceberg = late_data.audit_format() == 'iceberg' -%}
        {#- The runs of the last quarter of an hour (and of the reconciliation interval) first: the
            audit gains a file a run until maintenance compacts it, and its files of older runs
            are skipped unread. When a table this invocation builds has no run in them (a pipeline
            paused, new, or on a slower schedule), the whole audit. -#}
        {%- set horizon = late_data.run_time_value() - late_data.seconds(900 + late_data.reconcile_every_seconds()) -%}
        {%- set last_runs = {} -%}
        {%- set selects = [late_data.last_runs_query(horizon)] + (late_data.written_until(results) if on_iceberg else []) -%}
        {%- do late_data.read_last_runs(run_query(selects | join('\nunion all\n')), last_runs) -%}
        {%- set missing = [] -%}
        {%- for node in late_data.selected_late_data_nodes() -%}
            {%- for relation, role, pipeline in late_data.node_tables(node) if 'any_run_time' not in last_runs.get(relation.identifier, {}) -%}
                {%- do missing.append(relation.identifier) -%}
            {%- endfor -%}
        {%- endfor -%}
        {%- if missing -%}
            {%- do late_data.read_last_runs(run_query(late_data.last_runs_query()), last_runs) -%}
        {%- endif -%}
        {%- if results and not on_iceberg -%}
            {%- do late_data.read_last_runs(run_query(late_data.written_until(results, last_runs) | join('\nunion all\n')), last_runs) -%}
        {%- endif -%}
        {%- do state.update({'last_runs': last_runs}) -%}
    {%- endif -%}
    {{- return(state['last_runs']) -}}
{% endmacro %}


{% macro last_runs_query(horizon=none) %}
    {#- The select of late_data.last_runs' audit part: per model, its last runs of each kind (with
        `horizon`, among the runs at or after it) and the definition it last recorded (an upstream
        model's: its last build's, by the clock). -#}
    select
        model,
        max(if(run_kind not in ('backfill', 'held'), run_time, null)) as run_time,
        max(run_time) as any_run_time,
        max_by(series_buckets, run_time) as series_buckets,
        cast(null as timestamp) as written_until,
        max(if(run_kind != 'backfill', run_time, null)) as loaded_run_time,
        max(if(run_kind in ('reconcile', 'full_refresh'), run_time, null)) as reconciled_run_time,
        min(run_time) as first_run_time,
        -- An upstream model's last build, by the clock: a build outside the scheduled runs has no run time of theirs.
        max_by(definition, if(run_kind not in ('backfill', 'held') and definition is not null,
            if(model_role = 'upstream', recorded_at, run_time), null)) as definition
    from {{ late_data.run_audit_relation() }}
    where outcome = 'success'{{ ' and run_time >= ' ~ late_data.timestamp_literal(horizon) if horizon is not none }}
    group by model
{%- endmacro %}


{% macro copy_runs(runs) %}
    {%- set copied = {} -%}
    {%- for model, entry in runs.items() -%}
        {%- do copied.update({model: dict(entry)}) -%}
    {%- endfor -%}
    {{- return(copied) -}}
{% endmacro %}


{% macro remember_runs(results) %}
    {#- For on-run-end, once the audit rows are in: what this invocation's successful runs add to
        the audit's last runs, kept for the next invocation of this process (late_data.last_runs).
        After any failure nothing is kept: the next invocation reads the audit. -#}
    {%- set process = late_data.process_state() -%}
    {%- set failed = results | rejectattr('status', 'in', ['success', 'pass', 'warn']) | list -%}
    {%- if failed or not execute -%}
        {%- do process.pop('last_runs', none) -%}
        {{- return('') -}}
    {%- endif -%}
    {%- set invocation = late_data.invocation_state() -%}
    {%- set runs = late_data.copy_runs(invocation.get('last_runs', {})) -%}
    {%- set run_time = late_data.run_time_value() -%}
    {%- for result in results if late_data.is_pipeline(result.node) or late_data.is_history(result.node) -%}
        {%- for relation, role, pipeline in late_data.node_tables(result.node) -%}
            {%- set written = late_data.written(relation) or {} -%}
            {%- set kind = 'held' if written.get('mode') == 'held' else late_data.run_kind() -%}
            {%- set entry = runs.setdefault(relation.identifier, {}) -%}
            {%- do entry.update({'any_run_time': run_time, 'series_buckets': pipeline.series_buckets}) -%}
            {%- if kind not in ('backfill', 'held') -%}
                {%- do entry.update({'run_time': run_time, 'definition': late_data.definition_json(pipeline)}) -%}
            {%- endif -%}
            {%- if kind != 'backfill' -%}{%- do entry.update({'loaded_run_time': run_time}) -%}{%- endif -%}
            {%- if kind in ('reconcile', 'full_refresh') -%}{%- do entry.update({'reconciled_run_time': run_time}) -%}{%- endif -%}
            {%- do entry.setdefault('first_run_time', run_time) -%}
            {%- if role == 'windows' -%}{%- do entry.update({'written_until': run_time}) -%}{%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- set checked = (process.get('last_runs') or {}).get('checked', []) + invocation.get('written_checked', []) -%}
    {%- for result in results if late_data.is_pipeline(result.node) -%}
        {%- do checked.append(result.node.alias) -%}
    {%- endfor -%}
    {%- do process.update({'last_runs': {'runs': runs, 'checked': checked | unique | list}}) -%}
{% endmacro %}


{% macro read_last_runs(table, last_runs) %}
    {%- for row in table.rows -%}
        {%- set entry = last_runs.setdefault(row[0], {}) -%}
        {%- if row[4] is none -%}
            {%- do entry.update({
                'run_time': row[1], 'any_run_time': row[2], 'series_buckets': row[3], 'loaded_run_time': row[5],
                'reconciled_run_time': row[6], 'first_run_time': row[7], 'definition': row[8],
            }) -%}
        {%- else -%}
            {%- do entry.update({'written_until': row[4]}) -%}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}
