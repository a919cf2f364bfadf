{#- Lint-time stand-ins for the demo's own macros that call the package (see library/late_data). -#}
{% macro raw_quarantine_reason(required_columns, exact_sum_column=none, count_column=none) -%}
    case when {{ required_columns[0] }} is null then 'null_{{ required_columns[0] }}' end
{%- endmacro %}
{% macro page_error_rates_union(errors, views, carried_columns) -%}
    select * from {{ errors }}
    union all
    select * from {{ views }}
{%- endmacro %}
{% macro var(name, default=none) -%}
    {{- return({
        'window_size_seconds': 60,
        'late_window_seconds': 3600,
        'partition_size_seconds': 600,
        'series_buckets': 8,
        'raw_schema': 'raw',
    }.get(name, default)) -}}
{%- endmacro %}
