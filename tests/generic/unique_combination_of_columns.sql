{% test unique_combination_of_columns(model, combination_of_columns) %}
    {#- Rows whose combination of columns is not unique: a composite primary key. The name and
        argument are dbt_utils' (dbt_utils.unique_combination_of_columns), which this project
        cannot install (dbt deps reaches no package hub here): prefix `dbt_utils.` once it can. -#}
    select
        {{ combination_of_columns | join(', ') }},
        count(*) as occurrences
    from {{ model }}
    group by {{ combination_of_columns | join(', ') }}
    having count(*) > 1
{% endtest %}
