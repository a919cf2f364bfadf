{% macro rebuild_table(relation, sql, file_format, partition_by=[], properties={}, statement_name='main') %}
    {#- A table of a pipeline built from scratch from `sql` (first build, --full-refresh), with the
        pipeline's layout: a table in the way is replaced in one commit, keeping its earlier
        versions for time travel (a history reads the result as it stood before a rebuild); a view
        in the way is dropped. -#}
    {%- set existing = load_relation(relation) -%}
    {%- set replace = existing is not none and existing.is_table -%}
    {%- if existing is not none and not replace -%}
        {%- do adapter.drop_relation(existing) -%}
    {%- endif -%}
    {%- set ddl -%}
        {{ 'create or replace table' if replace else 'create table' }} {{ relation }}
        using {{ file_format }}
        {%- if partition_by %}
        partitioned by ({{ partition_by | join(', ') }})
        {%- endif %}
        {{ late_data.tblproperties(file_format, properties) }}
        as
        {{ sql }}
    {%- endset -%}
    {%- call statement(statement_name) -%}{{ ddl }}{%- endcall -%}
    {%- do late_data.forget_relation(relation) -%}
{% endmacro %}


{% macro tblproperties(file_format, properties={}) %}
    {#- The tblproperties clause of a late-data table: `properties` and, on Iceberg, the metadata
        files it keeps. Every commit writes a new metadata file holding every snapshot kept, and
        Iceberg deletes none of the old ones by default: at a run a minute a table's metadata
        folder grew by 0.3 to 1 MB a run, the growth itself growing (bench/soak_100_heavy.md).
        With these, each table keeps its newest 20. Time travel and rollback read snapshots,
        not old metadata files. -#}
    {%- set all_properties = {} -%}
    {%- do all_properties.update(properties) -%}
    {%- if file_format == 'iceberg' -%}{%- do all_properties.update(late_data.iceberg_metadata_properties()) -%}{%- endif -%}
    {{- 'tblproperties (' ~ late_data.property_assignments(all_properties) ~ ')' if all_properties else '' -}}
{% endmacro %}


{% macro property_assignments(properties) %}
    {#- `'key' = 'value', ...` of a dict of table properties, in key order, for TBLPROPERTIES. -#}
    {%- set assignments = [] -%}
    {%- for key, value in properties | dictsort -%}
        {%- do assignments.append(late_data.sql_string(key) ~ ' = ' ~ late_data.sql_string(value)) -%}
    {%- endfor -%}
    {{- return(assignments | join(', ')) -}}
{% endmacro %}


{% macro iceberg_metadata_properties() %}
    {#- How many metadata files an Iceberg late-data table keeps (late_data.tblproperties), and how
        many manifests it keeps apart: every append writes one, and every scan of the table reads
        each one (its data files are skipped by the manifest's statistics, the manifest is not).
        Iceberg merges them once 100 pile up; a run a minute read 60 to 100 manifests of each
        table before every maintenance, 8 at most from the 8th run on. -#}
    {{- return({
        'write.metadata.delete-after-commit.enabled': 'true',
        'write.metadata.previous-versions-max': '20',
        'commit.manifest.min-count-to-merge': '8',
    }) -}}
{% endmacro %}


{% macro record_rebuild(target, role) %}
    {#- What a first build or full refresh of a late-data table wrote, for the audit and the run's
        report, read back from the table (one query): every row is new. Versions tables: the
        versions loaded and how many of them are quarantined; result tables: every window and
        the partitions they fill; listings and histories: their rows. -#}
    {%- if role == 'versions' -%}
        {%- set counts = run_query('select count(*), count_if(quarantine_reason is not null) from ' ~ target).rows[0] -%}
        {%- do late_data.record_write(target, {'mode': 'rebuild', 'rows_written': counts[0] | int, 'rows_quarantined': counts[1] | int}) -%}
    {%- elif role == 'windows' -%}
        {%- set partitions = run_query(
            'select partition_start, series_bucket, count(*) from ' ~ target ~ ' group by partition_start, series_bucket'
        ).rows -%}
        {%- set written = [] -%}
        {%- for partition in partitions -%}
            {%- do written.append([partition[0], partition[1] | int]) -%}
        {%- endfor -%}
        {%- do late_data.record_write(target, {
            'partitions': written,
            'windows_changed': partitions | sum(attribute=2) | int,
            'windows_repaired': 0,
            'rows_written': partitions | sum(attribute=2) | int,
        }) -%}
    {%- else -%}
        {%- do late_data.record_write(target, {'mode': 'rebuild', 'rows_written': run_query('select count(*) from ' ~ target).columns[0].values()[0] | int}) -%}
    {%- endif -%}
{% endmacro %}


{% macro append_versions(target, staged) %}
    {#- A versions table's new versions are appended, if there are any; how many (with those a
        dimension change made in this run), and how many of them are quarantined, go to the audit. -#}
    {%- set counts = run_query('select count(*), count_if(quarantine_reason is not null) from ' ~ staged).rows[0] -%}
    {%- set made_by_dimensions = (late_data.written(target) or {}).get('dimension_versions', 0) -%}
    {%- do late_data.record_write(target, {
        'mode': 'append', 'rows_written': counts[0] + made_by_dimensions, 'rows_quarantined': counts[1] | int,
    }) -%}
    {%- if counts[0] == 0 -%}{{ return(none) }}{%- endif -%}
    {#- One file: a run's versions are a few thousand rows, and every file is one more for each
        later run's scan to weigh. -#}
    {{- return('insert into ' ~ target ~ ' select /*+ COALESCE(1) */ ' ~ late_data.column_list(target) ~ ' from ' ~ staged) -}}
{% endmacro %}


{% macro replace_partitions(target, staged, key_columns, dimensions=false) %}
    {#- A result table's staged rows are every window of the partitions to rewrite, plus a marker row
        per window that vanished (late_data.windows_to_write). They replace those partitions in one
        commit (INSERT INTO ... REPLACE WHERE), which also empties a partition left without
        windows. What was written is recorded for the history and the audit (with `dimensions`,
        also the windows a dimension change changed). -#}
    {%- set stats_query -%}
        select
            partition_start,
            series_bucket,
            count_if(window_change != 'vanished') as kept_windows,
            count_if(window_change != 'unchanged') as changed_windows,
            count_if(window_repaired) as repaired_windows,
            to_json(collect_list(if(window_change = 'vanished', {{ late_data.window_key(key_columns) }}, null)))
                as vanished_windows
            {%- if dimensions %},
            to_json(collect_list(if(window_dimension_change, {{ late_data.window_key(key_columns) }}, null)))
                as dimension_windows
            {%- endif %},
            -- The target as it stands now, before this write: what its history closes.
            {{ late_data.exact_time('current_timestamp()') }} as read_at
        from {{ staged }}
        group by partition_start, series_bucket
    {%- endset -%}
    {%- set partitions = run_query(stats_query).rows -%}
    {%- set rewritten, replaced, vanished, by_dimension = [], [], [], [] -%}
    {%- for partition in partitions -%}
        {%- do rewritten.append([partition[0], partition[1] | int]) -%}
        {%- do replaced.append('(partition_start = ' ~ late_data.timestamp_literal(partition[0]) ~ ' and series_bucket = ' ~ partition[1] ~ ')') -%}
        {%- do vanished.extend(fromjson(partition[5])) -%}
        {%- do by_dimension.extend(fromjson(partition[6]) if dimensions else []) -%}
    {%- endfor -%}
    {%- do late_data.record_write(target, {
        'partitions': rewritten,
        'windows_changed': partitions | sum(attribute=3) | int,
        'windows_repaired': partitions | sum(attribute=4) | int,
        'vanished': vanished,
        'dimension_windows': by_dimension,
        'rows_written': partitions | sum(attribute=2) | int,
        'read_at': partitions[0][-1] if partitions else none,
    }) -%}
    {%- if not partitions -%}{{ return(none) }}{%- endif -%}
    {{- return(
        'insert into ' ~ target ~ ' replace where ' ~ replaced | join(' or ')
        ~ ' select ' ~ late_data.column_list(target) ~ ' from ' ~ staged ~ " where window_change != 'vanished'"
    ) -}}
{% endmacro %}


{% macro merge_listing(target, staged) %}
    {#- A too-late listing's listed versions are merged by version_id, if there are any, so a rerun
        lists nothing twice. -#}
    {%- set rows = run_query('select count(*) from ' ~ staged).columns[0].values()[0] | int -%}
    {%- do late_data.record_write(target, {'mode': 'merge', 'rows_written': rows}) -%}
    {%- if rows == 0 -%}{{ return(none) }}{%- endif -%}
    {{- return(
        'merge into ' ~ target ~ ' as stored using ' ~ staged ~ ' as listed on stored.version_id = listed.version_id'
        ~ ' when matched then update set * when not matched then insert *'
    ) -}}
{% endmacro %}


{% macro write_staged(target, sql, how, key_columns=none, dimensions=false) %}
    {#- The incremental write of a pipeline table: `sql` run once into a cached temporary view,
        checked against the table's columns, looked at, and written only if there is something to
        write (`how`: append, replace or merge): a run that finds nothing new commits nothing. The
        statement that writes is dbt's `main` when it writes the result. -#}
    {%- set staged = late_data.stage(target, sql) -%}
    {%- do late_data.check_staged_columns(target, staged) -%}
    {%- if how == 'append' -%}
        {%- set write = late_data.append_versions(target, staged) -%}
    {%- elif how == 'replace' -%}
        {%- set write = late_data.replace_partitions(target, staged, key_columns, dimensions) -%}
    {%- else -%}
        {%- set write = late_data.merge_listing(target, staged) -%}
    {%- endif -%}
    {%- do late_data.record_write(target, {'lean': true}) -%}
    {%- if write -%}
        {%- call statement('main' if how == 'replace' else 'write_' ~ how) -%}{{ write }}{%- endcall -%}
    {%- elif how == 'replace' -%}
        {%- do store_raw_result('main', message='OK (nothing to write)', code='OK', rows_affected=0) -%}
    {%- endif -%}
    {%- do late_data.unstage(staged) -%}
{% endmacro %}
