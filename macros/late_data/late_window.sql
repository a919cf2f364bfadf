{% macro late_data_late_window_seconds(sources=none) %}
    {#- The late window of a model, in seconds: the largest late window among the raw source
        tables it reads (var `late_window_seconds_by_source`, falling back to var
        `late_window_seconds`). A window built from several sources is final only when every
        source's rows can no longer arrive in time. -#}
    {%- set by_source = var('late_window_seconds_by_source', {}) or {} -%}
    {%- set seconds = [] -%}
    {%- for source_table in (sources or [none]) -%}
        {%- do seconds.append((by_source.get(source_table, var('late_window_seconds')) if source_table else var('late_window_seconds')) | int) -%}
    {%- endfor -%}
    {{- return(seconds | max) -}}
{% endmacro %}


{% macro late_data_model_late_window_seconds(node_config=none) %}
    {#- The late window of the model being built (or of the node whose config is given), from the
        raw source tables listed in its `meta.late_data_sources`. -#}
    {%- set meta = (node_config or config).get('meta', {}) or {} -%}
    {{- return(late_data_late_window_seconds(meta.get('late_data_sources'))) -}}
{% endmacro %}
