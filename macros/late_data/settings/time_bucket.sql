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


{% macro late_data_floor_to_partition(moment, partition_size_seconds=none) %}
    {#- The start of the partition holding a datetime. -#}
    {%- set size = partition_size_seconds or late_data_partition_size_seconds() -%}
    {%- set epoch = modules.datetime.datetime(1970, 1, 1) -%}
    {%- set seconds = ((moment - epoch).total_seconds() | int) // size * size -%}
    {{- return(epoch + modules.datetime.timedelta(seconds=seconds)) -}}
{% endmacro %}
