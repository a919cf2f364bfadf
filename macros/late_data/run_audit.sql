{% macro late_data_run_audit_relation() %}
    {{- return(api.Relation.create(schema=target.schema, identifier='late_data_run_audit', type='table')) -}}
{% endmacro %}


{% macro late_data_create_run_audit() %}
    {#- For on-run-start: the audit table that every late-data model run appends to. -#}
    create table if not exists {{ late_data_run_audit_relation() }} (
        invocation_id string,
        model string,
        model_role string,
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


{% macro late_data_last_run_time(target) %}
    {#- The run time of the last successful run of `target`, or none. -#}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set query -%}
        select max(run_time) from {{ late_data_run_audit_relation() }}
        where model = '{{ target.identifier }}' and outcome = 'success'
    {%- endset -%}
    {{- return(run_query(query).columns[0].values()[0]) -}}
{% endmacro %}


{% macro late_data_record_runs(results) %}
    {#- For on-run-end: one audit row per late-data model (tag `late_data`) that ran; models
        tagged `too_late_rows` list rows that arrived too late, so their rows written are those. Rows written
        and partitions rewritten are read back from the rows stamped with this invocation id;
        windows checked is the number of windows in the partitions the run compared. -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- for result in results if result.node.resource_type == 'model' and 'late_data' in result.node.tags -%}
        {%- set target = api.Relation.create(schema=result.node.schema, identifier=result.node.alias, type='table') -%}
        {%- set succeeded = result.status == 'success' -%}
        {%- set partitioned = 'partition_start' in (result.node.config.partition_by or []) -%}
        {%- set checked_from = late_data_checked_from(target) -%}
        {%- call statement('record_run', fetch_result=false) -%}
            insert into {{ late_data_run_audit_relation() }}
            select
                '{{ invocation_id }}',
                '{{ result.node.alias }}',
                '{{ 'too_late_rows' if 'too_late_rows' in result.node.tags else 'windows' }}',
                {{ late_data_run_time() }},
                {{ var('late_window_seconds') }},
                {{ checked_from if partitioned else 'null' }},
                {%- if succeeded and partitioned %}
                (select count(*) from {{ target }} where partition_start >= {{ checked_from }}),
                written.partitions_rewritten,
                {%- else %}
                null,
                null,
                {%- endif %}
                {{ 'written.rows_written' if succeeded else 'null' }},
                {{ result.execution_time }},
                '{{ result.status }}',
                current_timestamp()
            {%- if succeeded %}
            from (
                select
                    count(*) as rows_written,
                    {{ 'array_sort(collect_set(partition_start))' if partitioned else 'null' }} as partitions_rewritten
                from {{ target }}
                where invocation_id = '{{ invocation_id }}'
            ) as written
            {%- endif %}
        {%- endcall -%}
    {%- endfor -%}
{% endmacro %}
