{% macro late_data_create_raw_schema() %}
    {#- Creates the demo's raw schema (var raw_schema); also the cheap first call that starts the
        Spark session (`late-data`). -#}
    {% do adapter.execute('create schema if not exists ' ~ late_data.plain_identifier('var raw_schema', var('raw_schema'))) %}
{% endmacro %}


{% macro raw_quarantine_reason(required_columns, exact_sum_column=none, count_column=none) %}
    {#- SQL expression for the demo's staging models: why a raw row version cannot be counted, or
        null when it can, named after the raw table's columns (the pipelines take it first and
        add their own checks of the renamed columns after it). The first reason that applies:
        `null_<column>` for a null in one of `required_columns`; for `exact_sum_column` (a double
        summed exactly) `not_finite` for NaN or an infinity and `out_of_range` from
        late_data.exact_sum_bound() on; for `count_column` (a count) `out_of_range` below 0 or
        above late_data.count_bound(). -#}
    case
    {%- for column in required_columns %}
        when {{ column }} is null then 'null_{{ column }}'
    {%- endfor %}
    {%- if exact_sum_column %}
        when isnan({{ exact_sum_column }}) or abs({{ exact_sum_column }}) = double('infinity') then 'not_finite'
        when abs({{ exact_sum_column }}) >= {{ late_data.exact_sum_bound() }} then 'out_of_range'
    {%- endif %}
    {%- if count_column %}
        when {{ count_column }} < 0 or {{ count_column }} > {{ late_data.count_bound() }} then 'out_of_range'
    {%- endif %}
    end
{%- endmacro %}


{% macro check_demo_vars() %}
    {#- The demo's on-run-start hook: var raw_schema names the raw tables' schema and reaches SQL
        unquoted, so it is checked before anything runs (the late_data package checks every
        source's schema too, naming the source). -#}
    {%- do late_data.plain_identifier('var raw_schema', var('raw_schema')) -%}
    {{- return('') -}}
{% endmacro %}
