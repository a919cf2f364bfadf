{% macro late_data_run_audit_relation() %}
    {{- return(api.Relation.create(schema=target.schema, identifier='late_data_run_audit', type='table')) -}}
{% endmacro %}


{% macro late_data_create_run_audit() %}
    {#- For on-run-start: the audit table every late-data model run appends to; nothing to do when
        dbt's relation cache already knows it. -#}
    {%- if execute and adapter.get_relation(database=none, schema=target.schema, identifier='late_data_run_audit') is not none -%}
        {{- return('') -}}
    {%- endif -%}
    create table if not exists {{ late_data_run_audit_relation() }} (
        invocation_id string,
        model string,
        model_role string,
        run_kind string,
        run_time timestamp,
        late_window_seconds bigint,
        series_buckets int,
        checked_from timestamp,
        windows_checked bigint,
        windows_changed bigint,
        windows_repaired bigint,
        partitions_rewritten array<struct<partition_start: timestamp, series_bucket: int>>,
        vanished_windows array<string>,
        rows_written bigint,
        seconds double,
        outcome string,
        recorded_at timestamp
    )
    using {{ env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') }}
{% endmacro %}


{% macro late_data_last_runs() %}
    {#- Per model, from the audit as it stood when this invocation began (it is appended on-run-end):
        {model: {'run_time': the last successful scheduled, reconcile or full-refresh run (what the
        model's stored state reflects; backfills only touch old partitions, held runs write
        nothing), 'any_run_time': the last
        successful run of any kind, 'series_buckets': the bucket count of its last run}}. One query
        per invocation. -#}
    {%- if not execute -%}{{ return({}) }}{%- endif -%}
    {%- set state = late_data_invocation_state() -%}
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
    {%- for result in results if result.node.resource_type in ('model', 'snapshot') and 'late_data' in result.node.tags -%}
        {%- set target = api.Relation.create(schema=result.node.schema, identifier=result.node.alias, type='table') -%}
        {%- set role = late_data_node_role(result.node) -%}
        {%- set written = late_data_written(target) or {} -%}
        {%- set succeeded = result.status == 'success' -%}
        {%- set partitions = [] -%}
        {%- for partition in written.get('partitions', []) -%}
            {%- do partitions.append('named_struct(\'partition_start\', ' ~ late_data_timestamp_literal(partition[0]) ~ ', \'series_bucket\', ' ~ partition[1] ~ ')') -%}
        {%- endfor -%}
        {%- set vanished = [] -%}
        {%- for key in written.get('vanished', []) -%}
            {%- do vanished.append(late_data_string_literal(key)) -%}
        {%- endfor -%}
        {%- set row -%}
            select
                '{{ invocation_id }}',
                '{{ result.node.alias }}',
                '{{ role }}',
                '{{ 'held' if written.get('mode') == 'held' else late_data_run_kind() }}',
                {{ late_data_run_time() }},
                {{ late_data_model_late_window_seconds(result.node.config) }},
                {{ late_data_series_buckets() }},
                {{ late_data_timestamp_literal(written.checked_from) if written.get('checked_from') else 'null' }},
                {{ written.get('windows_checked', 'null') if succeeded else 'null' }},
                {{ written.get('windows_changed', 'null') if succeeded else 'null' }},
                {{ written.get('windows_repaired', 'null') if succeeded else 'null' }},
                {{ ('array(' ~ partitions | join(', ') ~ ')') if succeeded and partitions else ('cast(array() as array<struct<partition_start: timestamp, series_bucket: int>>)' if succeeded else 'null') }},
                {{ ('array(' ~ vanished | join(', ') ~ ')') if succeeded and vanished else ('cast(array() as array<string>)' if succeeded else 'null') }},
                {{ written.get('rows_written', 'null') if succeeded else 'null' }},
                {{ result.execution_time }},
                '{{ result.status }}',
                current_timestamp()
        {%- endset -%}
        {%- do audit_rows.append(row) -%}
    {%- endfor -%}
    {%- if audit_rows -%}
        {%- call statement('record_runs', fetch_result=false) -%}
            insert into {{ late_data_run_audit_relation() }}
            {{ audit_rows | join('\nunion all\n') }}
        {%- endcall -%}
    {%- endif -%}
{% endmacro %}
