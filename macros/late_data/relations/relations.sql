{% macro late_data_model_relation(model_name) %}
    {#- The relation of this project's model `model_name` (its schema and alias as configured), from
        the parsed graph: how a node reads the stored state of a model it feeds, which it cannot
        ref (the ref would be a cycle), or works out that model's run. -#}
    {%- if not execute -%}
        {#- Parsing: the graph is not there yet, and the relation is not read. -#}
        {{- return(api.Relation.create(schema=target.schema, identifier=model_name, type='table')) -}}
    {%- endif -%}
    {%- set node = graph.nodes.get('model.' ~ project_name ~ '.' ~ model_name) -%}
    {%- if node is none -%}
        {%- do exceptions.raise_compiler_error("late-data: this project has no model named " ~ model_name) -%}
    {%- endif -%}
    {{- return(api.Relation.create(schema=node.schema, identifier=node.alias, type='table')) -}}
{% endmacro %}


{% macro late_data_model_node(relation) %}
    {#- The graph node of this project's model stored in `relation`, or none (always while parsing). -#}
    {%- for node in (graph.nodes or {}).values()
        if node.resource_type == 'model' and node.package_name == project_name
        and node.alias == relation.identifier and node.schema == relation.schema -%}
        {{- return(node) -}}
    {%- endfor -%}
    {{- return(none) -}}
{% endmacro %}


{% macro late_data_builds_incrementally(relation) %}
    {#- What dbt's is_incremental() answers inside the model stored in `relation`, asked from any
        node (the model itself, or one working out its run): an incremental model that exists as a
        table and is not asked for a full refresh (its `full_refresh` config, else the flag). -#}
    {%- if relation.identifier == this.identifier and relation.schema == this.schema -%}
        {{- return(is_incremental()) -}}
    {%- endif -%}
    {%- set node = late_data_model_node(relation) -%}
    {%- if not execute or node is none or node.config.materialized != 'incremental' -%}
        {{- return(false) -}}
    {%- endif -%}
    {%- set full_refresh = node.config.full_refresh if node.config.full_refresh is not none else flags.FULL_REFRESH -%}
    {%- set existing = load_relation(relation) -%}
    {{- return(existing is not none and existing.is_table and not full_refresh) -}}
{% endmacro %}


{% macro late_data_relation_exists(relation) %}
    {{- return(execute and load_relation(relation) is not none) -}}
{% endmacro %}
