{% macro late_data_quarantine_reason(required_columns, exact_sum_column=none, count_column=none) %}
    {#- SQL expression: why a raw row version cannot be counted, or null when it can. The first
        reason that applies, in this order: `null_<column>` for a null in one of `required_columns`;
        for `exact_sum_column` (a double summed exactly, late_data_exact_sum) `not_finite` for NaN
        or an infinity and `out_of_range` when its magnitude reaches late_data_exact_sum_bound();
        for `count_column` (an integer count) `out_of_range` below 0 or above
        late_data_count_bound(). -#}
    case
    {%- for column in required_columns %}
        when {{ column }} is null then 'null_{{ column }}'
    {%- endfor %}
    {%- if exact_sum_column %}
        when isnan({{ exact_sum_column }}) or abs({{ exact_sum_column }}) = double('infinity') then 'not_finite'
        when abs({{ exact_sum_column }}) >= {{ late_data_exact_sum_bound() }} then 'out_of_range'
    {%- endif %}
    {%- if count_column %}
        when {{ count_column }} < 0 or {{ count_column }} > {{ late_data_count_bound() }} then 'out_of_range'
    {%- endif %}
    end
{%- endmacro %}


{% macro late_data_count_bound() %}
    {#- The largest count a row may carry: 2^31 - 1, so the bigint sum of a window cannot overflow
        below 4 billion rows (Spark's bigint sum wraps around silently). -#}
    {{- return(2147483647) -}}
{% endmacro %}
