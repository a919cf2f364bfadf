{% macro late_data_stage(relation, sql) %}
    {#- Runs `sql` once and holds its rows in memory as a temporary view (CACHE TABLE), named after
        `relation` and this invocation, for the statements that look at what to write and the write
        itself. A temporary view belongs to its Spark session, so concurrent invocations cannot
        read each other's rows. -#}
    {%- set staged = relation.identifier ~ '__staged_' ~ invocation_id.replace('-', '')[:12] -%}
    {%- do adapter.execute('cache table ' ~ staged ~ ' as ' ~ sql) -%}
    {{- return(staged) -}}
{% endmacro %}


{% macro late_data_unstage(staged) %}
    {#- Drops a staged view, which frees its cached rows. -#}
    {%- do adapter.execute('drop view if exists ' ~ staged) -%}
{% endmacro %}


{% macro late_data_column_list(relation) %}
    {#- The columns of a table, in its order, as a select list (late_data_known_columns). -#}
    {%- set names = [] -%}
    {%- for name, type in late_data_known_columns(relation) -%}
        {%- do names.append(adapter.quote(name)) -%}
    {%- endfor -%}
    {{- return(names | join(', ')) -}}
{% endmacro %}


{% macro late_data_check_staged_columns(target, staged) %}
    {#- What dbt's on_schema_change='fail' checks, once per process and model: the staged rows
        must have exactly the table's columns, besides the helper columns of a result model's
        write (window_change, window_repaired), which never reach the table. A table built by an
        older version of a model (an upgrade added a column) is refused, not written with the
        column silently dropped. -#}
    {%- set checked = late_data_process_state().setdefault('checked_columns', []) -%}
    {%- if target.render() in checked -%}{{ return('') }}{%- endif -%}
    {%- set stored = late_data_known_columns(target) | map(attribute=0) | list -%}
    {%- set new = [] -%}
    {%- for column in adapter.get_columns_in_relation(api.Relation.create(identifier=staged, type='view'))
        if column.name | lower not in ('window_change', 'window_repaired') -%}
        {%- do new.append(column.name | lower) -%}
    {%- endfor -%}
    {%- if new != stored -%}
        {%- do exceptions.raise_compiler_error(
            "late-data: " ~ target ~ " has the columns " ~ stored | join(', ') ~ " but its model " ~ model.name
            ~ " now writes " ~ new | join(', ') ~ ": the table was built by an earlier version of the model;"
            ~ " rebuild it with dbt build --full-refresh --select " ~ model.name
        ) -%}
    {%- endif -%}
    {%- do checked.append(target.render()) -%}
{% endmacro %}
