{% macro history_closing(history, pipeline) %}
    {#- How a late-data history snapshot (`history`, a relation) brings itself up to date with its
        pipeline's result, worked out once per run, as {scope, since, catching_up, partitions,
        base, recorded_before}:
        - scope 'since': the result ran since the history's last run (`since`); 'all': the
          history is new or its last run unknown, the result was rebuilt in this invocation, or
          this invocation recovers an interrupted run; 'none': the result did not run since;
        - `base`: the temporal clause (`timestamp as of` or `version as of`) that reads the result
          as the history last saw it: the windows the result has published again or lost since
          are the versions to close. None when there is nothing to close (a new history, a result
          that wrote nothing). When this run's write of the result is all there is to record,
          the moment before that write; when the history missed a run of the result
          (`catching_up`: its snapshot failed or was not selected) or this invocation recovers an
          interrupted run (`recorded_before`: it may have closed some versions already), the
          result's version when the history last recorded (late_data.history_seen);
        - `partitions`: the (time partition, series bucket) pairs the result rewrote in this
          invocation, where every version a 'since' run that is not catching up closes lies;
          none otherwise.
        A failed snapshot loses nothing: the result holds its next run until the history has
        recorded what it published (late_data.histories_behind). -#}
    {%- set state = late_data.invocation_state() -%}
    {%- set key = 'history_closing:' ~ history.identifier -%}
    {%- if key in state -%}{{ return(state[key]) }}{%- endif -%}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- set written = late_data.written(result) -%}
    {%- set history_last = late_data.last_run(history).get('any_run_time') -%}
    {%- set result_last = late_data.last_run(result).get('any_run_time') -%}
    {%- set catching_up = history_last is not none and result_last is not none and history_last < result_last -%}
    {%- set recovering = late_data.interrupted_run() is not none -%}
    {%- set known = history_last is not none and late_data.relation_exists(late_data.closed_versions_relation(history)) -%}
    {%- if not known or recovering or (written and written.mode == 'rebuild') -%}
        {%- set closing = {'scope': 'all', 'since': history_last, 'catching_up': catching_up, 'partitions': none} -%}
    {%- elif written is none and not catching_up -%}
        {%- set closing = {'scope': 'none', 'since': history_last, 'catching_up': false, 'partitions': none} -%}
    {%- else -%}
        {%- set closing = {
            'scope': 'since', 'since': history_last, 'catching_up': catching_up,
            'partitions': none if catching_up else (written or {}).get('partitions', []),
        } -%}
    {%- endif -%}
    {%- set read_at = (written or {}).get('read_at') -%}
    {%- do closing.update({'recorded_before': known and (catching_up or recovering)}) -%}
    {%- if not known or closing.scope == 'none' -%}
        {%- do closing.update({'base': none}) -%}
    {%- elif closing.recorded_before -%}
        {%- do closing.update({'base': late_data.history_seen(history, pipeline)}) -%}
    {%- else -%}
        {%- do closing.update({'base': none if read_at is none else 'timestamp as of ' ~ late_data.exact_timestamp_literal(read_at)}) -%}
    {%- endif -%}
    {%- do state.update({key: closing}) -%}
    {{- return(closing) -}}
{% endmacro %}
