{% macro record_history(history, pipeline) %}
    {#- A late-data history whose closed versions table exists: the versions this run's result
        closed (late_data.closed_versions) are staged, counted and appended, if there are any,
        in one commit; the history view is made again when the result was rebuilt. -#}
    {%- set closing = late_data.history_closing(history, pipeline) -%}
    {%- set closed = late_data.closed_versions_relation(history) -%}
    {%- if closing.base is none -%}
        {%- set rows = none -%}
    {%- else -%}
        {%- set rows = late_data.closed_versions(history, pipeline, closing) -%}
    {%- endif -%}
    {%- if late_data.is_explain() -%}
        {#- Nothing was written to say when the result was read: shown as of the run time. -#}
        {%- do late_data.explain_step('history', closed, rows if rows is not none else late_data.closed_versions(
            history, pipeline, dict(closing, base='timestamp as of ' ~ late_data.run_time()))) -%}
        {{- return('') -}}
    {%- endif -%}
    {%- set closed_count = 0 -%}
    {%- if rows is not none -%}
        {%- set staged = late_data.stage(closed, rows) -%}
        {%- set closed_count = run_query('select count(*) from ' ~ staged).rows[0][0] | int -%}
        {%- if closed_count > 0 -%}
            {%- call statement('main') -%}insert into {{ closed }} select * from {{ staged }}{%- endcall -%}
        {%- endif -%}
        {%- do late_data.unstage(staged) -%}
    {%- endif -%}
    {%- if closed_count == 0 -%}
        {%- do store_raw_result('main', message='OK (nothing to record)', code='OK', rows_affected=0) -%}
    {%- endif -%}
    {%- do late_data.record_write(history, {'mode': closing.scope, 'rows_written': closed_count, 'lean': true}) -%}
    {%- set rebuilt = (late_data.written(late_data.pipeline_relation(pipeline)) or {}).get('mode') == 'rebuild' -%}
    {%- do late_data.ensure_view(history, late_data.history_view(history, pipeline), replace=rebuilt) -%}
{% endmacro %}


{% macro build_history(history, pipeline) %}
    {#- A late-data history's first build: an empty closed versions table, partitioned by time
        partition and series bucket, and the history view over it and the result, where every
        window of the result is open, valid from the run that published it (its computed_at). -#}
    {%- set closed = late_data.closed_versions_relation(history) -%}
    {%- set no_versions = late_data.result_versions(late_data.pipeline_relation(pipeline), pipeline, 'false') -%}
    {%- if late_data.is_explain() -%}
        {%- do late_data.explain_step('history', closed, no_versions) -%}
        {{- return('') -}}
    {%- endif -%}
    {%- do late_data.rebuild_table(
        closed, no_versions, pipeline.file_format, late_data.history_partitioning(),
        late_data.history_table_properties(pipeline.file_format)
    ) -%}
    {%- do late_data.record_write(history, {'mode': 'rebuild', 'rows_written': 0}) -%}
    {%- do late_data.ensure_view(history, late_data.history_view(history, pipeline), replace=true) -%}
{% endmacro %}


{% macro closed_versions_relation(history) %}
    {#- The table of a late-data history's closed versions: the history's name and `__closed`. -#}
    {{- return(api.Relation.create(database=history.database, schema=history.schema, identifier=history.identifier ~ '__closed', type='table')) -}}
{% endmacro %}


{% macro history_view(history, pipeline) %}
    {#- What a late-data history shows: its closed versions and, open, every window of the result
        as it last published it. The open versions are not stored twice: the result's own write
        has rewritten them already, and a run only appends the versions it closed. -#}
    select * from {{ late_data.closed_versions_relation(history) }}
    union all
    {{ late_data.result_versions(late_data.pipeline_relation(pipeline), pipeline) }}
{%- endmacro %}


{% macro check_history_layout(history) %}
    {#- A late-data history is a view over its closed versions table and its result. A history
        table built by an earlier version of this package (every version in one table) is refused
        until it is migrated (dbt run-operation late_data.migrate_history). -#}
    {%- set existing = load_relation(history) -%}
    {%- if existing is not none and existing.is_table -%}
        {%- do exceptions.raise_compiler_error(
            "late-data history " ~ history ~ " is a table of every version: it was built by an earlier version of this"
            ~ " package, which rewrote the open versions on every run. Migrate it, keeping every version:"
            ~ " dbt run-operation late_data.migrate_history"
        ) -%}
    {%- endif -%}
{% endmacro %}


{% macro partition_pairs(partitions, relation_alias) %}
    {#- SQL predicate selecting the (partition_start, series_bucket) pairs in `partitions`. -#}
    {%- set pairs = [] -%}
    {%- for partition_start, series_bucket in partitions -%}
        {%- do pairs.append('(' ~ relation_alias ~ '.partition_start = ' ~ late_data.timestamp_literal(partition_start)
            ~ ' and ' ~ relation_alias ~ '.series_bucket = ' ~ series_bucket ~ ')') -%}
    {%- endfor -%}
    {{- return(pairs | join(' or ') if pairs else 'false') -}}
{% endmacro %}
