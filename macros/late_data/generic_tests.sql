{% test unique_combination(model, columns) %}
    {#- Rows whose combination of `columns` is not unique. -#}
    select {{ columns | join(', ') }}, count(*) as occurrences
    from {{ model }}
    group by {{ columns | join(', ') }}
    having count(*) > 1
{% endtest %}


{% test non_negative(model, column_name) %}
    {#- Rows where `column_name` is negative. -#}
    select {{ column_name }}
    from {{ model }}
    where {{ column_name }} < 0
{% endtest %}
