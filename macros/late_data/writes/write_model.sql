{% macro late_data_write_model(sql) %}
    {#- The incremental materialization of a late-data model (meta.late_data_role). A first build,
        --full-refresh or a view in the way: the table is created from the query, as dbt-spark
        does. Otherwise the query runs once into a cached temporary view, what it holds is looked
        at, and the table is written only if there is something to write: a run that finds
        nothing new commits nothing, and no step describes what the process already knows. -#}
    {%- set existing = load_relation(this) -%}
    {%- if existing is none or existing.is_view or should_full_refresh() -%}
        {{- return(late_data_rebuild_model(existing, sql)) -}}
    {%- endif -%}
    {%- set staged = late_data_stage(this, sql) -%}
    {%- do late_data_check_staged_columns(this, staged) -%}
    {%- set role = late_data_role() -%}
    {%- if role == 'versions' -%}
        {%- set write = late_data_append_versions(this, staged) -%}
    {%- elif role == 'windows' -%}
        {%- set write = late_data_replace_partitions(this, staged) -%}
    {%- else -%}
        {%- set write = late_data_merge_listing(this, staged) -%}
    {%- endif -%}
    {%- do late_data_record_write(this, {'lean': true}) -%}
    {%- if write -%}
        {%- call statement('main') -%}{{ write }}{%- endcall -%}
    {%- else -%}
        {%- do store_raw_result('main', message='OK (nothing to write)', code='OK', rows_affected=0) -%}
    {%- endif -%}
    {%- do late_data_unstage(staged) -%}
    {{- return({'relations': [this]}) -}}
{% endmacro %}


{% macro late_data_rebuild_model(existing, sql) %}
    {#- dbt-spark's first build and full refresh: drop what is in the way (Delta replaces in place),
        create the table from the query. -#}
    {%- if existing is not none and not (existing.is_delta and config.get('file_format') == 'delta') -%}
        {%- do adapter.drop_relation(existing) -%}
    {%- endif -%}
    {%- call statement('main') -%}{{ create_table_as(false, this, sql) }}{%- endcall -%}
    {%- do late_data_forget_relation(this) -%}
    {%- do late_data_record_rebuild(this, late_data_role()) -%}
    {%- do apply_grants(this, config.get('grants'), should_revoke(existing, full_refresh_mode=true)) -%}
    {%- do persist_docs(this, model) -%}
    {{- return({'relations': [this]}) -}}
{% endmacro %}


{% macro late_data_append_versions(target, staged) %}
    {#- Versions tables (role `versions`): the new row versions are appended, if there are any; how
        many, and how many of them are quarantined, go to the audit. -#}
    {%- set counts = run_query('select count(*), count_if(quarantine_reason is not null) from ' ~ staged).rows[0] -%}
    {%- do late_data_record_write(target, {'mode': 'append', 'rows_written': counts[0] | int, 'rows_quarantined': counts[1] | int}) -%}
    {%- if counts[0] == 0 -%}{{ return(none) }}{%- endif -%}
    {{- return('insert into ' ~ target ~ ' select ' ~ late_data_column_list(target) ~ ' from ' ~ staged) -}}
{% endmacro %}


{% macro late_data_replace_partitions(target, staged) %}
    {#- Result tables (role `windows`): the staged rows are every window of the partitions to
        rewrite, plus a marker row per window that vanished (late_data_windows_to_write). They
        replace those partitions in one commit (INSERT INTO ... REPLACE WHERE), which also empties a
        partition left without windows. What was written is recorded for the history and the audit. -#}
    {%- set written = late_data_written(target) or {} -%}
    {%- set stats_query -%}
        select
            partition_start,
            series_bucket,
            count_if(window_change != 'vanished') as kept_windows,
            count_if(window_change != 'unchanged') as changed_windows,
            count_if(window_repaired) as repaired_windows,
            to_json(collect_list(if(window_change = 'vanished', {{ late_data_window_key(written.key_columns) }}, null)))
                as vanished_windows
        from {{ staged }}
        group by partition_start, series_bucket
    {%- endset -%}
    {%- set partitions = run_query(stats_query).rows -%}
    {%- set rewritten, replaced, vanished = [], [], [] -%}
    {%- for partition in partitions -%}
        {%- do rewritten.append([partition[0], partition[1] | int]) -%}
        {%- do replaced.append('(partition_start = ' ~ late_data_timestamp_literal(partition[0]) ~ ' and series_bucket = ' ~ partition[1] ~ ')') -%}
        {%- do vanished.extend(fromjson(partition[5])) -%}
    {%- endfor -%}
    {%- do late_data_record_write(target, {
        'partitions': rewritten,
        'windows_changed': partitions | sum(attribute=3) | int,
        'windows_repaired': partitions | sum(attribute=4) | int,
        'vanished': vanished,
        'rows_written': partitions | sum(attribute=2) | int,
    }) -%}
    {%- if not partitions -%}{{ return(none) }}{%- endif -%}
    {{- return(
        'insert into ' ~ target ~ ' replace where ' ~ replaced | join(' or ')
        ~ ' select ' ~ late_data_column_list(target) ~ ' from ' ~ staged ~ " where window_change != 'vanished'"
    ) -}}
{% endmacro %}


{% macro late_data_merge_listing(target, staged) %}
    {#- Too-late listings (role `too_late_rows`, keyed by version_id): the listed versions are merged,
        if there are any, so a rerun lists nothing twice. -#}
    {%- set rows = run_query('select count(*) from ' ~ staged).columns[0].values()[0] | int -%}
    {%- do late_data_record_write(target, {'mode': 'merge', 'rows_written': rows}) -%}
    {%- if rows == 0 -%}{{ return(none) }}{%- endif -%}
    {%- set key = config.get('unique_key') -%}
    {{- return(
        'merge into ' ~ target ~ ' as stored using ' ~ staged ~ ' as listed on stored.' ~ key ~ ' = listed.' ~ key
        ~ ' when matched then update set * when not matched then insert *'
    ) -}}
{% endmacro %}


{% macro late_data_record_rebuild(target, role) %}
    {#- What a first build or full refresh of a late-data table wrote, for the audit and the run's
        report, read back from the table (one query): every row is new. Versions tables: the
        versions loaded and how many of them are quarantined; result tables: every window and
        the partitions they fill; listings and histories: their rows. -#}
    {%- if role == 'versions' -%}
        {%- set counts = run_query('select count(*), count_if(quarantine_reason is not null) from ' ~ target).rows[0] -%}
        {%- do late_data_record_write(target, {'rows_written': counts[0] | int, 'rows_quarantined': counts[1] | int}) -%}
    {%- elif role == 'windows' -%}
        {%- set partitions = run_query(
            'select partition_start, series_bucket, count(*) from ' ~ target ~ ' group by partition_start, series_bucket'
        ).rows -%}
        {%- set written = [] -%}
        {%- for partition in partitions -%}
            {%- do written.append([partition[0], partition[1] | int]) -%}
        {%- endfor -%}
        {%- do late_data_record_write(target, {
            'partitions': written,
            'windows_changed': partitions | sum(attribute=2) | int,
            'windows_repaired': 0,
            'rows_written': partitions | sum(attribute=2) | int,
        }) -%}
    {%- else -%}
        {%- do late_data_record_write(target, {'rows_written': run_query('select count(*) from ' ~ target).columns[0].values()[0] | int}) -%}
    {%- endif -%}
{% endmacro %}
