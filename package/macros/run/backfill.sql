{% macro backfill() %}
    {#- The var `backfill` ({from, to, include_too_late}) as a dict of datetimes, or none. -#}
    {%- set raw = var('backfill', none) -%}
    {%- if raw is none -%}{{ return(none) }}{%- endif -%}
    {%- if raw is not mapping or 'from' not in raw or 'to' not in raw -%}
        {%- do exceptions.raise_compiler_error(
            "var backfill must be {from: 'YYYY-MM-DD HH:MM:SS', to: '...', include_too_late: true|false}, not " ~ raw
        ) -%}
    {%- endif -%}
    {%- set backfill = {
        'from': late_data.parse_time(raw['from'], 'backfill.from'),
        'to': late_data.parse_time(raw['to'], 'backfill.to'),
        'include_too_late': raw.get('include_too_late', false) in [true, 'true', 'True', 1],
    } -%}
    {%- if backfill['to'] <= backfill['from'] -%}
        {%- do exceptions.raise_compiler_error("var backfill: 'to' must be after 'from'") -%}
    {%- endif -%}
    {{- return(backfill) -}}
{% endmacro %}
