{% macro late_data_time_bucket(timestamp_expression, size_seconds) %}
    {{- return(adapter.dispatch('late_data_time_bucket', 'late_data')(timestamp_expression, size_seconds)) -}}
{% endmacro %}

{% macro default__late_data_time_bucket(timestamp_expression, size_seconds) %}
    {#- Buckets are aligned to the Unix epoch, so any size (60 s, 3600 s, 86400 s) nests cleanly. -#}
    timestamp_seconds(floor(unix_seconds({{ timestamp_expression }}) / {{ size_seconds }}) * {{ size_seconds }})
{%- endmacro %}


{% macro late_data_add_seconds(timestamp_expression, seconds) %}
    {{- return(adapter.dispatch('late_data_add_seconds', 'late_data')(timestamp_expression, seconds)) -}}
{% endmacro %}

{% macro default__late_data_add_seconds(timestamp_expression, seconds) %}
    {{ timestamp_expression }} + interval {{ seconds }} second
{%- endmacro %}
