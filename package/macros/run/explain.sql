{% macro is_explain() %}
    {#- Whether this invocation only shows the SQL its late-data nodes would run (var
        `late_data_explain`, `late-data explain`): they log it and write nothing. -#}
    {{- return(var('late_data_explain', false) in [true, 'true', 'True', 1]) -}}
{% endmacro %}
