{#- History snapshots of late-data result models (tag `late_data_history`). Each run compares only
    what late_data_history_plan says can have changed, and stamps every version with the run time
    that published it (the result row's computed_at), so history lives on the runs' time axis and
    a snapshot that catches up after a failure still records each version when it was published.
    Other snapshots get dbt-spark's behaviour. -#}

{% macro spark__snapshot_get_time() %}
    {#- Stamps (deletions, dbt_updated_at) use the run time, not the wall clock. -#}
    {{- late_data_run_time() -}}
{% endmacro %}


{% macro late_data_is_history() %}
    {{- return('late_data_history' in config.get('tags', [])) -}}
{% endmacro %}


{% macro late_data_version_id() %}
    {{- return(snapshot_hash_arguments(['window_key', 'computed_at'])) -}}
{% endmacro %}


{% macro spark__build_snapshot_table(strategy, sql) %}
    {%- if not late_data_is_history() -%}
        {{- return(default__build_snapshot_table(strategy, sql)) -}}
    {%- endif %}
    select
        *,
        {{ late_data_version_id() }} as dbt_scd_id,
        computed_at as dbt_updated_at,
        computed_at as dbt_valid_from,
        cast(null as timestamp) as dbt_valid_to
    from (
        {{ sql }}
    ) as published_windows
{%- endmacro %}


{% macro spark__snapshot_staging_table(strategy, source_sql, target_relation) %}
    {#- The changes a late-data history records: a new version for each candidate window whose
        check_cols differ from its current version (or that has none), valid from its computed_at;
        the replaced version closed at that moment; and the current version of each window that
        vanished closed at the run that found it vanished. -#}
    {%- if not late_data_is_history() -%}
        {{- return(default__snapshot_staging_table(strategy, source_sql, target_relation)) -}}
    {%- endif -%}
    {%- set plan = late_data_history_plan() -%}
    {%- set result = late_data_history_result() -%}
    {%- set vanished_keys = [] -%}
    {%- for key in plan.vanished -%}
        {%- do vanished_keys.append("('" ~ key | replace("'", "\\'") ~ "')") -%}
    {%- endfor %}
    with

    candidates as (

        {{ source_sql }}

    ),

    current_versions as (

        select *
        from {{ target_relation }}
        where
            dbt_valid_to is null
            {%- if plan.scope == 'none' %}
            and false
            {%- elif plan.scope == 'changes' %}
            {%- if plan.checked_from %}
            and partition_start >= {{ late_data_timestamp_literal(plan.checked_from) }}
            {%- endif %}
            and window_key in (
                select window_key from candidates
                {%- if vanished_keys %}
                union all
                select * from values {{ vanished_keys | join(', ') }}
                {%- endif %}
            )
            {%- endif %}

    ),

    changed_versions as (

        select
            candidates.*,
            current_versions.dbt_scd_id as replaced_version_id
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
            current_versions.dbt_scd_id,
            {%- if plan.scope == 'all' %}
            coalesce(vanished_runs.vanished_at, {{ late_data_run_time() }}) as vanished_at
            {%- else %}
            {{ late_data_run_time() }} as vanished_at
            {%- endif %}
        from current_versions
        left anti join candidates on current_versions.window_key = candidates.window_key
        {%- if plan.scope == 'all' %}
        left join (
            -- Catching up: the run that found each window vanished, from the result model's audit.
            select window_key, max(run_time) as vanished_at
            from {{ late_data_run_audit_relation() }}
            lateral view explode(vanished_windows) vanished as window_key
            where
                model = '{{ result.identifier }}'
                and outcome = 'success'
                {%- if plan.since %}
                and run_time > {{ late_data_timestamp_literal(plan.since) }}
                {%- endif %}
            group by window_key
        ) as vanished_runs on current_versions.window_key = vanished_runs.window_key
        {%- endif %}

    )

    select
        'insert' as dbt_change_type,
        *,
        window_key as dbt_unique_key,
        computed_at as dbt_updated_at,
        computed_at as dbt_valid_from,
        cast(null as timestamp) as dbt_valid_to,
        {{ late_data_version_id() }} as dbt_scd_id
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
        changed_versions.replaced_version_id as dbt_scd_id
    from candidates
    inner join changed_versions on candidates.window_key = changed_versions.window_key
    where changed_versions.replaced_version_id is not null

    union all

    select
        'delete' as dbt_change_type,
        candidates.*,
        vanished_versions.window_key as dbt_unique_key,
        vanished_versions.vanished_at as dbt_updated_at,
        vanished_versions.vanished_at as dbt_valid_from,
        vanished_versions.vanished_at as dbt_valid_to,
        vanished_versions.dbt_scd_id
    from vanished_versions
    left join candidates on false
{%- endmacro %}


{% macro spark__snapshot_merge_sql(target, source, insert_cols) %}
    {#- Late-data histories: the staged changes are merged, if there are any, with the target
        restricted to the partitions that can hold a replaced version, so the table format reads
        and rewrites only their files. -#}
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
    merge into {{ target }} as DBT_INTERNAL_DEST
    using {{ staged }} as DBT_INTERNAL_SOURCE
    on DBT_INTERNAL_SOURCE.dbt_scd_id = DBT_INTERNAL_DEST.dbt_scd_id
    {%- if plan.scope == 'changes' and plan.checked_from %}
        and DBT_INTERNAL_DEST.partition_start >= {{ late_data_timestamp_literal(plan.checked_from) }}
    {%- endif %}
    when matched
        and DBT_INTERNAL_DEST.dbt_valid_to is null
        and DBT_INTERNAL_SOURCE.dbt_change_type in ('update', 'delete')
        then update set dbt_valid_to = DBT_INTERNAL_SOURCE.dbt_valid_to
    when not matched
        and DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'
        then insert *
{%- endmacro %}


{% macro late_data_history_result() %}
    {#- The result model a late-data history snapshot records: the model it selects from. -#}
    {%- for node_id in model.depends_on.nodes if node_id.startswith('model.') -%}
        {%- set node = graph.nodes[node_id] -%}
        {{- return(api.Relation.create(schema=node.schema, identifier=node.alias, type='table')) -}}
    {%- endfor -%}
    {%- do exceptions.raise_compiler_error('late-data history ' ~ model.name ~ ' selects from no model') -%}
{% endmacro %}
