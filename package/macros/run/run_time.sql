{% macro run_time_value() %}
    {#- The run's moment as a naive UTC datetime: var('run_time'), else the environment's
        LATE_DATA_RUN_TIME, else the invocation start. The environment variable is for a scheduler
        that starts plain dbt with its own clock (a replay, the benchmark): unlike a var, it leaves
        dbt's partial parse usable from one run to the next. -#}
    {%- set raw = var('run_time', none) -%}
    {%- if raw is not none and raw != '' -%}
        {%- do return(late_data.parse_time(raw, 'run_time')) -%}
    {%- endif -%}
    {%- set raw = env_var('LATE_DATA_RUN_TIME', '') -%}
    {%- if raw != '' -%}
        {%- do return(late_data.parse_time(raw, 'LATE_DATA_RUN_TIME', kind='environment variable')) -%}
    {%- endif -%}
    {%- do return(run_started_at.replace(tzinfo=none, microsecond=0)) -%}
{% endmacro %}


{% macro run_time() %}
    {{- return(late_data.timestamp_literal(late_data.run_time_value())) -}}
{% endmacro %}


{% macro parse_time(raw, name, kind='var') %}
    {#- A naive UTC datetime from 'YYYY-MM-DD[ HH:MM[:SS[.ffffff]]][+HH:MM|Z]'; a compile error naming
        the `kind` of setting (var, environment variable) and its `name` otherwise. -#}
    {%- set text = raw | string | trim -%}
    {%- if text.endswith('Z') -%}{%- set text = text[:-1] -%}{%- endif -%}
    {%- set parts = modules.re.match('^([0-9]{4})-([0-9]{2})-([0-9]{2})([ T]([0-9]{2}):([0-9]{2})(:([0-9]{2})([.][0-9]+)?)?)?([+-]([0-9]{2}):([0-9]{2}))?$', text) -%}
    {%- set problem = none if parts else "is not a timestamp" -%}
    {%- if parts -%}
        {%- set year, month, day = parts.group(1) | int, parts.group(2) | int, parts.group(3) | int -%}
        {%- if month < 1 or month > 12 -%}
            {%- set problem = "has month " ~ month ~ " (1 to 12)" -%}
        {%- elif day < 1 or day > (modules.datetime.date(year + month // 12, month % 12 + 1, 1) - modules.datetime.timedelta(days=1)).day -%}
            {%- set problem = "has day " ~ day ~ ", not a day of " ~ year ~ "-" ~ parts.group(2) -%}
        {%- elif (parts.group(5) or '0') | int > 23 or (parts.group(6) or '0') | int > 59 or (parts.group(8) or '0') | int > 59 -%}
            {%- set problem = "has a time of day outside 00:00:00 to 23:59:59" -%}
        {%- elif (parts.group(11) or '0') | int > 23 or (parts.group(12) or '0') | int > 59 -%}
            {%- set problem = "has a UTC offset outside -23:59 to +23:59" -%}
        {%- endif -%}
    {%- endif -%}
    {%- if problem -%}
        {%- do exceptions.raise_compiler_error(
            kind ~ " " ~ name ~ "='" ~ raw ~ "' " ~ problem ~ ": pass it as 'YYYY-MM-DD HH:MM:SS' (UTC)."
        ) -%}
    {%- endif -%}
    {%- set parsed = modules.datetime.datetime.fromisoformat(text) -%}
    {%- if parsed.tzinfo is not none -%}
        {%- set parsed = parsed.astimezone(modules.datetime.timezone.utc).replace(tzinfo=none) -%}
    {%- endif -%}
    {{- return(parsed) -}}
{% endmacro %}
