{% test non_negative(model, column_name) %}
    {#- Rows where `column_name` is negative. -#}
    select {{ column_name }}
    from {{ model }}
    where {{ column_name }} < 0
{% endtest %}
