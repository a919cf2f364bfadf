{% macro maintain_tables(keep_hours=24, keep_snapshots=100) %}
    {#- For `dbt run-operation late_data.maintain_tables` between scheduled runs: every run commits a
        snapshot to each late-data table it changes and appends small files to the audit and the
        versions tables; without maintenance, metadata and file counts grow with the number of
        runs. Compacts the audit, the versions tables (sorted by arrival, so a run's stamp
        predicates keep skipping files) and the histories' closed versions (a small file a run
        appends), then expires the snapshots older than
        `keep_hours` of every late-data table, keeping at least the last `keep_snapshots`, and
        bounds every Iceberg table's metadata files (late_data.iceberg_metadata_properties).
        Numbers do not change; time travel reaches back `keep_hours`. -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- for file_format in ['iceberg', 'delta'] -%}
        {%- set relations = late_data.maintained_relations(file_format) -%}
        {%- if relations.all and file_format == 'iceberg' -%}
            {{- late_data.maintain_iceberg(relations, keep_hours, keep_snapshots) -}}
        {%- elif relations.all -%}
            {{- late_data.maintain_delta(relations, keep_hours) -}}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}


{% macro maintained_relations(file_format) %}
    {#- {'audit': the run audit when it has `file_format`, 'versions', 'history' and 'all': the
        existing tables of the late-data pipelines of that format (their versions tables, their
        histories, all of them and the audit)}. -#}
    {%- set relations = {'audit': none, 'all': [], 'versions': [], 'history': []} -%}
    {%- set audit = adapter.get_relation(database=none, schema=target.schema, identifier='late_data_run_audit') -%}
    {%- if audit is not none and late_data.audit_format() == file_format -%}
        {%- do relations.update({'audit': audit}) -%}
        {%- do relations['all'].append(audit) -%}
    {%- endif -%}
    {%- for node in late_data.filter_nodes('pipeline') + late_data.filter_nodes('history') -%}
        {%- for node_relation, role, pipeline in late_data.node_tables(node) if pipeline.file_format == file_format -%}
            {#- A history is a view: its table is its closed versions'. -#}
            {%- set relation = late_data.closed_versions_relation(node_relation) if role == 'history' else node_relation -%}
            {%- set existing = adapter.get_relation(database=none, schema=relation.schema, identifier=relation.identifier) -%}
            {%- if existing is not none -%}
                {%- do relations['all'].append(existing) -%}
                {%- if role in ('versions', 'history') -%}{%- do relations[role].append(existing) -%}{%- endif -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {{- return(relations) -}}
{% endmacro %}


{% macro maintain_iceberg(relations, keep_hours, keep_snapshots) %}
    {#- To the microsecond: cut to the second, a snapshot committed earlier in that second would
        be newer than the cut-off and survive keep_hours=0. -#}
    {%- set older_than = modules.datetime.datetime.utcnow() - modules.datetime.timedelta(hours=keep_hours) -%}
    {%- set older_than = late_data.exact_timestamp_literal(older_than) -%}
    {%- set compactions = [(relations.audit, "options => map('rewrite-all', 'true')")] if relations.audit else [] -%}
    {%- for table in relations.versions -%}
        {%- do compactions.append((table, "strategy => 'sort', sort_order => 'ingested_at', options => map('rewrite-all', 'true')")) -%}
    {%- endfor -%}
    {%- for table in relations.history -%}
        {%- do compactions.append((table, "options => map('min-input-files', '2')")) -%}
    {%- endfor -%}
    {%- for table, how in compactions -%}
        {%- do run_query("call spark_catalog.system.rewrite_data_files(table => " ~ late_data.sql_string(table.render()) ~ ", " ~ how ~ ")") -%}
    {%- endfor -%}
    {%- set kept_metadata = late_data.property_assignments(late_data.iceberg_metadata_properties()) -%}
    {%- for table in relations.all -%}
        {#- Tables built before the package bounded their metadata files get the setting here. -#}
        {%- do adapter.execute('alter table ' ~ table.render() ~ ' set tblproperties (' ~ kept_metadata ~ ')') -%}
        {%- do run_query(
            "call spark_catalog.system.expire_snapshots(table => " ~ late_data.sql_string(table.render()) ~ ", older_than => "
            ~ older_than ~ ", retain_last => " ~ keep_snapshots ~ ")"
        ) -%}
    {%- endfor -%}
    {{- log('late_data.maintain_tables: compacted ' ~ compactions | length ~ ' tables, expired snapshots of '
        ~ relations.all | length ~ ' tables', info=true) -}}
{% endmacro %}


{% macro maintain_delta(relations, keep_hours) %}
    {#- Delta keeps `keep_hours` through each table's own retention, so nothing turns its VACUUM
        safety check off: VACUUM deletes the files a version dropped once its tombstone is older
        than delta.deletedFileRetentionDuration, checkpoints stop carrying those tombstones, and
        Delta deletes log files older than delta.logRetentionDuration (counted from midnight UTC)
        at a checkpoint. Delta has no tags: a table that a named version recorded in the last 168
        hours names keeps 168 hours (late_data.delta_retention_seconds). VACUUM's listing and
        deletion parallelism are session settings (the project's profile): left at Spark's
        default, its listing alone is a 10,000-task stage. -#}
    {%- if relations.audit -%}
        {%- do adapter.execute('optimize ' ~ relations.audit.render()) -%}
    {%- endif -%}
    {%- for table in relations.versions -%}
        {%- do adapter.execute('optimize ' ~ table.render() ~ ' zorder by (ingested_at)') -%}
    {%- endfor -%}
    {%- for table in relations.history -%}
        {%- do adapter.execute('optimize ' ~ table.render()) -%}
    {%- endfor -%}
    {%- set named = late_data.delta_named_tables(within_hours=168) -%}
    {%- for table in relations.all -%}
        {%- set seconds = late_data.delta_retention_seconds(keep_hours=keep_hours, named=table.render() | lower in named) -%}
        {%- do late_data.set_delta_retention(relation=table, seconds=seconds) -%}
        {%- do adapter.execute('vacuum ' ~ table.render()) -%}
    {%- endfor -%}
    {{- log('late_data.maintain_tables: optimized the audit, versions tables and '
        ~ relations.history | length ~ ' histories, vacuumed ' ~ relations.all | length ~ ' tables', info=true) -}}
{% endmacro %}


{% macro delta_retention_seconds(keep_hours, named) %}
    {#- Whole seconds, at least `keep_hours`; 168 hours, Delta's own default, for a table a recent
        named version names, since no tag holds its files. -#}
    {%- set hours = [keep_hours | float, 168 if named else 0] | max -%}
    {{- return((hours * 3600) | round(0, 'ceil') | int) -}}
{% endmacro %}


{% macro delta_named_tables(within_hours) %}
    {#- The tables (schema.table, lower case) whose version a named version recorded in the last
        `within_hours` holds or was staged on (late_data_named_versions, written by the late-data
        CLI's stage, publish and rollback). Asked of the catalog, not of the relations this process
        remembers: another process, the CLI's, makes that table. -#}
    {%- if not run_query('show tables in ' ~ target.schema ~ " like 'late_data_named_versions'").rows -%}
        {{- return([]) -}}
    {%- endif -%}
    {%- set recent = run_query(
        'select tables, base from ' ~ target.schema ~ '.late_data_named_versions'
        ~ ' where recorded_at >= current_timestamp() - interval ' ~ within_hours ~ ' hours'
    ) -%}
    {%- set tables = [] -%}
    {%- for row in recent.rows -%}
        {%- for held in [fromjson(row['tables']), fromjson(row['base'])] -%}
            {%- for table in held -%}{%- do tables.append(table | lower) -%}{%- endfor -%}
        {%- endfor -%}
    {%- endfor -%}
    {{- return(tables | unique | list) -}}
{% endmacro %}


{% macro set_delta_retention(relation, seconds) %}
    {#- Both retentions to `seconds`, committed only when they change: a commit of its own on a
        table would be a version that holds nothing new. -#}
    {%- set interval = 'interval ' ~ seconds ~ ' seconds' -%}
    {%- set wanted = {'delta.deletedFileRetentionDuration': interval, 'delta.logRetentionDuration': interval} -%}
    {%- set properties = run_query('show tblproperties ' ~ relation.render()) -%}
    {%- set current = {} -%}
    {%- for row in properties.rows -%}{%- do current.update({row[0]: row[1]}) -%}{%- endfor -%}
    {%- set changed = [] -%}
    {%- for key, value in wanted.items() if current.get(key) != value -%}{%- do changed.append(key) -%}{%- endfor -%}
    {%- if changed -%}
        {%- do adapter.execute('alter table ' ~ relation.render() ~ ' set tblproperties ('
            ~ late_data.property_assignments(wanted) ~ ')') -%}
    {%- endif -%}
{% endmacro %}
