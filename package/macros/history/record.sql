{% macro record_history(history, pipeline) %}
    {#- A late-data history whose table exists: this run's changes (late_data.history_changes, or
        late_data.history_comparison when the history is new to this result, catching up or
        facing a rebuilt result) are staged, counted, and merged only if there are any. -#}
    {%- do late_data.check_history_partitioning(history) -%}
    {%- set plan = late_data.history_plan(history, pipeline) -%}
    {%- set candidates = late_data.history_candidates(history, pipeline) -%}
    {%- if plan.scope == 'since' and not plan.catching_up -%}
        {%- set changes = late_data.history_changes(candidates, plan) -%}
    {%- else -%}
        {%- set changes = late_data.history_comparison(candidates, history, pipeline, plan) -%}
    {%- endif -%}
    {%- if late_data.explain() -%}
        {%- do late_data.explain_step('history', history, changes) -%}
        {{- return('') -}}
    {%- endif -%}
    {%- set staged = late_data.stage(history, changes) -%}
    {%- set counts = run_query("select count_if(dbt_change_type = 'insert'), count(*) from " ~ staged).rows[0] -%}
    {%- do late_data.record_write(history, {'mode': plan.scope, 'rows_written': counts[0] | int, 'lean': true}) -%}
    {%- if counts[1] == 0 -%}
        {%- do store_raw_result('main', message='OK (nothing to record)', code='OK', rows_affected=0) -%}
    {%- else -%}
        {%- call statement('main') -%}{{ late_data.history_merge(history, staged, pipeline, plan) }}{%- endcall -%}
    {%- endif -%}
    {%- do late_data.unstage(staged) -%}
{% endmacro %}


{% macro build_history(history, pipeline) %}
    {#- A late-data history's first build: every window of the result, valid from the run that
        published it (its computed_at), partitioned so a run reads only the pairs it changes. -#}
    {%- set first_versions -%}
        select
            *,
            {{ late_data.version_id() }} as dbt_scd_id,
            computed_at as dbt_updated_at,
            computed_at as dbt_valid_from,
            cast(null as timestamp) as dbt_valid_to,
            true as is_current_version
        from (
            {{ late_data.history_candidates(history, pipeline) }}
        ) as published_windows
    {%- endset -%}
    {%- if late_data.explain() -%}
        {%- do late_data.explain_step('history', history, first_versions) -%}
        {{- return('') -}}
    {%- endif -%}
    {%- do late_data.rebuild_table(
        history, first_versions, pipeline.file_format, late_data.history_partitioning(),
        late_data.history_table_properties(pipeline.file_format)
    ) -%}
    {%- do late_data.record_rebuild(history, 'history') -%}
{% endmacro %}


{% macro history_merge(history, staged, pipeline, plan) %}
    {#- The staged changes merged into the history. A close matches the window's open version by
        key, in the partitions of open versions and, when only this run's changes are merged, in
        the (time partition, series bucket) pairs the result rewrote, so the table format reads
        only those. A change the history already holds is merged as nothing: when the window's
        open version is the staged version itself (valid from the same run time, same measures
        and status), its insert matches it and its close does not. That happens when a run's
        merge committed but its audit row did not (the process died in between): the next run
        takes the history to be one run behind and stages that run's versions again, which would
        otherwise be inserted twice and the first copy closed where it opened. -#}
    {%- set recorded -%}
        (DBT_INTERNAL_DEST.dbt_valid_from = DBT_INTERNAL_SOURCE.dbt_valid_from
        {%- for column in late_data.check_cols(pipeline) %}
        and DBT_INTERNAL_DEST.{{ column }} <=> DBT_INTERNAL_SOURCE.{{ column }}
        {%- endfor %})
    {%- endset %}
    merge into {{ history }} as DBT_INTERNAL_DEST
    using {{ staged }} as DBT_INTERNAL_SOURCE
    on DBT_INTERNAL_SOURCE.dbt_unique_key = DBT_INTERNAL_DEST.window_key
        and DBT_INTERNAL_DEST.is_current_version
        and (
            DBT_INTERNAL_SOURCE.dbt_change_type = 'delete'
            or (DBT_INTERNAL_SOURCE.dbt_change_type = 'update' and not {{ recorded }})
            or (DBT_INTERNAL_SOURCE.dbt_change_type = 'insert' and {{ recorded }})
        )
    {%- if plan.partitions is not none %}
        and ({{ late_data.partition_pairs(plan.partitions, 'DBT_INTERNAL_DEST') }})
    {%- endif %}
    when matched
        and DBT_INTERNAL_SOURCE.dbt_change_type != 'insert'
        then update set dbt_valid_to = DBT_INTERNAL_SOURCE.dbt_valid_to, is_current_version = false
    when not matched
        and DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'
        then insert *
{%- endmacro %}


{% macro partition_pairs(partitions, relation_alias) %}
    {#- SQL predicate selecting the (partition_start, series_bucket) pairs in `partitions`. -#}
    {%- set pairs = [] -%}
    {%- for partition_start, series_bucket in partitions -%}
        {%- do pairs.append('(' ~ relation_alias ~ '.partition_start = ' ~ late_data.timestamp_literal(partition_start)
            ~ ' and ' ~ relation_alias ~ '.series_bucket = ' ~ series_bucket ~ ')') -%}
    {%- endfor -%}
    {{- return(pairs | join(' or ') if pairs else 'false') -}}
{% endmacro %}


{% macro check_history_partitioning(history) %}
    {#- A late-data history is partitioned by time partition, series bucket and is_current_version,
        so a run reads and writes only the pairs its result rewrote. A history built by an earlier
        version (partitioned by time partition and is_current_version) is refused until it is
        migrated (dbt run-operation late_data.migrate_history), once per process. -#}
    {%- set checked = late_data.process_state().setdefault('checked_partitioning', []) -%}
    {%- if history.render() in checked -%}{{ return('') }}{%- endif -%}
    {%- set partitioning = late_data.partition_columns(history) -%}
    {%- if partitioning != late_data.history_partitioning() -%}
        {%- do exceptions.raise_compiler_error(
            "late-data history " ~ history ~ " is partitioned by (" ~ partitioning | join(', ') ~ "), not ("
            ~ late_data.history_partitioning() | join(', ') ~ "): it was built by an earlier version of this package."
            ~ " Migrate it, keeping every version: dbt run-operation late_data.migrate_history"
        ) -%}
    {%- endif -%}
    {%- do checked.append(history.render()) -%}
{% endmacro %}


{% macro partition_columns(relation) %}
    {#- The partition columns of a table, in order, from DESCRIBE: the rows after `# Partition
        Information` (Hive-style tables, Iceberg's session catalog) or the `Part <n>` rows after
        `# Partitioning` (v2 tables, e.g. Delta's catalog). -#}
    {%- set columns = [] -%}
    {%- set section = [none] -%}
    {%- for row in run_query('describe ' ~ relation) -%}
        {%- set name = (row[0] or '') | trim -%}
        {%- if name in ('# Partition Information', '# Partitioning') -%}
            {%- do section.append(name) -%}
        {%- elif name == '' or (name.startswith('#') and name != '# col_name') -%}
            {%- do section.append(none) -%}
        {%- elif section[-1] == '# Partition Information' and name != '# col_name' -%}
            {%- do columns.append(name) -%}
        {%- elif section[-1] == '# Partitioning' and name.startswith('Part ') -%}
            {%- do columns.append(row[1] | trim) -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(columns) -}}
{% endmacro %}
