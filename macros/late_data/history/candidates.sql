{% macro late_data_history_candidates(result_relation) %}
    {#- SQL predicate over `result_relation` selecting the windows a late-data history snapshot
        ({{ this }}) compares in this run (late_data_history_plan): those whose published numbers
        or status changed since the history's last run (computed_at after it: the table format
        skips every file not rewritten since), everything for a new history or a rebuilt result,
        nothing when the result model did not run. -#}
    {%- set plan = late_data_history_plan(result_relation) -%}
    {%- if plan.scope == 'since' -%}
        {{- return('computed_at > ' ~ late_data_timestamp_literal(plan.since)) -}}
    {%- endif -%}
    {{- return({'all': 'true', 'none': 'false'}[plan.scope]) -}}
{% endmacro %}


{% macro late_data_history_plan(result_relation=none) %}
    {#- How a late-data history snapshot ({{ this }}) brings itself up to date with its result model,
        worked out once per run (the staging reads it again), as {scope, since, catching_up,
        vanished, partitions}:
        - 'since': the windows whose published numbers or status changed after the history's last
          run (`since`), and the windows that vanished since: `vanished`, those this invocation's
          run of the result model found, and when `catching_up` (the history missed a run of the
          result model: its snapshot failed or was not selected) those the audit records;
        - 'all': the history is new or its last run unknown, the result was rebuilt in this
          invocation, or this invocation recovers an interrupted run: every window;
        - 'none': the result model did not run since the history's last run.
        `partitions`: the (time partition, series bucket) pairs the result model rewrote in this
        invocation, where every change of a 'since' run that is not catching up lies; none otherwise.
        A failed snapshot loses nothing: the result model holds its next run until the history has
        recorded what it published (late_data_histories_behind). -#}
    {%- set state = late_data_invocation_state() -%}
    {%- set key = 'history_plan:' ~ this.identifier -%}
    {%- if key in state or result_relation is none -%}
        {{- return(state.get(key, {'scope': 'all', 'since': none, 'catching_up': false, 'vanished': [], 'partitions': none})) -}}
    {%- endif -%}
    {%- set written = late_data_written(result_relation) if execute else none -%}
    {%- set history_last = late_data_last_run(this).get('any_run_time') if execute else none -%}
    {%- set result_last = late_data_last_run(result_relation).get('any_run_time') if execute else none -%}
    {%- set catching_up = history_last is not none and result_last is not none and history_last < result_last -%}
    {#- A run that recovers an interrupted one compares every window: the interrupted run's writes
        (published windows, and windows it found vanished, which no audit row lists) are in the
        result table but were never recorded here. -#}
    {%- set recovering = execute and late_data_interrupted_run() is not none -%}
    {%- if not execute or history_last is none or not late_data_relation_exists(this) or recovering
        or (written and written.mode == 'rebuild') -%}
        {%- set plan = {'scope': 'all', 'since': history_last, 'catching_up': history_last is not none, 'vanished': [], 'partitions': none} -%}
    {%- elif written is none and not catching_up -%}
        {%- set plan = {'scope': 'none', 'since': history_last, 'catching_up': false, 'vanished': [], 'partitions': none} -%}
    {%- else -%}
        {%- set plan = {
            'scope': 'since', 'since': history_last, 'catching_up': catching_up,
            'vanished': (written or {}).get('vanished', []),
            'partitions': none if catching_up else (written or {}).get('partitions', []),
        } -%}
    {%- endif -%}
    {%- if execute -%}{%- do state.update({key: plan}) -%}{%- endif -%}
    {{- return(plan) -}}
{% endmacro %}


{% macro late_data_histories_behind(result) %}
    {#- The late-data history snapshots of `result` (a result model's relation) selected in this
        invocation that missed a run of it (the history's last successful run is older than the
        result's): the result model holds its run so they can record what it published, exactly,
        before it moves on. -#}
    {%- set behind = [] -%}
    {%- set result_id = late_data_model_node(result).unique_id -%}
    {%- set result_last = late_data_last_run(result).get('any_run_time') -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'snapshot' and 'late_data_history' in node.tags
        and node.unique_id in selected_resources and result_id in node.depends_on.nodes -%}
        {%- set history_last = late_data_last_run(api.Relation.create(identifier=node.alias)).get('any_run_time') -%}
        {%- if result_last is not none and history_last is not none and history_last < result_last -%}
            {%- do behind.append(node.name) -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(behind) -}}
{% endmacro %}


{% macro late_data_window_key(key_columns) %}
    {#- The text key of a window, e.g. location|window_start: the history snapshots' unique key and
        how the audit names vanished windows. -#}
    concat_ws('|', {% for column in key_columns %}cast({{ column }} as string){{ ', ' if not loop.last }}{% endfor %})
{%- endmacro %}


{% macro late_data_history_table_properties() %}
    {#- Table properties of a late-data history. Closing a version rewrites the small files of the
        open versions of the pairs a run changed (copy-on-write), rather than adding a delete file
        per pair and run (merge-on-read, deletion vectors): those piled up between maintenance
        runs, and every merge read them all (4 to 8 s per run at 100 heavy series, growing run
        after run, against a steady 2.5 s; bench/profile.md). -#}
    {%- if env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') == 'iceberg' -%}
        {{- return({
            'format-version': '2',
            'write.merge.mode': 'copy-on-write',
            'write.update.mode': 'copy-on-write',
            'write.delete.mode': 'copy-on-write',
        }) -}}
    {%- endif -%}
    {{- return({'delta.enableDeletionVectors': 'false'}) -}}
{% endmacro %}
