{% macro builds_incrementally(pipeline) %}
    {#- Whether a pipeline's result table is updated in this invocation rather than built from
        scratch: it exists as a table, so does its versions table, and neither its model's
        `full_refresh` config nor --full-refresh asks for a rebuild. -#}
    {%- if not execute -%}{{ return(false) }}{%- endif -%}
    {%- set node = graph.nodes[pipeline.unique_id] -%}
    {%- set full_refresh = node.config.full_refresh if node.config.full_refresh is not none else flags.FULL_REFRESH -%}
    {%- set result = load_relation(late_data.pipeline_relation(pipeline)) -%}
    {%- set versions = load_relation(late_data.pipeline_relation(pipeline, 'versions')) -%}
    {{- return(not full_refresh and result is not none and result.is_table and versions is not none and versions.is_table) -}}
{% endmacro %}
