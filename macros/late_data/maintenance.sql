{% macro late_data_maintain_tables(keep_hours=24, keep_snapshots=100) %}
    {#- For `dbt run-operation` between scheduled runs: every run commits a snapshot to each
        late-data table and appends a small file to the audit; without maintenance, metadata and
        file counts grow with the number of runs. Compacts the audit, then expires the snapshots
        older than `keep_hours` of every late-data table, keeping at least the last
        `keep_snapshots`. Numbers do not change; time travel reaches back `keep_hours`. -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set tables = late_data_maintained_relations() -%}
    {%- if env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') == 'iceberg' -%}
        {{- late_data_maintain_iceberg(tables, keep_hours, keep_snapshots) -}}
    {%- else -%}
        {{- late_data_maintain_delta(tables, keep_hours) -}}
    {%- endif -%}
{% endmacro %}


{% macro late_data_maintained_relations() %}
    {#- The audit and every built table of the models and snapshots tagged `late_data`. -#}
    {%- set relations = [late_data_run_audit_relation()] -%}
    {%- for node in graph.nodes.values()
        if node.resource_type in ('model', 'snapshot') and 'late_data' in node.tags
        and node.config.materialized in ('table', 'incremental', 'snapshot') -%}
        {%- set relation = adapter.get_relation(node.database, node.schema, node.alias) -%}
        {%- if relation is not none -%}{%- do relations.append(relation) -%}{%- endif -%}
    {%- endfor -%}
    {{- return(relations) -}}
{% endmacro %}


{% macro late_data_maintain_iceberg(tables, keep_hours, keep_snapshots) %}
    {%- set older_than = modules.datetime.datetime.utcnow() - modules.datetime.timedelta(hours=keep_hours) -%}
    {%- do run_query(
        "call spark_catalog.system.rewrite_data_files(table => '" ~ late_data_run_audit_relation().render()
        ~ "', options => map('rewrite-all', 'true'))"
    ) -%}
    {%- for table in tables -%}
        {%- do run_query(
            "call spark_catalog.system.expire_snapshots(table => '" ~ table.render() ~ "', older_than => "
            ~ late_data_timestamp_literal(older_than) ~ ", retain_last => " ~ keep_snapshots ~ ")"
        ) -%}
    {%- endfor -%}
    {{- log('late_data_maintain_tables: compacted the audit, expired snapshots of ' ~ tables | length ~ ' tables', info=true) -}}
{% endmacro %}


{% macro late_data_maintain_delta(tables, keep_hours) %}
    {#- Delta keeps its log small by itself (checkpoints); files of old versions go with VACUUM,
        whose retention below 168 hours Delta refuses unless its safety check is turned off. -#}
    {%- do run_query('optimize ' ~ late_data_run_audit_relation().render()) -%}
    {%- for table in tables -%}
        {%- do run_query('vacuum ' ~ table.render() ~ ' retain ' ~ [keep_hours, 168] | max ~ ' hours') -%}
    {%- endfor -%}
    {{- log('late_data_maintain_tables: optimized the audit, vacuumed ' ~ tables | length ~ ' tables', info=true) -}}
{% endmacro %}
