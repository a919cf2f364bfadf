{% macro late_data_check_source_contracts() %}
    {#- For on-run-start of commands that build: every raw table (a source that declares its
        columns' data_type) that a selected node reads must exist with those columns and types
        (other columns are read by nothing and allowed), or the run stops before it writes
        anything, naming the table, the column, the type found and the type expected. Nothing is
        cast leniently afterwards: a string column would turn 'abc' into a null that is still
        counted. Columns are read once per process (late_data_known_columns). -#}
    {%- if not execute or flags.WHICH not in ('run', 'build', 'snapshot') -%}{{ return('') }}{%- endif -%}
    {%- set read = late_data_selected_ancestors() -%}
    {%- set problems = [] -%}
    {%- for source_node in graph.sources.values() if source_node.unique_id in read -%}
        {%- set declared = source_node.columns.values() | selectattr('data_type') | list -%}
        {%- if declared -%}
            {%- set relation = api.Relation.create(schema=source_node.schema, identifier=source_node.identifier, type='table') -%}
            {%- set found = dict(late_data_known_columns(relation)) -%}
            {%- if not found -%}
                {%- do problems.append(relation ~ ' does not exist (late-data setup creates the raw tables; var raw_schema names their schema)') -%}
            {%- endif -%}
            {%- for column in declared if found -%}
                {%- set expected = column.data_type | lower -%}
                {%- if column.name | lower not in found -%}
                    {%- do problems.append(relation ~ ' has no column ' ~ column.name ~ ' (expected ' ~ expected ~ ')') -%}
                {%- elif found[column.name | lower] != expected -%}
                    {%- do problems.append(relation ~ ' column ' ~ column.name ~ ' has type ' ~ found[column.name | lower] ~ ', expected ' ~ expected) -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if problems -%}
        {%- do exceptions.raise_compiler_error(
            'raw tables break their contract (column types declared in the sources), nothing was written: '
            ~ problems | join('; ')
        ) -%}
    {%- endif -%}
    {{- return('') -}}
{% endmacro %}


{% macro late_data_selected_ancestors() %}
    {#- The unique ids of every node and source the nodes selected in this invocation read, directly
        or through other nodes (the selected ones included). -#}
    {%- set seen = [] -%}
    {%- set queue = selected_resources | list -%}
    {%- for unique_id in queue if unique_id not in seen -%}
        {%- do seen.append(unique_id) -%}
        {%- set node = graph.nodes.get(unique_id) -%}
        {%- if node is not none -%}
            {%- do queue.extend(node.depends_on.nodes) -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(seen) -}}
{% endmacro %}


{% macro late_data_check_parents_built() %}
    {#- For on-run-start of commands that build: a view or table a selected node reads but this
        invocation does not build must exist (dbt's relation cache, no statement), or the run stops
        saying what to build first, instead of failing deep in a model with TABLE_OR_VIEW_NOT_FOUND
        (e.g. `dbt build --select tag:late_data` on a warehouse nothing was built in yet). -#}
    {%- if not execute or flags.WHICH not in ('run', 'build', 'snapshot') -%}{{ return('') }}{%- endif -%}
    {%- set missing = [] -%}
    {%- for unique_id in late_data_selected_ancestors() if unique_id not in selected_resources -%}
        {%- set node = graph.nodes.get(unique_id) -%}
        {%- if node is not none and node.resource_type in ('model', 'seed', 'snapshot') and node.config.materialized != 'ephemeral'
            and not late_data_relation_exists(api.Relation.create(schema=node.schema, identifier=node.alias)) -%}
            {%- do missing.append(node.schema ~ '.' ~ node.alias) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if missing -%}
        {%- do exceptions.raise_compiler_error(
            "late-data: this run reads " ~ missing | sort | join(', ') ~ ", which " ~ ('does' if missing | length == 1 else 'do')
            ~ " not exist yet and " ~ ('is' if missing | length == 1 else 'are') ~ " not selected: build the project"
            ~ " first (dbt build, or late-data schedule, whose first run builds everything), or select the"
            ~ " parents too (--select +<model>)"
        ) -%}
    {%- endif -%}
    {{- return('') -}}
{% endmacro %}
