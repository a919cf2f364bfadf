{% macro late_data_window_size_seconds() %}
    {{- return(late_data_whole_number(var('window_size_seconds'), 'window_size_seconds', minimum=1)) -}}
{% endmacro %}


{% macro late_data_partition_size_seconds() %}
    {#- var `partition_size_seconds`, checked: a window must lie in exactly one partition. -#}
    {%- set window_size = late_data_window_size_seconds() -%}
    {%- set partition_size = late_data_whole_number(var('partition_size_seconds'), 'partition_size_seconds', minimum=1) -%}
    {%- if partition_size % window_size != 0 -%}
        {%- do exceptions.raise_compiler_error(
            "var partition_size_seconds=" ~ partition_size ~ " must be a multiple of window_size_seconds="
            ~ window_size ~ ": a window must lie in exactly one partition"
        ) -%}
    {%- endif -%}
    {{- return(partition_size) -}}
{% endmacro %}


{% macro late_data_series_buckets() %}
    {#- var `series_buckets`: how many buckets the series keys are hashed into. With the time
        partition it makes the unit of rewriting, so one late row rewrites one bucket's files. -#}
    {{- return(late_data_whole_number(var('series_buckets'), 'series_buckets', minimum=1)) -}}
{% endmacro %}


{% macro late_data_series_bucket(series_key) %}
    {{- return(adapter.dispatch('late_data_series_bucket', 'late_data')(series_key)) -}}
{% endmacro %}

{% macro default__late_data_series_bucket(series_key) %}
    {#- An explicit bucket column (not a table-format transform), so Iceberg and Delta partition
        the same way and a query can name the bucket it needs. -#}
    cast(pmod(xxhash64({{ series_key }}), {{ late_data_series_buckets() }}) as int)
{%- endmacro %}
