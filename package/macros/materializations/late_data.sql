{% materialization late_data, adapter='spark' %}
    {#- A late-data pipeline's result model. The model's SQL selects the source's versions (event
        key, series key, event_time, ingested_at and the measures' columns); its config's
        meta.late_data says how they are windowed and measured (late_data.pipeline). One run:
        1. the versions that arrived since the previous run are appended to its versions table
           (every version on a first build or --full-refresh), each quarantined with a reason
           when it cannot be counted;
        2. the windows whose checksums changed are worked out from the versions and written: only
           the (time partition, series bucket) pairs that hold one are replaced, in one commit
           (the version chain staged first when the too-late listing reads the same one:
           late_data.shared_chain);
        3. the quarantine and lateness views over the versions table are there.
        Its history snapshot (strategy late_data.history) records what it published and lists
        the versions that came too late. `late-data explain` (var late_data_explain) logs the
        SQL instead and writes nothing. -#}
    {%- set pipeline = late_data.pipeline() -%}
    {%- do late_data.require_hooks() -%}
    {%- set columns = late_data.query_columns(sql) -%}
    {%- set aggregates = late_data.aggregates(pipeline, columns) -%}
    {%- set incremental = late_data.builds_incrementally(pipeline) -%}
    {%- set versions = late_data.pipeline_relation(pipeline, 'versions') -%}
    {#- A pipeline with dimensions tells a delivery apart by its own stamp, source_ingested_at: a
        version a dimension change made is stamped with the run that made it. -#}
    {%- set version_columns = columns | map(attribute=0) | reject('equalto', 'quarantine_reason')
        | reject('equalto', 'ingested_at' if pipeline.dimensions else '') | list
        + (['source_ingested_at'] if pipeline.dimensions else []) -%}
    {%- set new_versions -%}
        with delivered as (
            {{ late_data.delivered_versions(pipeline, sql, columns) }}
        )
        {{ late_data.new_versions(pipeline, 'delivered', version_columns, incremental) }}
    {%- endset -%}
    {%- if late_data.backfill() and incremental and not late_data.is_explain() -%}
        {%- do late_data.require_loaded(pipeline, sql) -%}
    {%- endif -%}
    {%- if pipeline.dimensions and not late_data.is_explain() and not late_data.backfill() -%}
        {%- do late_data.apply_dimensions(pipeline, sql, columns) -%}
    {%- endif -%}
    {#- The plan is chosen once this run's arrivals are known: they are loaded first. -#}
    {%- if late_data.is_explain() -%}
        {%- do late_data.explain_step('versions', versions, new_versions) -%}
        {%- if incremental -%}
            {%- do late_data.record_write(versions, {'rows_written': run_query('select count(*) from (' ~ new_versions ~ ')').columns[0].values()[0] | int}) -%}
        {%- endif -%}
    {%- elif incremental -%}
        {%- do late_data.write_staged(versions, new_versions, 'append') -%}
    {%- endif -%}
    {%- set plan = late_data.count_plan(pipeline, 'windows') -%}
    {%- set chain = late_data.shared_chain(pipeline, plan) -%}
    {%- do late_data.record_write(this, {'plan': late_data.plan_label(plan, chain)}) -%}
    {%- set windows = late_data.result_query(pipeline, aggregates, plan, helper_columns=incremental, chain=chain) -%}
    {%- if chain -%}
        {%- do late_data.stage_chain(pipeline, chain, late_data.version_counts(pipeline, plan)) -%}
    {%- endif -%}
    {%- if late_data.is_explain() -%}
        {%- do late_data.explain_step('windows', this, windows) -%}
        {%- do store_raw_result('main', message='OK (explained)', code='OK', rows_affected=0) -%}
        {{- return({'relations': []}) -}}
    {%- endif -%}
    {%- if incremental -%}
        {%- do late_data.write_staged(this, windows, 'replace', late_data.key_columns(pipeline), pipeline.dimensions | length > 0) -%}
    {%- else -%}
        {%- do late_data.rebuild_table(versions, new_versions, pipeline.file_format, statement_name='rebuild_versions') -%}
        {%- do late_data.record_rebuild(versions, 'versions') -%}
        {#- The result as it stands before it is replaced: what its history closes. -#}
        {%- set read_at = run_query('select ' ~ late_data.exact_time('current_timestamp()')).rows[0][0] if late_data.relation_exists(this) else none -%}
        {%- do late_data.rebuild_table(this, windows, pipeline.file_format, ['partition_start', 'series_bucket']) -%}
        {%- do late_data.record_rebuild(this, 'windows') -%}
        {%- do late_data.record_write(this, {'read_at': read_at}) -%}
        {%- do apply_grants(this, config.get('grants'), false) -%}
        {%- do persist_docs(this, model) -%}
    {%- endif -%}
    {%- do late_data.ensure_view(late_data.pipeline_relation(pipeline, 'quarantine'), late_data.quarantine_select(pipeline), replace=not incremental) -%}
    {%- do late_data.ensure_view(late_data.pipeline_relation(pipeline, 'lateness'), late_data.lateness(pipeline), replace=not incremental) -%}
    {{- return({'relations': [this]}) -}}
{% endmaterialization %}


{% macro ensure_view(relation, sql, replace=false) %}
    {#- A companion view: created when it is missing, dropped and created again when `replace` (its
        pipeline was rebuilt: its settings or columns may have changed). Not `create or replace`:
        with Iceberg's session catalog that keeps the old SQL text (apache/iceberg#15490). -#}
    {%- if relation is none -%}{{ return('') }}{%- endif -%}
    {%- set existing = load_relation(relation) -%}
    {%- if existing is not none and not replace -%}{{ return('') }}{%- endif -%}
    {%- if existing is not none -%}
        {%- do adapter.drop_relation(existing) -%}
    {%- endif -%}
    {%- do adapter.execute('create view ' ~ relation ~ ' as ' ~ sql) -%}
    {%- do late_data.forget_relation(relation) -%}
{% endmacro %}


{% macro explain_step(step, relation, sql) %}
    {#- `late-data explain`: one step's SQL, logged for the command to collect, with the plan its
        node's result takes in this run (late_data.plan_label). -#}
    {%- set plan = (late_data.written(this) or {}).get('plan') if model.resource_type == 'model' else none -%}
    {%- do log('late-data explain ' ~ tojson({'node': model.name, 'step': step, 'relation': relation.render(), 'sql': sql, 'plan': plan}), info=true) -%}
{% endmacro %}


{% macro plan_label(plan, chain) %}
    {#- How a result reads its versions in this run, for the audit's `plan` and `late-data explain`:
        the mode (rebuild, recompute, delta), for delta how the arrived events are looked up
        (broadcast or shuffle) and whether the version chain is shared with the too-late listing. -#}
    {%- set parts = [plan.mode] -%}
    {%- if plan.mode == 'delta' -%}
        {%- do parts.append(('broadcast' if plan.broadcast else 'shuffle') ~ ' lookup') -%}
    {%- endif -%}
    {%- if chain -%}
        {%- do parts.append('chain shared with the too-late listing') -%}
    {%- endif -%}
    {{- return(parts | join(', ')) -}}
{% endmacro %}


{% macro require_hooks() %}
    {#- A late-data node needs the package's hooks in the project (dbt_project.yml: on-run-start
        late_data.on_run_start(), on-run-end late_data.on_run_end(results)): they check the
        settings and sources first and write the audit, which every run reads. -#}
    {%- if not late_data.invocation_state().get('started') -%}
        {%- do exceptions.raise_compiler_error(
            "late-data: " ~ model.name ~ " needs the late_data hooks in dbt_project.yml: on-run-start calling"
            ~ " late_data.on_run_start() and on-run-end calling late_data.on_run_end(results) (docs/your-own-pipeline.md)"
        ) -%}
    {%- endif -%}
{% endmacro %}
