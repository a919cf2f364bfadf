{% macro version_id(relation_alias=none) %}
    {#- A history version's id (dbt_scd_id): its window and the run that published it. -#}
    {%- set prefix = relation_alias ~ '.' if relation_alias else '' -%}
    {{- return(late_data.snapshot_hash([prefix ~ 'window_key', prefix ~ 'computed_at'])) -}}
{% endmacro %}


{% macro vanished_keys(plan) %}
    {#- The windows this invocation's result model found vanished, as a SQL VALUES list, or none. -#}
    {%- set keys = [] -%}
    {%- for key in plan.vanished -%}
        {%- do keys.append('(' ~ late_data.sql_string(key) ~ ')') -%}
    {%- endfor -%}
    {{- return(keys | join(', ') if keys else none) -}}
{% endmacro %}


{% macro history_changes(source_sql, plan) %}
    {#- Staging of a history that is up to date: this run's changes, without reading the history. -#}
    {%- set vanished_keys = late_data.vanished_keys(plan) %}
    with

    candidates as (

        {{ source_sql }}

    )
    {%- if vanished_keys %},

    vanished_versions as (

        select window_key, {{ late_data.run_time() }} as vanished_at
        from values {{ vanished_keys }} as vanished(window_key)

    )
    {%- endif %}

    {{ late_data.history_rows(compared=false, vanished=vanished_keys is not none) }}
{%- endmacro %}


{% macro history_comparison(source_sql, target_relation, pipeline, plan) %}
    {#- Staging of a history that is new to this result, catching up, or facing a rebuilt result:
        the candidates compared with the open versions. -#}
    {%- set vanished_in_audit = plan.since is not none -%}
    {%- set run_time = late_data.run_time() %}
    with

    candidates as (

        {{ source_sql }}

    ),
    {%- if vanished_in_audit %}

    vanished_runs as (

        {{ late_data.vanished_runs(late_data.pipeline_relation(pipeline), plan.since) }}

    ),
    {%- endif %}

    current_versions as (

        {{ late_data.open_versions(target_relation, plan) }}

    ),

    changed_versions as (

        select
            candidates.window_key,
            current_versions.window_key is not null as replaces_a_version
        from candidates
        left join current_versions on candidates.window_key = current_versions.window_key
        where current_versions.window_key is null or not {{ late_data.same_version('candidates', 'current_versions', pipeline) }}

    ),

    vanished_versions as (

        select
            current_versions.window_key,
            {{ 'coalesce(vanished_runs.vanished_at, ' ~ run_time ~ ')' if vanished_in_audit else run_time }} as vanished_at
        from current_versions
        left anti join candidates on current_versions.window_key = candidates.window_key
        {%- if vanished_in_audit %}
        left join vanished_runs on current_versions.window_key = vanished_runs.window_key
        {%- endif %}

    )

    {{ late_data.history_rows(compared=true, vanished=true) }}
{%- endmacro %}


{% macro vanished_runs(result, since) %}
    {#- A select of the windows the successful runs of `result` found vanished after `since`, with
        the last such run time (vanished_at). -#}
    select window_key, max(run_time) as vanished_at
    from {{ late_data.run_audit_relation() }}
    lateral view explode(vanished_windows) vanished as window_key
    where
        model = {{ late_data.sql_string(result.identifier) }}
        and outcome = 'success'
        and run_time > {{ late_data.timestamp_literal(since) }}
    group by window_key
{%- endmacro %}


{% macro open_versions(target_relation, plan) %}
    {#- A select of the open versions of the history `target_relation` that the comparison needs:
        all of them (plan.scope 'all'), none, or ('since') those of the candidates' windows and of
        the windows found vanished since the history's last run (CTEs candidates, vanished_runs). -#}
    {%- set vanished_keys = late_data.vanished_keys(plan) %}
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
{%- endmacro %}


{% macro same_version(candidate, current, pipeline) %}
    {#- SQL, parenthesized: the candidate row holds what the open version holds, column by column of
        the pipeline's measures and status (late_data.check_cols) (null-safe). -#}
    (
    {%- for column in late_data.check_cols(pipeline) %}
        {{ candidate }}.{{ column }} <=> {{ current }}.{{ column }}{{ ' and' if not loop.last }}
    {%- endfor %}
    )
{%- endmacro %}


{% macro history_rows(compared, vanished) %}
    {#- The staged rows of a late-data history snapshot from the CTE `candidates` (this run's
        published rows): an insert per new version, an update closing the open version it replaces
        and, with `vanished`, a delete closing the open version of each window in the CTE
        `vanished_versions` (window_key, vanished_at). With `compared`, only the candidates in the
        CTE `changed_versions` (window_key, replaces_a_version) are new versions; without, every
        candidate is, and its update closes its window's open version if there is one. -#}
    select
        'insert' as dbt_change_type,
        candidates.*,
        candidates.window_key as dbt_unique_key,
        candidates.computed_at as dbt_updated_at,
        candidates.computed_at as dbt_valid_from,
        cast(null as timestamp) as dbt_valid_to,
        {{ late_data.version_id('candidates') }} as dbt_scd_id,
        true as is_current_version
    from candidates
    {%- if compared %}
    left semi join changed_versions on candidates.window_key = changed_versions.window_key
    {%- endif %}

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
    {%- if compared %}
    inner join changed_versions on candidates.window_key = changed_versions.window_key
    where changed_versions.replaces_a_version
    {%- endif %}
    {%- if vanished %}

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
    {%- endif %}
{%- endmacro %}


{% macro snapshot_hash(args) %}
    {#- dbt-spark's snapshot_hash_arguments, for the version ids of a history (dbt_scd_id). -#}
    md5({%- for arg in args -%}
        coalesce(cast({{ arg }} as string), '')
        {% if not loop.last %} || '|' || {% endif %}
    {%- endfor -%})
{%- endmacro %}
