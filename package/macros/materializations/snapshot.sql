{#- Follows dbt-spark 1.11.0 for every snapshot but the late-data histories, which it hands on
    (python/tests/test_adapter_overrides.py checks the installed materialization against this):
    upstream: dbt-spark spark/macros/materializations/snapshot.sql materialization:snapshot:spark 11b4a58dc34f -#}

{% materialization snapshot, adapter='spark' %}
    {#- dbt-spark's snapshot materialization, except for late-data histories (strategy
        late_data.history): they record each run of their pipeline's result on the runs' own time
        axis (every version valid from the run time that published it, the result row's
        computed_at): a view of the versions closed, appended to a table of their own, and the
        open ones, the result's rows; they keep the pipeline's too-late listing and revisions view. A package cannot override dbt's snapshot
        materialization: the project that installs this one wraps it, returning
        late_data.materialization_snapshot_spark() from a snapshot materialization of its own
        (docs/your-own-pipeline.md). Every other snapshot gets dbt-spark's materialization. -#}
    {%- if not late_data.is_history(model) -%}
        {{- return(dbt.materialization_snapshot_spark()) -}}
    {%- endif -%}
    {%- do late_data.require_hooks() -%}
    {%- do late_data.check_history_config(model) -%}
    {%- set pipeline = late_data.history_pipeline(model) -%}
    {%- set history = this.incorporate(type='view') -%}
    {%- do late_data.check_history_layout(history) -%}
    {%- if late_data.relation_exists(late_data.closed_versions_relation(history)) -%}
        {%- do late_data.record_history(history, pipeline) -%}
    {%- else -%}
        {%- do late_data.build_history(history, pipeline) -%}
    {%- endif -%}
    {%- do late_data.write_listing(pipeline) -%}
    {%- if late_data.is_explain() -%}
        {%- do store_raw_result('main', message='OK (explained)', code='OK', rows_affected=0) -%}
    {%- else -%}
        {%- do late_data.ensure_view(late_data.pipeline_relation(pipeline, 'revisions'), late_data.window_revisions(history, pipeline)) -%}
    {%- endif -%}
    {{- return({'relations': [history]}) -}}
{% endmaterialization %}


{% macro write_listing(pipeline) %}
    {#- A pipeline's too-late listing, kept by its history snapshot's run: the versions that arrived
        since the listing's previous run and could not be applied in full, merged by version_id
        (every version when it is built from scratch; nothing, after one count, when the chain the
        result staged holds no version that arrived after a window's final moment). A backfill lists nothing: it recomputes
        the past; the next scheduled run lists what arrived. -#}
    {%- set listing = late_data.pipeline_relation(pipeline, 'too_late') -%}
    {%- if listing is none or late_data.backfill() -%}{{ return('') }}{%- endif -%}
    {%- set sql = late_data.listing_query(pipeline) -%}
    {%- if late_data.is_explain() -%}
        {%- do late_data.explain_step('too_late', listing, sql) -%}
    {%- elif late_data.listing_since(pipeline) is none -%}
        {%- do late_data.rebuild_table(listing, sql, pipeline.file_format, statement_name='rebuild_listing') -%}
        {%- do late_data.record_rebuild(listing, 'too_late_rows') -%}
    {%- elif late_data.staged_chain(pipeline) and not late_data.has_late_versions(pipeline) -%}
        {#- Most runs: nothing arrived late. One count over the staged chain says so, instead of
            working out and staging an empty listing. -#}
        {%- do late_data.record_write(listing, {'mode': 'merge', 'rows_written': 0, 'lean': true}) -%}
    {%- else -%}
        {%- do late_data.write_staged(listing, sql, 'merge') -%}
    {%- endif -%}
    {%- do late_data.drop_chain(pipeline.unique_id) -%}
{% endmacro %}


{% macro check_history_config(node) %}
    {#- A late-data history configured with a snapshot setting this materialization does not
        implement is refused, naming the setting, rather than have it silently ignored. -#}
    {%- set config = node.config -%}
    {%- if config.get('unique_key') != 'window_key' -%}
        {%- do exceptions.raise_compiler_error(
            "late-data history " ~ node.name ~ ": snapshot setting unique_key=" ~ config.get('unique_key')
            ~ " is not supported; it must be window_key"
        ) -%}
    {%- endif -%}
    {%- if config.get('hard_deletes') not in (none, 'invalidate') -%}
        {%- do exceptions.raise_compiler_error(
            "late-data history " ~ node.name ~ ": snapshot setting hard_deletes=" ~ config.get('hard_deletes')
            ~ " is not supported: a window that vanished (a correction moved its only row) is closed (invalidate)"
        ) -%}
    {%- endif -%}
    {%- set renamed = (config.get('snapshot_meta_column_names') or {}).values() | select | list -%}
    {%- for key in ['dbt_valid_to_current', 'updated_at', 'snapshot_meta_column_names', 'check_cols']
        if (renamed if key == 'snapshot_meta_column_names' else config.get(key)) -%}
        {%- do exceptions.raise_compiler_error(
            "late-data history " ~ node.name ~ ": snapshot setting " ~ key ~ " is not supported: a version opens when"
            ~ " a measure or the status changes, open versions have dbt_valid_to null and is_current_version true,"
            ~ " stamped with the run times"
        ) -%}
    {%- endfor -%}
{% endmacro %}


{% macro snapshot_history_strategy(node, snapshotted_rel, current_rel, model_config, target_exists) %}
    {#- Strategy late_data.history reached through dbt-spark's own snapshot materialization: the
        project does not wrap the snapshot materialization, so the history would be recorded the
        standard way, wrongly. Refused, saying what to add. -#}
    {%- do exceptions.raise_compiler_error(
        "late-data history " ~ node.name ~ " needs the package's snapshot materialization: add to your project the"
        ~ " snapshot materialization that returns late_data.materialization_snapshot_spark() (docs/your-own-pipeline.md)"
    ) -%}
{% endmacro %}
