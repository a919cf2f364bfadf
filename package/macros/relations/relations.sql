{% macro relation_exists(relation) %}
    {{- return(execute and load_relation(relation) is not none) -}}
{% endmacro %}
