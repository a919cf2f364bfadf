{% macro spark__create_view_as(relation, sql) -%}
    {#- dbt-spark's version with one change: drop, then create. With Iceberg's SparkSessionCatalog
        over a Hive metastore, CREATE OR REPLACE VIEW keeps the old SQL text of an existing view
        (apache/iceberg#15490), so a changed model or var would silently keep serving the old
        query. Not atomic: a reader may miss the view for the instant between the statements.
        adapter.execute, not run_query: through a Thrift Server a statement without result
        columns fails in run_query's fetch. -#}
    {%- if execute -%}
        {%- do adapter.execute('drop view if exists ' ~ relation) -%}
    {%- endif %}
    create view {{ relation }}
    {% if config.persist_column_docs() -%}
        {% set model_columns = model.columns %}
        {% set query_columns = get_columns_in_query(sql) %}
        (
        {{ get_persist_docs_column_list(model_columns, query_columns) }}
        )
    {% endif %}
    {{ comment_clause() }}
    {%- set contract_config = config.get('contract') -%}
    {%- if contract_config.enforced -%}
        {{ get_assert_columns_equivalent(sql) }}
    {%- endif %}
    as
    {{ sql }}
{%- endmacro %}
