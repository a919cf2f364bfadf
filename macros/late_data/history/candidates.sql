{% macro late_data_history_candidates(result_relation) %}
    {#- SQL predicate over `result_relation` selecting the windows a late-data history snapshot
        ({{ this }}) compares in this run (late_data_history_plan): the windows whose published
        numbers or status this invocation's run of the result model changed (computed_at = run
        time: the table format skips every file not rewritten), everything when the history must
        catch up, nothing when there is nothing new. -#}
    {%- set plan = late_data_history_plan(result_relation) -%}
    {{- return({'changes': 'computed_at = ' ~ late_data_run_time(), 'all': 'true', 'none': 'false'}[plan.scope]) -}}
{% endmacro %}


{% macro late_data_history_plan(result_relation=none) %}
    {#- How a late-data history snapshot ({{ this }}) brings itself up to date with its result model,
        as {scope, vanished, checked_from, since}, worked out once per run (the staging reads it again):
        - 'changes': the result model ran in this invocation and the history recorded every earlier
          run of it: compare only the windows it changed, and close the versions of the windows it
          found vanished (`vanished`, window keys);
        - 'all': the history is new, or missed a run of the result model (a failed or skipped
          snapshot), or the result was rebuilt in this invocation: compare every window;
        - 'none': the result model did not run since the history's last run. -#}
    {%- set state = late_data_invocation_state() -%}
    {%- set key = 'history_plan:' ~ this.identifier -%}
    {%- if key in state or result_relation is none -%}
        {{- return(state.get(key, {'scope': 'all', 'vanished': [], 'checked_from': none, 'since': none})) -}}
    {%- endif -%}
    {%- set written = late_data_written(result_relation) if execute else none -%}
    {%- set history_last = late_data_last_run(this).get('any_run_time') if execute else none -%}
    {%- set result_last = late_data_last_run(result_relation).get('any_run_time') if execute else none -%}
    {%- set behind = history_last is none or (result_last is not none and history_last < result_last) -%}
    {%- if not execute or not late_data_relation_exists(this) or behind or (written and written.mode == 'rebuild') -%}
        {%- set plan = {'scope': 'all', 'vanished': [], 'checked_from': none, 'since': history_last} -%}
    {%- elif written is none -%}
        {%- set plan = {'scope': 'none', 'vanished': [], 'checked_from': none, 'since': history_last} -%}
    {%- else -%}
        {%- set plan = {
            'scope': 'changes', 'vanished': written.get('vanished', []), 'checked_from': written.get('checked_from'),
            'since': history_last,
        } -%}
    {%- endif -%}
    {%- if execute -%}{%- do state.update({key: plan}) -%}{%- endif -%}
    {{- return(plan) -}}
{% endmacro %}


{% macro late_data_window_key(key_columns) %}
    {#- The text key of a window, e.g. location|window_start: the history snapshots' unique key and
        how the audit names vanished windows. -#}
    concat_ws('|', {% for column in key_columns %}cast({{ column }} as string){{ ', ' if not loop.last }}{% endfor %})
{%- endmacro %}


{% macro late_data_relation_exists(relation) %}
    {{- return(execute and load_relation(relation) is not none) -}}
{% endmacro %}
