{% macro code_commit() %}
    {#- The commit of the dbt project's code a run runs, for the run audit and the revisions: the
        environment's LATE_DATA_CODE_COMMIT (`late-data` sets it from git when the project is in a
        repository; a scheduler of your own can pass its build's commit), a git object name of 7
        to 40 hex digits, `-dirty` after it when the working tree had changes. Unset: none. -#}
    {%- set commit = env_var('LATE_DATA_CODE_COMMIT', '') -%}
    {%- if commit == '' -%}{{ return(none) }}{%- endif -%}
    {%- if not modules.re.match('^[0-9a-f]{7,40}(-dirty)?$', commit) -%}
        {%- do exceptions.raise_compiler_error(
            "late-data: environment variable LATE_DATA_CODE_COMMIT=" ~ commit ~ " is not a git commit"
            ~ " (7 to 40 hex digits, optionally followed by -dirty)"
        ) -%}
    {%- endif -%}
    {{- return(commit) -}}
{% endmacro %}
