{% macro late_data_run_time_value() %}
    {#- The run's moment as a naive UTC datetime: var('run_time'), else the invocation start. -#}
    {%- set raw = var('run_time', none) -%}
    {%- if raw is none or raw == '' -%}
        {%- do return(run_started_at.replace(tzinfo=none, microsecond=0)) -%}
    {%- endif -%}
    {%- do return(late_data_parse_time(raw, 'run_time')) -%}
{% endmacro %}


{% macro late_data_string_literal(text) %}
    {#- A Spark SQL string literal for `text`: backslashes and quotes escaped (Spark reads
        backslash escapes in literals), so any text, a path or a name, stays one literal. -#}
    {{- return("'" ~ text | string | replace("\\", "\\\\") | replace("'", "\\'") ~ "'") -}}
{% endmacro %}


{% macro late_data_timestamp_literal(moment) %}
    {{- return("timestamp'" ~ moment.strftime('%Y-%m-%d %H:%M:%S') ~ "'") -}}
{% endmacro %}


{% macro late_data_run_time() %}
    {{- return(late_data_timestamp_literal(late_data_run_time_value())) -}}
{% endmacro %}


{% macro late_data_parse_time(raw, name) %}
    {#- A naive UTC datetime from 'YYYY-MM-DD[ HH:MM[:SS[.ffffff]]][+HH:MM|Z]'; a compile error naming `name` otherwise. -#}
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
            "var " ~ name ~ "='" ~ raw ~ "' " ~ problem ~ ": pass it as 'YYYY-MM-DD HH:MM:SS' (UTC)."
        ) -%}
    {%- endif -%}
    {%- set parsed = modules.datetime.datetime.fromisoformat(text) -%}
    {%- if parsed.tzinfo is not none -%}
        {%- set parsed = parsed.astimezone(modules.datetime.timezone.utc).replace(tzinfo=none) -%}
    {%- endif -%}
    {{- return(parsed) -}}
{% endmacro %}


{% macro late_data_backfill() %}
    {#- The var `backfill` ({from, to, include_too_late}) as a dict of datetimes, or none. -#}
    {%- set raw = var('backfill', none) -%}
    {%- if raw is none -%}{{ return(none) }}{%- endif -%}
    {%- if raw is not mapping or 'from' not in raw or 'to' not in raw -%}
        {%- do exceptions.raise_compiler_error(
            "var backfill must be {from: 'YYYY-MM-DD HH:MM:SS', to: '...', include_too_late: true|false}, not " ~ raw
        ) -%}
    {%- endif -%}
    {%- set backfill = {
        'from': late_data_parse_time(raw['from'], 'backfill.from'),
        'to': late_data_parse_time(raw['to'], 'backfill.to'),
        'include_too_late': raw.get('include_too_late', false) in [true, 'true', 'True', 1],
    } -%}
    {%- if backfill['to'] <= backfill['from'] -%}
        {%- do exceptions.raise_compiler_error("var backfill: 'to' must be after 'from'") -%}
    {%- endif -%}
    {{- return(backfill) -}}
{% endmacro %}


{% macro late_data_reconcile() %}
    {#- Whether this run recomputes its checked windows from raw and repairs any the arrival-driven
        path got wrong: var `reconcile`, or a previous run that was interrupted (late_data_interrupted_run):
        its tables may hold part of what it wrote without an audit row saying so, and adding the
        arrivals since the last audited run on top would count some twice. -#}
    {%- set raw = var('reconcile', false) -%}
    {%- if raw not in [true, false, 'true', 'false', 'True', 'False', 1, 0, none] -%}
        {%- do exceptions.raise_compiler_error("var reconcile must be true or false, not " ~ raw) -%}
    {%- endif -%}
    {{- return(raw in [true, 'true', 'True', 1] or late_data_interrupted_run() is not none) -}}
{% endmacro %}
