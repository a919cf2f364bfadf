{% macro run_mode(pipeline) %}
    {#- How a pipeline's result reads its versions in this run, as {mode, previous_run_time,
        repairs}: 'rebuild' (first build or --full-refresh: every version), 'delta' (a scheduled
        run: the arrivals since its previous run and the versions they can affect) or 'recompute'
        (reconcile, backfill, a result whose previous run the audit does not know: every version of
        the checked range, compared with what is stored). previous_run_time: the run its stored state reflects
        (none on rebuilds and backfills); repairs: a reconciliation, which counts the windows it
        repairs. Worked out once per invocation. -#}
    {%- set state = late_data.invocation_state().setdefault('run_modes', {}) -%}
    {%- if pipeline.unique_id in state -%}{{ return(state[pipeline.unique_id]) }}{%- endif -%}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- if not late_data.builds_incrementally(pipeline) -%}
        {%- set mode = {'mode': 'rebuild', 'previous_run_time': none, 'repairs': false} -%}
    {%- else -%}
        {%- set run_time = late_data.run_time_value() -%}
        {%- set previous_run_time = late_data.last_run_time(result) -%}
        {%- if previous_run_time is not none and run_time < previous_run_time and not late_data.backfill() -%}
            {%- do exceptions.raise_compiler_error(
                "run_time " ~ run_time ~ " is before the last run of " ~ result.identifier ~ " (" ~ previous_run_time
                ~ "): runs must move forward; rebuild with --full-refresh to start over"
            ) -%}
        {%- endif -%}
        {%- if late_data.backfill() -%}
            {%- set mode = {'mode': 'recompute', 'previous_run_time': none, 'repairs': false} -%}
        {%- elif pipeline.session_gap -%}
            {#- Sessions are recomputed from the versions of every session that can still change
                (late_data.checked_range_after), and compared with what is stored, on every run: a
                reconciliation has nothing to repair. -#}
            {%- set mode = {'mode': 'recompute', 'previous_run_time': previous_run_time, 'repairs': false} -%}
        {%- elif previous_run_time is none or late_data.is_reconciliation() -%}
            {%- set mode = {'mode': 'recompute', 'previous_run_time': previous_run_time, 'repairs': previous_run_time is not none} -%}
        {%- else -%}
            {%- set mode = {'mode': 'delta', 'previous_run_time': previous_run_time, 'repairs': false} -%}
        {%- endif -%}
    {%- endif -%}
    {%- do state.update({pipeline.unique_id: mode}) -%}
    {{- return(mode) -}}
{% endmacro %}
