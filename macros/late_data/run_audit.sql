{% macro late_data_run_audit_relation() %}
    {{- return(api.Relation.create(schema=target.schema, identifier='late_data_run_audit', type='table')) -}}
{% endmacro %}


{% macro late_data_create_run_audit() %}
    {#- For on-run-start: the audit table that every late-data model run appends to. -#}
    create table if not exists {{ late_data_run_audit_relation() }} (
        invocation_id string,
        model string,
        model_role string,
        run_kind string,
        run_time timestamp,
        late_window_seconds bigint,
        checked_from timestamp,
        windows_checked bigint,
        partitions_rewritten array<timestamp>,
        rows_written bigint,
        seconds double,
        outcome string,
        recorded_at timestamp
    )
    using {{ env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') }}
{% endmacro %}


{% macro late_data_last_run_times() %}
    {#- Per model, the run time of its last successful scheduled (or full-refresh) run, from the
        audit, as {model: datetime}. Backfills do not count: they touch an old range, not the
        recent windows. Every node of an invocation judges by the audit as it stood when the
        invocation began (the audit is appended on-run-end), so the answer is looked up once and
        kept in the Spark session's conf under the invocation's id until late_data_record_runs. -#}
    {%- if not execute -%}{{ return({}) }}{%- endif -%}
    {%- set conf_key = late_data_last_run_times_conf_key() -%}
    {%- set remembered = run_query('set ' ~ conf_key).columns[1].values()[0] -%}
    {%- set last_run_times = {} -%}
    {%- if remembered != '<undefined>' -%}
        {%- for entry in remembered.split(',') if '|' in entry -%}
            {%- set model, moment = entry.split('|') -%}
            {%- do last_run_times.update({model: modules.datetime.datetime.fromisoformat(moment)}) -%}
        {%- endfor -%}
        {{- return(last_run_times) -}}
    {%- endif -%}
    {%- set query -%}
        select model, max(run_time) from {{ late_data_run_audit_relation() }}
        where outcome = 'success' and run_kind != 'backfill'
        group by model
    {%- endset -%}
    {%- set entries = [] -%}
    {%- for row in run_query(query).rows -%}
        {%- do last_run_times.update({row[0]: row[1]}) -%}
        {%- do entries.append(row[0] ~ '|' ~ row[1].isoformat()) -%}
    {%- endfor -%}
    {%- do adapter.execute('set ' ~ conf_key ~ '=' ~ (entries | join(',') or 'none')) -%}
    {{- return(last_run_times) -}}
{% endmacro %}


{% macro late_data_last_run_times_conf_key() %}
    {{- return('late_data.last_run_times.' ~ invocation_id | replace('-', '_')) -}}
{% endmacro %}


{% macro late_data_last_run_time(target) %}
    {#- The run time of the last successful scheduled (or full-refresh) run of `target`, or none. -#}
    {{- return(late_data_last_run_times().get(target.identifier)) -}}
{% endmacro %}


{% macro late_data_record_runs(results) %}
    {#- For on-run-end: one audit row per late-data model or snapshot (tag `late_data`) that ran.
        Role `windows` (result tables): windows checked counts the windows of the partitions
        compared; rows written and partitions rewritten are read back from the rows stamped with
        this invocation (within the checked partitions, unless the table was built from scratch).
        Role `too_late_rows`: rows written are the too-late rows listed. Role `history`
        (snapshots): rows written are the versions this run time recorded. Only commands that
        build (run, build, snapshot) are recorded. -#}
    {%- if not execute or flags.WHICH not in ('run', 'build', 'snapshot') -%}{{ return('') }}{%- endif -%}
    {%- set late_data_results = [] -%}
    {%- for result in results if result.node.resource_type in ('model', 'snapshot') and 'late_data' in result.node.tags -%}
        {%- do late_data_results.append(result) -%}
    {%- endfor -%}
    {%- if not late_data_results -%}{{ return('') }}{%- endif -%}
    {%- set audit_rows = [] -%}
    {%- set last_run_times = late_data_last_run_times() -%}
    {%- for result in late_data_results -%}
        {%- set target = api.Relation.create(schema=result.node.schema, identifier=result.node.alias, type='table') -%}
        {%- set succeeded = result.status == 'success' -%}
        {%- set role = 'too_late_rows' if 'too_late_rows' in result.node.tags else ('history' if result.node.resource_type == 'snapshot' else 'windows') -%}
        {%- set late_window_seconds = late_data_model_late_window_seconds(result.node.config) -%}
        {%- set last_run_time = last_run_times.get(target.identifier) -%}
        {%- set checked = late_data_checked_range_after(target, last_run_time, late_window_seconds) -%}
        {%- set checked_partitions = late_data_range_predicate(checked) -%}
        {%- set built_from_scratch = flags.FULL_REFRESH or last_run_time is none -%}
        {%- set run_kind = 'backfill' if late_data_backfill() else ('full_refresh' if flags.FULL_REFRESH else 'scheduled') -%}
        {%- set audit_row -%}
            select
                '{{ invocation_id }}',
                '{{ result.node.alias }}',
                '{{ role }}',
                '{{ run_kind }}',
                {{ late_data_run_time() }},
                {{ late_window_seconds }},
                {{ late_data_timestamp_literal(checked.lower) if role == 'windows' else 'null' }},
                {{ 'written.windows_checked' if succeeded and role == 'windows' else 'null' }},
                {{ 'written.partitions_rewritten' if succeeded and role == 'windows' else 'null' }},
                {{ 'written.rows_written' if succeeded else 'null' }},
                {{ result.execution_time }},
                '{{ result.status }}',
                current_timestamp()
            {%- if succeeded %}
            from (
                {%- if role == 'windows' %}
                select
                    count_if({{ checked_partitions }}) as windows_checked,
                    count_if(invocation_id = '{{ invocation_id }}') as rows_written,
                    array_sort(collect_set(if(invocation_id = '{{ invocation_id }}', partition_start, null)))
                        as partitions_rewritten
                from {{ target }}
                {{ '' if built_from_scratch else 'where ' ~ checked_partitions }}
                {%- elif role == 'history' %}
                select count(*) as rows_written
                from {{ target }}
                where dbt_valid_from = {{ late_data_run_time() }}
                    and {{ 'true' if built_from_scratch else checked_partitions }}
                {%- else %}
                select count(*) as rows_written
                from {{ target }}
                where invocation_id = '{{ invocation_id }}'
                {%- endif %}
            ) as written
            {%- endif %}
        {%- endset -%}
        {%- do audit_rows.append(audit_row) -%}
    {%- endfor -%}
    {%- do adapter.execute('reset ' ~ late_data_last_run_times_conf_key()) -%}
    {#- One insert, so one table commit per invocation however many models ran. -#}
    {%- if audit_rows -%}
        {%- call statement('record_runs', fetch_result=false) -%}
            insert into {{ late_data_run_audit_relation() }}
            {{ audit_rows | join('\nunion all\n') }}
        {%- endcall -%}
    {%- endif -%}
{% endmacro %}
