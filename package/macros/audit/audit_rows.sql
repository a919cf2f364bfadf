{% macro written_until(results, last_runs=none) %}
    {#- A select of (model, null, null, null, max(written_at), null, null, null, null) per result table. With the audit's
        `last_runs`, only over the partitions a run after the model's last audited one can have
        written (from that run's horizon on), so a format whose statistics cannot answer the
        maximum (Delta keeps timestamps to the millisecond) reads only those. -#}
    {%- set selects = [] -%}
    {%- for result in results -%}
        {%- set last = (last_runs or {}).get(result.identifier, {}).get('any_run_time') -%}
        {%- set select -%}
            select {{ late_data.sql_string(result.identifier) }}, null, null, null, max(written_at), null, null, null, null from {{ result }}
            {%- if last is not none %}
            {%- set pipeline = late_data.pipeline(late_data.result_node(result)) %}
            where partition_start >= {{ late_data.timestamp_literal(late_data.floor_to(last - late_data.seconds(
                late_data.write_delay_seconds() + pipeline.window_size + pipeline.late_window), pipeline.partition_size)) }}
            {%- endif %}
        {%- endset -%}
        {%- do selects.append(select) -%}
    {%- endfor -%}
    {{- return(selects) -}}
{% endmacro %}


{% macro written_results() %}
    {#- The result tables this invocation builds that exist and carry written_at (a table built by an
        earlier version lacks it; its pipeline refuses to write until rebuilt). -#}
    {%- set tables = [] -%}
    {%- for node in late_data.filter_nodes('pipeline', true) if not flags.FULL_REFRESH -%}
        {%- set relation = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') -%}
        {%- if late_data.relation_exists(relation) and 'written_at' in late_data.known_columns(relation) | map(attribute=0) -%}
            {%- do tables.append(relation) -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(tables) -}}
{% endmacro %}


{% macro interrupted_run() %}
    {#- The latest run time written into a result table that no successful run of it recorded in
        the audit: a run killed after it wrote (or, on a shared catalog, one still running), which
        the next run must recover; none otherwise. From late_data.last_runs, no query of its own. -#}
    {%- if not execute or flags.WHICH not in ('run', 'build', 'snapshot') or late_data.backfill() -%}{{ return(none) }}{%- endif -%}
    {%- set state = late_data.invocation_state() -%}
    {%- if 'interrupted_run' not in state -%}
        {%- set interrupted = [] -%}
        {%- for model, last in late_data.last_runs().items()
            if last.get('written_until') is not none
            and (last.get('any_run_time') is none or last.written_until > last.any_run_time) -%}
            {%- do interrupted.append(last.written_until) -%}
        {%- endfor -%}
        {%- set interrupted = interrupted | max if interrupted else none -%}
        {%- if interrupted is not none -%}
            {%- do log('late-data: a run at ' ~ interrupted ~ ' wrote results but was interrupted before it recorded'
                ~ ' its outcome; this run reconciles (recomputes its checked windows from the versions and repairs them)', info=true) -%}
        {%- endif -%}
        {%- do state.update({'interrupted_run': interrupted}) -%}
    {%- endif -%}
    {{- return(state['interrupted_run']) -}}
{% endmacro %}


{% macro last_run(target) %}
    {#- late_data.last_runs' entry for `target`, empty when it never ran. -#}
    {{- return(late_data.last_runs().get(target.identifier, {})) -}}
{% endmacro %}


{% macro last_run_time(target) %}
    {#- The run time of the last successful scheduled, reconcile or full-refresh run of `target`, or none. -#}
    {{- return(late_data.last_run(target).get('run_time')) -}}
{% endmacro %}


{% macro all_upstream_nodes() %}
    {#- The unique ids of every model, snapshot and seed upstream of a late-data pipeline of the project. -#}
    {%- set state = late_data.invocation_state() -%}
    {%- if 'upstream_nodes' not in state -%}
        {%- set found = [] -%}
        {%- for node in late_data.filter_nodes('pipeline') -%}
            {%- do found.extend(late_data.upstream_nodes(node)) -%}
        {%- endfor -%}
        {%- do state.update({'upstream_nodes': found | unique | list}) -%}
    {%- endif -%}
    {{- return(state['upstream_nodes']) -}}
{% endmacro %}


{% macro run_kind() %}
    {{- return('backfill' if late_data.backfill() else ('full_refresh' if flags.FULL_REFRESH else ('reconcile' if late_data.is_reconciliation() else 'scheduled'))) -}}
{% endmacro %}


{% macro record_runs(results) %}
    {#- For on-run-end: one audit row per table of each late-data pipeline and history that ran,
        from what each was given in this invocation (late_data.record_write), and one per model,
        snapshot or seed upstream of a pipeline that was built (late_data.upstream_audit_row), in
        one insert, so one table commit per invocation. Only commands that build (run, build, snapshot) are recorded.
        What this process knows of the warehouse's relations stays only when every node that ran
        was a late-data write, which creates and drops none. -#}
    {%- if not execute or flags.WHICH not in ('run', 'build', 'snapshot') or late_data.is_explain() -%}{{ return('') }}{%- endif -%}
    {%- set audit_rows = [] -%}
    {%- set relations_changed = [] -%}
    {%- for result in results -%}
        {%- set node = result.node -%}
        {%- set late = late_data.is_pipeline(node) or late_data.is_history(node) -%}
        {%- set tables = late_data.node_tables(node) if late else [] -%}
        {%- set lean = [] -%}
        {%- for relation, role, pipeline in tables if late_data.written_lean(relation) -%}
            {%- do lean.append(relation) -%}
        {%- endfor -%}
        {%- if node.resource_type in ('model', 'snapshot', 'seed') and not (late and lean | length == tables | length) -%}
            {%- do relations_changed.append(node.unique_id) -%}
        {%- endif -%}
        {%- for relation, role, pipeline in tables -%}
            {%- do audit_rows.append(late_data.audit_row(relation, role, pipeline, result)) -%}
        {%- endfor -%}
        {%- if not late and node.unique_id in late_data.all_upstream_nodes() and node.config.materialized != 'ephemeral' -%}
            {%- do audit_rows.append(late_data.upstream_audit_row(node, result)) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if relations_changed -%}
        {%- do late_data.process_state().pop('relations', none) -%}
    {%- endif -%}
    {%- set schemas = late_data.process_state().get('schemas') -%}
    {%- for result in results if schemas is not none and (result.node.schema,) not in schemas -%}
        {%- do schemas.append((result.node.schema,)) -%}
    {%- endfor -%}
    {%- if audit_rows -%}
        {#- One file per invocation (a union of single rows would write one a row): the last runs
            are read from it by every run (late_data.last_runs). -#}
        {%- call statement('record_runs', fetch_result=false) -%}
            insert into {{ late_data.run_audit_relation() }}
            select /*+ COALESCE(1) */ * from (
            {{ audit_rows | join('\nunion all\n') }}
            )
        {%- endcall -%}
    {%- endif -%}
    {%- do late_data.remember_runs(results) -%}
{% endmacro %}


{% macro audit_row(relation, role, pipeline, result) %}
    {#- A select of one audit row for a table of a late-data node (`relation`, its `role`, its
        `pipeline`), from the node's run `result` and what the table was given in this invocation
        (late_data.record_write). -#}
    {%- set written = late_data.written(relation) or {} -%}
    {%- set succeeded = result.status == 'success' -%}
    {%- set partitions = [] -%}
    {%- for partition in written.get('partitions', []) -%}
        {%- do partitions.append('named_struct(\'partition_start\', ' ~ late_data.timestamp_literal(partition[0]) ~ ', \'series_bucket\', ' ~ partition[1] ~ ')') -%}
    {%- endfor -%}
    {%- set vanished = [] -%}
    {%- for key in written.get('vanished', []) -%}
        {%- do vanished.append(late_data.sql_string(key)) -%}
    {%- endfor -%}
    {%- set by_dimension = [] -%}
    {%- for key in written.get('dimension_windows', []) -%}
        {%- do by_dimension.append(late_data.sql_string(key)) -%}
    {%- endfor -%}
    {%- set quarantined = written.get('rows_quarantined') -%}
    {%- set recovered_from = late_data.interrupted_run() -%}
    {%- set code_commit = late_data.code_commit() -%}
    {%- set row -%}
        select
            '{{ invocation_id }}',
            {{ late_data.sql_string(relation.identifier) }},
            {{ late_data.sql_string(role) }},
            {{ late_data.sql_string('held' if written.get('mode') == 'held' else late_data.run_kind()) }},
            {{ late_data.run_time() }},
            {{ pipeline.late_window }},
            {{ pipeline.series_buckets }},
            {{ late_data.timestamp_literal(written.checked_from) if written.get('checked_from') else 'null' }},
            {{ written.get('windows_checked', 'null') if succeeded else 'null' }},
            {{ written.get('windows_changed', 'null') if succeeded else 'null' }},
            {{ written.get('windows_repaired', 'null') if succeeded else 'null' }},
            {{ ('array(' ~ partitions | join(', ') ~ ')') if succeeded and partitions else ('cast(array() as array<struct<partition_start: timestamp, series_bucket: int>>)' if succeeded else 'null') }},
            {{ ('array(' ~ vanished | join(', ') ~ ')') if succeeded and vanished else ('cast(array() as array<string>)' if succeeded else 'null') }},
            {{ written.get('rows_written', 'null') if succeeded else 'null' }},
            {{ result.execution_time }},
            {{ late_data.sql_string(late_data.outcome(result)) }},
            current_timestamp(),
            {{ quarantined if succeeded and quarantined is not none else 'null' }},
            {{ late_data.timestamp_literal(recovered_from) if recovered_from is not none else 'null' }},
            {{ late_data.sql_string(pipeline.name) }},
            {{ late_data.sql_string(written.plan) if written.get('plan') else 'null' }},
            {{ ('array(' ~ by_dimension | join(', ') ~ ')') if by_dimension else 'cast(null as array<string>)' }},
            {#- rolled_back_by, rolled_back_outcome: set by a rollback (late-data rollback) that undoes the run. #}
            cast(null as string),
            cast(null as string),
            {{ late_data.sql_string(late_data.definition_json(pipeline)) }},
            {{ late_data.sql_string(code_commit) if code_commit else 'cast(null as string)' }},
            {{ late_data.sql_string(late_data.package_version()) }}
    {%- endset -%}
    {{- return(row) -}}
{% endmacro %}


{% macro upstream_audit_row(node, result) %}
    {#- A select of one audit row for a model, snapshot or seed upstream of a late-data pipeline that
        this invocation built (model: its unique id, model_role `upstream`): what it was built with,
        its parts of the pipelines' definitions (late_data.node_parts), which a run that reads it as
        deployed compares with what its tables were built with (late_data.deployed_changes). -#}
    {%- set given = {
        'invocation_id': "'" ~ invocation_id ~ "'",
        'model': late_data.sql_string(node.unique_id),
        'model_role': "'upstream'",
        'run_kind': late_data.sql_string(late_data.run_kind()),
        'run_time': late_data.run_time(),
        'seconds': result.execution_time,
        'outcome': late_data.sql_string(late_data.outcome(result)),
        'recorded_at': 'current_timestamp()',
        'definition': late_data.sql_string(tojson(late_data.node_parts(node), sort_keys=true)),
        'package_version': late_data.sql_string(late_data.package_version()),
    } -%}
    {%- set values = [] -%}
    {%- for name, type in late_data.run_audit_columns() -%}
        {%- do values.append(given.get(name, 'cast(null as ' ~ type ~ ')')) -%}
    {%- endfor -%}
    {{- return('select ' ~ values | join(', ')) -}}
{% endmacro %}


{% macro outcome(result) %}
    {#- A node's outcome for the audit: dbt's status, except that a model skipped because an
        ephemeral model it refs failed (dbt gives only such a skip a message) failed itself: its
        comparison step could not be worked out. -#}
    {{- return('error' if result.status == 'skipped' and result.message else result.status | string) -}}
{% endmacro %}


{% macro written_lean(relation) %}
    {#- Whether `relation` was written in this invocation by a late-data write that creates and
        drops no relation (its facts say `lean`). -#}
    {{- return((late_data.written(relation) or {}).get('lean', false)) -}}
{% endmacro %}


{% macro result_node(relation) %}
    {#- The late-data pipeline node whose result is stored in `relation`, or none. -#}
    {%- for node in late_data.filter_nodes('pipeline') if node.alias == relation.identifier and node.schema == relation.schema -%}
        {{- return(node) -}}
    {%- endfor -%}
    {{- return(none) -}}
{% endmacro %}


{% macro audit_format() %}
    {#- The table format of the run audit: that of the project's late-data pipelines (the first). -#}
    {{- return(late_data.pipeline_format(late_data.filter_nodes('pipeline') | first)) -}}
{% endmacro %}
