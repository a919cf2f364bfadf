{% macro late_data_check_source_contracts() %}
    {#- For on-run-start of commands that build: every source table that declares its columns'
        data_type must have exactly those columns with exactly those types, or the run stops
        before it writes anything, naming the table, the column, the type found and the type
        expected. Nothing is cast leniently afterwards: a string column would turn 'abc' into a
        null that is still counted. A table that does not exist yet is left to the models that
        read it. -#}
    {%- if not execute or flags.WHICH not in ('run', 'build', 'snapshot') -%}{{ return('') }}{%- endif -%}
    {%- set problems = [] -%}
    {%- for source_node in graph.sources.values() -%}
        {%- set declared = [] -%}
        {%- for column in source_node.columns.values() if column.data_type -%}
            {%- do declared.append(column) -%}
        {%- endfor -%}
        {%- if declared -%}
            {%- set relation = api.Relation.create(schema=source_node.schema, identifier=source_node.identifier, type='table') -%}
            {%- set found = {} -%}
            {%- for column in adapter.get_columns_in_relation(relation) -%}
                {%- do found.update({column.name | lower: column.dtype | lower}) -%}
            {%- endfor -%}
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
