{% macro is_reconciliation() %}
    {#- Whether this run recomputes its checked windows from the versions and repairs any the
        arrival-driven path got wrong: var `reconcile`, a reconciliation that is due
        (late_data.reconciliation_due), or a previous run that was interrupted
        (late_data.interrupted_run): its tables may hold part of what it wrote without an audit
        row saying so, and adding the arrivals since the last audited run on top would count some
        twice. -#}
    {%- set raw = var('reconcile', false) -%}
    {%- if raw not in [true, false, 'true', 'false', 'True', 'False', 1, 0, none] -%}
        {%- do exceptions.raise_compiler_error("var reconcile must be true or false, not " ~ raw) -%}
    {%- endif -%}
    {{- return(raw in [true, 'true', 'True', 1] or late_data.reconciliation_due() or late_data.interrupted_run() is not none) -}}
{% endmacro %}


{% macro reconcile_every_seconds() %}
    {#- How often a scheduled run turns itself into a reconciliation (var `reconcile_every_seconds`,
        project-wide; 0, the default: only when asked). -#}
    {{- return(late_data.whole_number(late_data.var_setting('reconcile_every_seconds'), 'var reconcile_every_seconds')) -}}
{% endmacro %}


{% macro reconciliation_due() %}
    {#- With var reconcile_every_seconds above 0, whether a scheduled run of the pipelines selected
        now is a reconciliation by itself: the run time is at least that long after the last
        reconciliation (or full refresh, or first build) of one of their results, from the audit
        (late_data.last_runs, no query of its own). So plain dbt on cron reconciles as the warm
        scheduler does, with no second cron line. Never in a backfill, a full refresh or
        `late-data explain`. -#}
    {%- set every = late_data.reconcile_every_seconds() -%}
    {%- if every == 0 or not execute or flags.WHICH not in ('run', 'build') or flags.FULL_REFRESH
        or late_data.backfill() or late_data.is_explain() -%}
        {{- return(false) -}}
    {%- endif -%}
    {%- set run_time = late_data.run_time_value() -%}
    {%- for node in late_data.filter_nodes('pipeline', true) -%}
        {%- set last = late_data.last_runs().get(node.alias, {}) -%}
        {%- set since = last.get('reconciled_run_time') or last.get('first_run_time') -%}
        {%- if since is not none and (run_time - since).total_seconds() >= every -%}
            {{- return(true) -}}
        {%- endif -%}
    {%- endfor -%}
    {{- return(false) -}}
{% endmacro %}
