{% macro history_plan(history, pipeline) %}
    {#- How a late-data history snapshot (`history`, a relation) brings itself up to date with its
        pipeline's result, worked out once per run, as {scope, since, catching_up, vanished,
        partitions}:
        - 'since': the windows whose published numbers or status changed after the history's last
          run (`since`), and the windows that vanished since: `vanished`, those this invocation's
          run of the result found, and when `catching_up` (the history missed a run of the result:
          its snapshot failed or was not selected) those the audit records;
        - 'all': the history is new or its last run unknown, the result was rebuilt in this
          invocation, or this invocation recovers an interrupted run: every window;
        - 'none': the result did not run since the history's last run.
        `partitions`: the (time partition, series bucket) pairs the result rewrote in this
        invocation, where every change of a 'since' run that is not catching up lies; none
        otherwise. A failed snapshot loses nothing: the result holds its next run until the
        history has recorded what it published (late_data.histories_behind). -#}
    {%- set state = late_data.invocation_state() -%}
    {%- set key = 'history_plan:' ~ history.identifier -%}
    {%- if key in state -%}{{ return(state[key]) }}{%- endif -%}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- set written = late_data.written(result) -%}
    {%- set history_last = late_data.last_run(history).get('any_run_time') -%}
    {%- set result_last = late_data.last_run(result).get('any_run_time') -%}
    {%- set catching_up = history_last is not none and result_last is not none and history_last < result_last -%}
    {#- A run that recovers an interrupted one compares every window: the interrupted run's writes
        (published windows, and windows it found vanished, which no audit row lists) are in the
        result table but were never recorded here. -#}
    {%- set recovering = late_data.interrupted_run() is not none -%}
    {%- if history_last is none or not late_data.relation_exists(history) or recovering
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
    {%- do state.update({key: plan}) -%}
    {{- return(plan) -}}
{% endmacro %}


{% macro history_candidates(history, pipeline) %}
    {#- A select, from a pipeline's result, of the windows its history compares in this run
        (late_data.history_plan): those whose published numbers or status changed since the
        history's last run (computed_at after it: the table format skips every file not rewritten
        since), everything for a new history or a rebuilt result, nothing when the result did not
        run; each with its window_key and the result's columns but the bookkeeping of its writes
        (written_at, the digest, the sums a mean divides). -#}
    {%- set plan = late_data.history_plan(history, pipeline) -%}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- set kept = [] -%}
    {%- for name, type in late_data.known_columns(result)
        if name not in ['written_at', pipeline.digest] + late_data.hidden_sums(pipeline) -%}
        {%- do kept.append(name) -%}
    {%- endfor %}
    select
        {{ late_data.window_key(late_data.key_columns(pipeline)) }} as window_key,
        {{ kept | join(', ') }}
    from {{ result }}
    where {{ {'since': 'computed_at > ' ~ late_data.timestamp_literal(plan.since) if plan.since else 'true', 'all': 'true', 'none': 'false'}[plan.scope] }}
{%- endmacro %}


{% macro check_cols(pipeline) %}
    {#- What makes a new version of a window in its history: any measure or its status. -#}
    {{- return(pipeline.measures | map(attribute='name') | list + ['is_final']) -}}
{% endmacro %}


{% macro histories_behind(pipeline) %}
    {#- The late-data history snapshots of `pipeline` selected in this invocation that missed a run
        of its result (the history's last successful run is older than the result's): the result
        holds its run so they can record what it published, exactly, before it moves on. -#}
    {%- set behind = [] -%}
    {%- set result_last = late_data.last_run(late_data.pipeline_relation(pipeline)).get('any_run_time') -%}
    {%- for node in late_data.pipeline_histories(pipeline, selected_only=true) -%}
        {%- set history_last = late_data.last_run(api.Relation.create(identifier=node.alias)).get('any_run_time') -%}
        {%- if result_last is not none and history_last is not none and history_last < result_last -%}
            {%- do behind.append(node.name) -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(behind) -}}
{% endmacro %}


{% macro history_table_properties(file_format) %}
    {#- Table properties of a late-data history. Closing a version rewrites the small files of the
        open versions of the pairs a run changed (copy-on-write), rather than adding a delete file
        per pair and run (merge-on-read, deletion vectors): those piled up between maintenance
        runs, and every merge read them all (4 to 8 s per run at 100 heavy series, growing run
        after run, against a steady 2.5 s; bench/profile.md). -#}
    {%- if file_format == 'iceberg' -%}
        {{- return({
            'format-version': '2',
            'write.merge.mode': 'copy-on-write',
            'write.update.mode': 'copy-on-write',
            'write.delete.mode': 'copy-on-write',
        }) -}}
    {%- endif -%}
    {{- return({'delta.enableDeletionVectors': 'false'}) -}}
{% endmacro %}


{% macro history_partitioning() %}
    {#- How a late-data history is partitioned: time partition, series bucket and whether a version
        is open, so a run reads and writes only the pairs its result rewrote. -#}
    {{- return(['partition_start', 'series_bucket', 'is_current_version']) -}}
{% endmacro %}
