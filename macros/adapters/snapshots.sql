{#- Follows dbt-spark 1.11.0 and dbt-adapters 1.24 (python/tests/test_adapter_overrides.py checks
    the installed macros against these fingerprints):
    upstream: dbt-spark spark/macros/materializations/snapshot.sql materialization:snapshot:spark 11b4a58dc34f
    upstream: dbt-spark spark/macros/materializations/snapshot.sql spark__snapshot_merge_sql 6965c0690dac
    upstream: dbt-adapters global_project/macros/materializations/snapshots/helpers.sql default__build_snapshot_table cdbebee0341b
    upstream: dbt-adapters global_project/macros/materializations/snapshots/helpers.sql default__snapshot_staging_table 134aa6737177
    upstream: dbt-adapters global_project/macros/adapters/timestamps.sql default__snapshot_get_time 78ba7a3be809

    History snapshots of late-data result models (tag `late_data_history`). Each run compares only
    what late_data_history_plan says can have changed, and stamps every version with the run time
    that published it (the result row's computed_at), so history lives on the runs' time axis and
    a snapshot that catches up after a failure still records each version when it was published.
    A column is_current_version (a partition key, with the result's time partition and series
    bucket) keeps the open versions apart, so closing them reads only those. Every other snapshot
    gets dbt's and dbt-spark's macros unchanged. -#}

{% macro spark__snapshot_get_time() %}
    {#- Late-data histories stamp deletions and dbt_updated_at with the run time, not the wall clock. -#}
    {%- if late_data_is_history() -%}
        {{- late_data_run_time() -}}
    {%- else -%}
        {{- dbt.default__snapshot_get_time() -}}
    {%- endif -%}
{% endmacro %}


{% macro late_data_is_history() %}
    {#- Whether the node being built is a late-data history snapshot (tag `late_data_history`). Such
        a snapshot is refused when configured with a snapshot setting these overrides do not
        implement, rather than have the setting silently ignored. -#}
    {%- if model is not defined or model.resource_type != 'snapshot' or 'late_data_history' not in model.tags -%}
        {{- return(false) -}}
    {%- endif -%}
    {%- set expected = {'strategy': 'check', 'unique_key': 'window_key', 'hard_deletes': 'invalidate'} -%}
    {%- for setting, value in expected.items() if config.get(setting) != value -%}
        {%- do exceptions.raise_compiler_error(
            "late-data history " ~ model.name ~ ": snapshot setting " ~ setting ~ "=" ~ config.get(setting)
            ~ " is not supported; it must be " ~ value
        ) -%}
    {%- endfor -%}
    {%- set columns_renamed = (config.get('snapshot_table_column_names') or get_snapshot_table_column_names())
        != get_snapshot_table_column_names() -%}
    {%- for setting in ['dbt_valid_to_current', 'updated_at', 'snapshot_meta_column_names']
        if (columns_renamed if setting == 'snapshot_meta_column_names' else config.get(setting)) -%}
        {%- do exceptions.raise_compiler_error(
            "late-data history " ~ model.name ~ ": snapshot setting " ~ setting ~ " is not supported: open versions"
            ~ " have dbt_valid_to null and is_current_version true, stamped with the run times"
        ) -%}
    {%- endfor -%}
    {{- return(true) -}}
{% endmacro %}


{% macro late_data_version_id(relation_alias=none) %}
    {%- set prefix = relation_alias ~ '.' if relation_alias else '' -%}
    {{- return(snapshot_hash_arguments([prefix ~ 'window_key', prefix ~ 'computed_at'])) -}}
{% endmacro %}


{% macro spark__build_snapshot_table(strategy, sql) %}
    {%- if not late_data_is_history() -%}
        {{- return(dbt.default__build_snapshot_table(strategy, sql)) -}}
    {%- endif %}
    select
        *,
        {{ late_data_version_id() }} as dbt_scd_id,
        computed_at as dbt_updated_at,
        computed_at as dbt_valid_from,
        cast(null as timestamp) as dbt_valid_to,
        true as is_current_version
    from (
        {{ sql }}
    ) as published_windows
{%- endmacro %}


{% macro spark__snapshot_staging_table(strategy, source_sql, target_relation) %}
    {#- The changes a late-data history records: a new version for each candidate window (valid
        from its computed_at), the close of the window's open version at that moment, and the
        close of the open version of each window that vanished, at the run that found it vanished.
        When the history has recorded every earlier run of its result model, the candidates are
        exactly this run's changes (computed_at changes only with the published numbers) and
        nothing is read from the history; otherwise the candidates are compared with the open
        versions (check_cols) and every open version without a candidate is closed. -#}
    {%- if not late_data_is_history() -%}
        {{- return(dbt.default__snapshot_staging_table(strategy, source_sql, target_relation)) -}}
    {%- endif -%}
    {%- set plan = late_data_history_plan() -%}
    {%- if plan.scope == 'since' and not plan.catching_up -%}
        {{- return(late_data_history_changes(source_sql, plan)) -}}
    {%- endif -%}
    {{- return(late_data_history_comparison(source_sql, target_relation, plan)) -}}
{% endmacro %}


{% macro late_data_history_changes(source_sql, plan) %}
    {#- Staging of a history that is up to date: this run's changes, without reading the history. -#}
    {%- set vanished_keys = [] -%}
    {%- for key in plan.vanished -%}
        {%- do vanished_keys.append('(' ~ late_data_string_literal(key) ~ ')') -%}
    {%- endfor %}
    with

    candidates as (

        {{ source_sql }}

    )

    select
        'insert' as dbt_change_type,
        *,
        window_key as dbt_unique_key,
        computed_at as dbt_updated_at,
        computed_at as dbt_valid_from,
        cast(null as timestamp) as dbt_valid_to,
        {{ late_data_version_id() }} as dbt_scd_id,
        true as is_current_version
    from candidates

    union all

    -- Closes the open version of each changed window, if it has one.
    select
        'update' as dbt_change_type,
        *,
        window_key as dbt_unique_key,
        computed_at as dbt_updated_at,
        computed_at as dbt_valid_from,
        computed_at as dbt_valid_to,
        cast(null as string) as dbt_scd_id,
        false as is_current_version
    from candidates
    {%- if vanished_keys %}

    union all

    select
        'delete' as dbt_change_type,
        candidates.*,
        vanished.window_key as dbt_unique_key,
        {{ late_data_run_time() }} as dbt_updated_at,
        {{ late_data_run_time() }} as dbt_valid_from,
        {{ late_data_run_time() }} as dbt_valid_to,
        cast(null as string) as dbt_scd_id,
        false as is_current_version
    from (select * from values {{ vanished_keys | join(', ') }} as vanished(window_key)) as vanished
    left join candidates on false
    {%- endif %}
{%- endmacro %}


{% macro late_data_history_comparison(source_sql, target_relation, plan) %}
    {#- Staging of a history that is new to this result, catching up, or facing a rebuilt result:
        the candidates compared with the open versions. -#}
    {%- set result = late_data_history_result() -%}
    {%- set vanished_in_audit = plan.since is not none -%}
    {%- set vanished_keys = [] -%}
    {%- for key in plan.vanished -%}
        {%- do vanished_keys.append('(' ~ late_data_string_literal(key) ~ ')') -%}
    {%- endfor %}
    with

    candidates as (

        {{ source_sql }}

    ),
    {%- if vanished_in_audit %}

    vanished_runs as (

        -- The runs of the result model that found a window vanished, since the history's last run.
        select window_key, max(run_time) as vanished_at
        from {{ late_data_run_audit_relation() }}
        lateral view explode(vanished_windows) vanished as window_key
        where
            model = {{ late_data_string_literal(result.identifier) }}
            and outcome = 'success'
            and run_time > {{ late_data_timestamp_literal(plan.since) }}
        group by window_key

    ),
    {%- endif %}

    current_versions as (

        select *
        from {{ target_relation }}
        where
            is_current_version
            {%- if plan.scope == 'none' %}
            and false
            {%- elif plan.scope == 'since' %}
            and window_key in (
                select window_key from candidates
                {%- if vanished_keys %}
                union all
                select * from values {{ vanished_keys | join(', ') }}
                {%- endif %}
                union all
                select window_key from vanished_runs
            )
            {%- endif %}

    ),

    changed_versions as (

        select
            candidates.*,
            current_versions.window_key is not null as replaces_a_version
        from candidates
        left join current_versions on candidates.window_key = current_versions.window_key
        where
            current_versions.window_key is null
            or not (
                {%- for column in config.get('check_cols') %}
                candidates.{{ column }} <=> current_versions.{{ column }}{{ ' and' if not loop.last }}
                {%- endfor %}
            )

    ),

    vanished_versions as (

        select
            current_versions.window_key,
            {%- if vanished_in_audit %}
            coalesce(vanished_runs.vanished_at, {{ late_data_run_time() }}) as vanished_at
            {%- else %}
            {{ late_data_run_time() }} as vanished_at
            {%- endif %}
        from current_versions
        left anti join candidates on current_versions.window_key = candidates.window_key
        {%- if vanished_in_audit %}
        left join vanished_runs on current_versions.window_key = vanished_runs.window_key
        {%- endif %}

    )

    select
        'insert' as dbt_change_type,
        candidates.*,
        candidates.window_key as dbt_unique_key,
        candidates.computed_at as dbt_updated_at,
        candidates.computed_at as dbt_valid_from,
        cast(null as timestamp) as dbt_valid_to,
        {{ late_data_version_id('candidates') }} as dbt_scd_id,
        true as is_current_version
    from candidates
    left semi join changed_versions on candidates.window_key = changed_versions.window_key

    union all

    select
        'update' as dbt_change_type,
        candidates.*,
        candidates.window_key as dbt_unique_key,
        candidates.computed_at as dbt_updated_at,
        candidates.computed_at as dbt_valid_from,
        candidates.computed_at as dbt_valid_to,
        cast(null as string) as dbt_scd_id,
        false as is_current_version
    from candidates
    inner join changed_versions on candidates.window_key = changed_versions.window_key
    where changed_versions.replaces_a_version

    union all

    select
        'delete' as dbt_change_type,
        candidates.*,
        vanished_versions.window_key as dbt_unique_key,
        vanished_versions.vanished_at as dbt_updated_at,
        vanished_versions.vanished_at as dbt_valid_from,
        vanished_versions.vanished_at as dbt_valid_to,
        cast(null as string) as dbt_scd_id,
        false as is_current_version
    from vanished_versions
    left join candidates on false
{%- endmacro %}


{% macro spark__snapshot_merge_sql(target, source, insert_cols) %}
    {#- Late-data histories: the staged changes are merged, if there are any. A close matches the
        window's open version by key, in the partitions of open versions (and, when only this run's
        changes are merged, of the partitions they lie in), so the table format reads only those.
        A change the history already holds is merged as nothing: when the window's open version is
        the staged version itself (valid from the same run time, same check_cols), its insert
        matches it and its close does not. That happens when a run's merge committed but its audit
        row did not (the process died in between): the next run takes the history to be one run
        behind and stages that run's versions again, which would otherwise be inserted twice and
        the first copy closed where it opened. -#}
    {%- if not late_data_is_history() -%}
        {{- return(dbt.spark__snapshot_merge_sql(target, source, insert_cols)) -}}
    {%- endif -%}
    {%- set plan = late_data_history_plan() -%}
    {%- set staged = late_data_stage(source, target) -%}
    {%- set counts = run_query("select count_if(dbt_change_type = 'insert'), count(*) from " ~ staged).rows[0] -%}
    {%- do late_data_record_write(target, {'mode': plan.scope, 'rows_written': counts[0] | int}) -%}
    {%- if counts[1] == 0 -%}
        {{- return('select 1 as nothing_to_record') -}}
    {%- endif %}
    {%- set recorded -%}
        (DBT_INTERNAL_DEST.dbt_valid_from = DBT_INTERNAL_SOURCE.dbt_valid_from
        {%- for column in config.get('check_cols') %}
        and DBT_INTERNAL_DEST.{{ column }} <=> DBT_INTERNAL_SOURCE.{{ column }}
        {%- endfor %})
    {%- endset %}
    merge into {{ target }} as DBT_INTERNAL_DEST
    using {{ staged }} as DBT_INTERNAL_SOURCE
    on DBT_INTERNAL_SOURCE.dbt_unique_key = DBT_INTERNAL_DEST.window_key
        and DBT_INTERNAL_DEST.is_current_version
        and (
            DBT_INTERNAL_SOURCE.dbt_change_type = 'delete'
            or (DBT_INTERNAL_SOURCE.dbt_change_type = 'update' and not {{ recorded }})
            or (DBT_INTERNAL_SOURCE.dbt_change_type = 'insert' and {{ recorded }})
        )
    {%- if plan.checked_from %}
        and DBT_INTERNAL_DEST.partition_start >= {{ late_data_timestamp_literal(plan.checked_from) }}
    {%- endif %}
    when matched
        and DBT_INTERNAL_SOURCE.dbt_change_type != 'insert'
        then update set dbt_valid_to = DBT_INTERNAL_SOURCE.dbt_valid_to, is_current_version = false
    when not matched
        and DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'
        then insert *
{%- endmacro %}


{% macro late_data_history_result() %}
    {#- The result model a late-data history snapshot records: the model it selects from. -#}
    {%- for node_id in model.depends_on.nodes if node_id.startswith('model.') -%}
        {{- return(late_data_model_relation(graph.nodes[node_id].name)) -}}
    {%- endfor -%}
    {%- do exceptions.raise_compiler_error('late-data history ' ~ model.name ~ ' selects from no model') -%}
{% endmacro %}
