{% macro late_data_maintain_tables(keep_hours=24, keep_snapshots=100) %}
    {#- For `dbt run-operation` between scheduled runs: every run commits a snapshot to each
        late-data table it changes, appends small files to the audit and the versions tables, and
        delete files to the histories (merge-on-read); without maintenance, metadata and file
        counts grow with the number of runs. Compacts the audit, the versions tables (sorted by
        arrival, so a run's stamp predicates keep skipping files) and the history files that carry
        deletes, then expires the snapshots older than `keep_hours` of every late-data table,
        keeping at least the last `keep_snapshots`. Numbers do not change; time travel reaches
        back `keep_hours`. -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set relations = late_data_maintained_relations() -%}
    {%- if env_var('LATE_DATA_TABLE_FORMAT', 'iceberg') == 'iceberg' -%}
        {{- late_data_maintain_iceberg(relations, keep_hours, keep_snapshots) -}}
    {%- else -%}
        {{- late_data_maintain_delta(relations, keep_hours) -}}
    {%- endif -%}
{% endmacro %}


{% macro late_data_maintained_relations() %}
    {#- {'audit': the run audit, 'versions', 'history' and 'all': the built tables of the models and
        snapshots tagged `late_data` (the versions tables, the histories, all of them and the audit)}. -#}
    {%- set relations = {'audit': late_data_run_audit_relation(), 'all': [late_data_run_audit_relation()], 'versions': [], 'history': []} -%}
    {%- for node in graph.nodes.values()
        if node.resource_type in ('model', 'snapshot') and 'late_data' in node.tags
        and node.config.materialized in ('table', 'incremental', 'snapshot') -%}
        {%- set relation = adapter.get_relation(node.database, node.schema, node.alias) -%}
        {%- if relation is not none -%}
            {%- do relations['all'].append(relation) -%}
            {%- set role = late_data_node_role(node) -%}
            {%- if role in ('versions', 'history') -%}{%- do relations[role].append(relation) -%}{%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(relations) -}}
{% endmacro %}


{% macro late_data_maintain_iceberg(relations, keep_hours, keep_snapshots) %}
    {#- To the microsecond: cut to the second, a snapshot committed earlier in that second would
        be newer than the cut-off and survive keep_hours=0. -#}
    {%- set older_than = modules.datetime.datetime.utcnow() - modules.datetime.timedelta(hours=keep_hours) -%}
    {%- set older_than = "timestamp'" ~ older_than.strftime('%Y-%m-%d %H:%M:%S.%f') ~ "'" -%}
    {%- set compactions = [(relations.audit, "options => map('rewrite-all', 'true')")] -%}
    {%- for table in relations.versions -%}
        {%- do compactions.append((table, "strategy => 'sort', sort_order => 'ingested_at', options => map('rewrite-all', 'true')")) -%}
    {%- endfor -%}
    {%- for table in relations.history -%}
        {%- do compactions.append((table, "options => map('delete-file-threshold', '1')")) -%}
    {%- endfor -%}
    {%- for table, how in compactions -%}
        {%- do run_query("call spark_catalog.system.rewrite_data_files(table => " ~ late_data_string_literal(table.render()) ~ ", " ~ how ~ ")") -%}
    {%- endfor -%}
    {%- for table in relations.all -%}
        {%- do run_query(
            "call spark_catalog.system.expire_snapshots(table => " ~ late_data_string_literal(table.render()) ~ ", older_than => "
            ~ older_than ~ ", retain_last => " ~ keep_snapshots ~ ")"
        ) -%}
    {%- endfor -%}
    {{- log('late_data_maintain_tables: compacted ' ~ compactions | length ~ ' tables, expired snapshots of '
        ~ relations.all | length ~ ' tables', info=true) -}}
{% endmacro %}


{% macro late_data_maintain_delta(relations, keep_hours) %}
    {#- Delta keeps its log small by itself (checkpoints); files of old versions go with VACUUM,
        whose retention below 168 hours Delta refuses unless its safety check is turned off.
        VACUUM's listing and deletion parallelism are session settings of the `delta` target
        (profiles.yml): left at Spark's default, its listing alone is a 10,000-task stage. -#}
    {%- do adapter.execute('optimize ' ~ relations.audit.render()) -%}
    {%- for table in relations.versions -%}
        {%- do adapter.execute('optimize ' ~ table.render() ~ ' zorder by (ingested_at)') -%}
    {%- endfor -%}
    {%- for table in relations.history -%}
        {%- do adapter.execute('reorg table ' ~ table.render() ~ ' apply (purge)') -%}
    {%- endfor -%}
    {%- for table in relations.all -%}
        {%- do adapter.execute('vacuum ' ~ table.render() ~ ' retain ' ~ [keep_hours, 168] | max ~ ' hours') -%}
    {%- endfor -%}
    {{- log('late_data_maintain_tables: optimized the audit and versions tables, purged deletion vectors of '
        ~ relations.history | length ~ ' histories, vacuumed ' ~ relations.all | length ~ ' tables', info=true) -}}
{% endmacro %}
