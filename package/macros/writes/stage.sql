{% macro stage(relation, sql) %}
    {#- Holds the rows of `sql` in memory as a temporary view (CACHE LAZY TABLE), named after
        `relation` and this invocation, for the statements that look at what to write and the write
        itself. Lazy: the first statement that looks at the rows (every caller counts them first)
        computes and caches them in the same pass, one Spark job fewer than an eager cache, which
        counts them to fill itself. A temporary view belongs to its Spark session, so concurrent
        invocations cannot read each other's rows. -#}
    {%- set staged = late_data.invocation_view_name(relation.identifier, 'staged') -%}
    {%- do adapter.execute('cache lazy table ' ~ staged ~ ' as ' ~ sql) -%}
    {{- return(staged) -}}
{% endmacro %}


{% macro invocation_view_name(identifier, kind) %}
    {#- The name of a temporary view of this invocation: <identifier>__<kind>_<invocation id, 12
        hex digits>, so concurrent invocations never share one. -#}
    {{- return(identifier ~ '__' ~ kind ~ '_' ~ invocation_id.replace('-', '')[:12]) -}}
{% endmacro %}


{% macro unstage(staged) %}
    {#- Drops a staged view, which frees its cached rows. -#}
    {%- do adapter.execute('drop view if exists ' ~ staged) -%}
{% endmacro %}


{% macro column_list(relation) %}
    {#- The columns of a table, in its order, as a select list (late_data.known_columns). -#}
    {%- set names = [] -%}
    {%- for name, type in late_data.known_columns(relation) -%}
        {%- do names.append(adapter.quote(name)) -%}
    {%- endfor -%}
    {{- return(names | join(', ')) -}}
{% endmacro %}


{% macro check_staged_columns(target, staged) %}
    {#- What dbt's on_schema_change='fail' checks, once per process and table: the staged rows must
        have the table's columns (in any order; the writes name them), besides the helper columns
        of a result's write (window_change, window_repaired, window_dimension_change), which never
        reach the table. A table
        built by an older version of a pipeline (an upgrade added a column, or the model selects
        another column now) is refused, not written with the column silently dropped. -#}
    {%- set checked = late_data.process_state().setdefault('checked_columns', []) -%}
    {%- if target.render() in checked -%}{{ return('') }}{%- endif -%}
    {%- set stored = late_data.known_columns(target) | map(attribute=0) | list -%}
    {%- set new = [] -%}
    {%- for column in adapter.get_columns_in_relation(api.Relation.create(identifier=staged, type='view'))
        if column.name | lower not in ('window_change', 'window_repaired', 'window_dimension_change') -%}
        {%- do new.append(column.name | lower) -%}
    {%- endfor -%}
    {%- if new | sort != stored | sort -%}
        {%- do exceptions.raise_compiler_error(
            "late-data: " ~ target ~ " has the columns " ~ stored | join(', ') ~ " but its pipeline " ~ model.name
            ~ " now writes " ~ new | join(', ') ~ ": the table was built by an earlier version of the pipeline;"
            ~ " rebuild it with dbt build --full-refresh --select " ~ model.name
        ) -%}
    {%- endif -%}
    {%- do checked.append(target.render()) -%}
{% endmacro %}
