{% macro late_data_version_id(relation_alias=none) %}
    {#- A history version's id (dbt_scd_id): its window and the run that published it. -#}
    {%- set prefix = relation_alias ~ '.' if relation_alias else '' -%}
    {{- return(snapshot_hash_arguments([prefix ~ 'window_key', prefix ~ 'computed_at'])) -}}
{% endmacro %}


{% macro late_data_vanished_keys(plan) %}
    {#- The windows this invocation's result model found vanished, as a SQL VALUES list, or none. -#}
    {%- set keys = [] -%}
    {%- for key in plan.vanished -%}
        {%- do keys.append('(' ~ late_data_string_literal(key) ~ ')') -%}
    {%- endfor -%}
    {{- return(keys | join(', ') if keys else none) -}}
{% endmacro %}


{% macro late_data_history_changes(source_sql, plan) %}
    {#- Staging of a history that is up to date: this run's changes, without reading the history. -#}
    {%- set vanished_keys = late_data_vanished_keys(plan) %}
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
    from (select * from values {{ vanished_keys }} as vanished(window_key)) as vanished
    left join candidates on false
    {%- endif %}
{%- endmacro %}


{% macro late_data_history_comparison(source_sql, target_relation, plan) %}
    {#- Staging of a history that is new to this result, catching up, or facing a rebuilt result:
        the candidates compared with the open versions. -#}
    {%- set result = late_data_history_result() -%}
    {%- set vanished_in_audit = plan.since is not none -%}
    {%- set vanished_keys = late_data_vanished_keys(plan) %}
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
                select * from values {{ vanished_keys }}
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


{% macro late_data_history_result() %}
    {#- The result model a late-data history snapshot records: the model it selects from. -#}
    {%- for node_id in model.depends_on.nodes if node_id.startswith('model.') -%}
        {{- return(late_data_model_relation(graph.nodes[node_id].name)) -}}
    {%- endfor -%}
    {%- do exceptions.raise_compiler_error('late-data history ' ~ model.name ~ ' selects from no model') -%}
{% endmacro %}
