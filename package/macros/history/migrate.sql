{% macro migrate_history() %}
    {#- For `dbt run-operation late_data.migrate_history`: brings every late-data history built by
        an earlier version of this package (one table of every version, whose open versions each
        run rewrote) to what a history is now, keeping every version: its closed versions copied
        into a table of their own (late_data.migrated_versions), the table dropped and the history
        view made in its place. A history behind its result is brought up to date on the way (an
        open version the result has since published again or lost is closed, as its next run
        would have). Run again, it finishes an interrupted migration; a history already migrated
        is left as it is. -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- for node in late_data.filter_nodes('history') -%}
        {%- set pipeline = late_data.history_pipeline(node) -%}
        {%- set history = api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias, type='view') -%}
        {%- set existing = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
        {%- if existing is none or not existing.is_table -%}
            {%- do log('late_data.migrate_history: ' ~ node.alias ~ ' needs no migration', info=true) -%}
        {%- else -%}
            {%- set closed = late_data.closed_versions_relation(history) -%}
            {%- do late_data.rebuild_table(
                closed, late_data.migrated_versions(existing, pipeline), pipeline.file_format,
                late_data.history_partitioning(), late_data.history_table_properties(pipeline.file_format),
                statement_name='migrate_history'
            ) -%}
            {%- do adapter.drop_relation(existing) -%}
            {%- do late_data.ensure_view(history, late_data.history_view(history, pipeline), replace=true) -%}
            {%- do log('late_data.migrate_history: ' ~ history ~ ' is a view now, its closed versions in ' ~ closed, info=true) -%}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}


{% macro migrated_versions(old_history, pipeline) %}
    {#- A select of the closed versions of a history table built by an earlier version of this
        package: those it closed, and each open version whose window the result now holds
        published by a later run (closed then) or no longer holds (closed now). -#}
    {%- set columns = late_data.history_columns(pipeline) + ['dbt_scd_id', 'dbt_updated_at', 'dbt_valid_from'] %}
    select {{ columns | join(', ') }}, dbt_valid_to, is_current_version
    from {{ old_history }}
    where not is_current_version

    union all

    select
        {%- for column in columns %}
        open_versions.{{ column }},
        {%- endfor %}
        coalesce(current_windows.computed_at, {{ late_data.run_time() }}) as dbt_valid_to,
        false as is_current_version
    from {{ old_history }} as open_versions
    left join (
        select {{ late_data.window_key(late_data.key_columns(pipeline)) }} as window_key, computed_at
        from {{ late_data.pipeline_relation(pipeline) }}
    ) as current_windows on open_versions.window_key = current_windows.window_key
    where
        open_versions.is_current_version
        and (current_windows.window_key is null or current_windows.computed_at != open_versions.dbt_valid_from)
{%- endmacro %}
