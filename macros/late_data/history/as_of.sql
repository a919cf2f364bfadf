{% macro late_data_as_of(history, as_of=none) %}
    {#- The versions of a snapshot valid at `as_of` (a SQL timestamp expression): the table as it
        stood right after the last run at or before that moment. Without `as_of`: the current versions. -#}
    select *
    from {{ history }}
    where
    {%- if as_of is none %}
        dbt_valid_to is null
    {%- else %}
        dbt_valid_from <= {{ as_of }}
        and (dbt_valid_to > {{ as_of }} or dbt_valid_to is null)
    {%- endif %}
{%- endmacro %}
