{% macro late_data_late_window_seconds(sources=none) %}
    {#- The late window of a model, in seconds: the largest late window among the raw source
        tables it reads (var `late_window_seconds_by_source`, falling back to var
        `late_window_seconds`). A window built from several sources is final only when every
        source's rows can no longer arrive in time. -#}
    {%- set by_source = var('late_window_seconds_by_source', {}) or {} -%}
    {%- set seconds = [] -%}
    {%- for source_table in (sources or [none]) -%}
        {%- set configured = by_source.get(source_table, var('late_window_seconds')) if source_table else var('late_window_seconds') -%}
        {#- At least 1 s: with 0 a window would be final the moment it ends, before most of its rows land. -#}
        {%- do seconds.append(late_data_whole_number(configured, 'late_window_seconds' if source_table not in by_source else 'late_window_seconds_by_source.' ~ source_table, minimum=1)) -%}
    {%- endfor -%}
    {{- return(seconds | max) -}}
{% endmacro %}


{% macro late_data_model_late_window_seconds(node_config=none) %}
    {#- The late window of the model being built (or of the node whose config is given), from the
        raw source tables listed in its `meta.late_data_sources`. -#}
    {%- set meta = (node_config or config).get('meta', {}) or {} -%}
    {{- return(late_data_late_window_seconds(meta.get('late_data_sources'))) -}}
{% endmacro %}


{% macro late_data_write_delay_seconds() %}
    {#- How long after its ingested_at stamp a row may become readable in a raw table and still be
        picked up by the next scheduled run (var `write_delay_seconds`). -#}
    {{- return(late_data_whole_number(var('write_delay_seconds'), 'write_delay_seconds')) -}}
{% endmacro %}


{% macro late_data_whole_number(value, name, minimum=0) %}
    {#- `value` as an integer, or a compile error naming the setting. -#}
    {%- if value is none or value is boolean or not modules.re.match('^[0-9]+$', value | string | trim) or (value | int) < minimum -%}
        {%- do exceptions.raise_compiler_error(
            "var " ~ name ~ "=" ~ value ~ " must be a whole number, at least " ~ minimum
        ) -%}
    {%- endif -%}
    {{- return(value | int) -}}
{% endmacro %}


{% macro late_data_source_late_window(source_column, sources) %}
    {#- A SQL expression: the late window, in seconds, of each row's source table named in
        `source_column`, for relations holding rows of several `sources`. -#}
    case {{ source_column }}
    {%- for source_table in sources %}
        when {{ late_data_string_literal(source_table) }} then {{ late_data_late_window_seconds([source_table]) }}
    {%- endfor %}
    end
{%- endmacro %}
