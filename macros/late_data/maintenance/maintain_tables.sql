{% macro late_data_maintain_tables(keep_hours=24, keep_snapshots=100) %}
    {#- For `dbt run-operation` between scheduled runs: every run commits a snapshot to each
        late-data table it changes, and appends small files to the audit and the versions tables;
        without maintenance, metadata and file counts grow with the number of runs. Compacts the
        audit and the versions tables (sorted by arrival, so a run's stamp predicates keep skipping
        files), then expires the snapshots older than `keep_hours` of every late-data table,
        keeping at least the last `keep_snapshots`. Numbers do not change; time travel reaches
        back `keep_hours`. -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set tables = late_data_maintained_relations() -%}
    {%- set compacted = [late_data_run_audit_relation()] + tables.versions -%}
    {%- if env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') == 'iceberg' -%}
        {{- late_data_maintain_iceberg(compacted, tables.all, keep_hours, keep_snapshots) -}}
    {%- else -%}
        {{- late_data_maintain_delta(compacted, tables.all, keep_hours) -}}
    {%- endif -%}
{% endmacro %}


{% macro late_data_maintained_relations() %}
    {#- {'all': the audit and every built table of the models and snapshots tagged `late_data`,
        'versions': the versions tables among them}. -#}
    {%- set relations = {'all': [late_data_run_audit_relation()], 'versions': []} -%}
    {%- for node in graph.nodes.values()
        if node.resource_type in ('model', 'snapshot') and 'late_data' in node.tags
        and node.config.materialized in ('table', 'incremental', 'snapshot') -%}
        {%- set relation = adapter.get_relation(node.database, node.schema, node.alias) -%}
        {%- if relation is not none -%}
            {%- do relations['all'].append(relation) -%}
            {%- if late_data_node_role(node) == 'versions' -%}{%- do relations['versions'].append(relation) -%}{%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(relations) -}}
{% endmacro %}


{% macro late_data_maintain_iceberg(compacted, tables, keep_hours, keep_snapshots) %}
    {%- set older_than = modules.datetime.datetime.utcnow() - modules.datetime.timedelta(hours=keep_hours) -%}
    {%- for table in compacted -%}
        {%- set sort = '' if table == late_data_run_audit_relation() else ", strategy => 'sort', sort_order => 'ingested_at'" -%}
        {%- do run_query(
            "call spark_catalog.system.rewrite_data_files(table => '" ~ table.render() ~ "'" ~ sort
            ~ ", options => map('rewrite-all', 'true'))"
        ) -%}
    {%- endfor -%}
    {%- for table in tables -%}
        {%- do run_query(
            "call spark_catalog.system.expire_snapshots(table => '" ~ table.render() ~ "', older_than => "
            ~ late_data_timestamp_literal(older_than) ~ ", retain_last => " ~ keep_snapshots ~ ")"
        ) -%}
    {%- endfor -%}
    {{- log('late_data_maintain_tables: compacted ' ~ compacted | length ~ ' tables, expired snapshots of ' ~ tables | length ~ ' tables', info=true) -}}
{% endmacro %}


{% macro late_data_maintain_delta(compacted, tables, keep_hours) %}
    {#- Delta keeps its log small by itself (checkpoints); files of old versions go with VACUUM,
        whose retention below 168 hours Delta refuses unless its safety check is turned off. -#}
    {%- for table in compacted -%}
        {%- do adapter.execute('optimize ' ~ table.render() ~ (' zorder by (ingested_at)' if table != late_data_run_audit_relation() else '')) -%}
    {%- endfor -%}
    {%- for table in tables -%}
        {%- do adapter.execute('vacuum ' ~ table.render() ~ ' retain ' ~ [keep_hours, 168] | max ~ ' hours') -%}
    {%- endfor -%}
    {{- log('late_data_maintain_tables: optimized ' ~ compacted | length ~ ' tables, vacuumed ' ~ tables | length ~ ' tables', info=true) -}}
{% endmacro %}
