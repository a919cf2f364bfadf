{% macro late_data_run_time_value() %}
    {#- The run's moment as a naive UTC datetime: var('run_time'), else the invocation start. -#}
    {%- set raw = var('run_time', none) -%}
    {%- if raw is none or raw == '' -%}
        {%- do return(run_started_at.replace(tzinfo=none, microsecond=0)) -%}
    {%- endif -%}
    {%- set text = raw | string | trim -%}
    {%- if text.endswith('Z') -%}{%- set text = text[:-1] -%}{%- endif -%}
    {%- if not modules.re.match('^[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?)?([+-][0-9]{2}:[0-9]{2})?$', text) -%}
        {%- do exceptions.raise_compiler_error(
            "var run_time='" ~ raw ~ "' is not a timestamp: pass it as 'YYYY-MM-DD HH:MM:SS' (UTC)."
        ) -%}
    {%- endif -%}
    {%- set parsed = modules.datetime.datetime.fromisoformat(text) -%}
    {%- if parsed.tzinfo is not none -%}
        {%- set parsed = parsed.astimezone(modules.datetime.timezone.utc).replace(tzinfo=none) -%}
    {%- endif -%}
    {%- do return(parsed) -%}
{% endmacro %}


{% macro late_data_timestamp_literal(moment) %}
    {{- return("timestamp'" ~ moment.strftime('%Y-%m-%d %H:%M:%S') ~ "'") -}}
{% endmacro %}


{% macro late_data_run_time() %}
    {{- return(late_data_timestamp_literal(late_data_run_time_value())) -}}
{% endmacro %}
