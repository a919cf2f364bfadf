{% macro late_data_relation_exists(relation) %}
    {{- return(execute and load_relation(relation) is not none) -}}
{% endmacro %}


{% macro spark__snapshot_get_time() %}
    {#- Versions are stamped with the run time, not the wall clock, so history and as-of reads
        live on the same time axis as the runs (and a replay at run time T can be compared). -#}
    {{- late_data_run_time() -}}
{% endmacro %}


{% macro spark__snapshot_staging_table(strategy, source_sql, target_relation) %}
    {#- For snapshots tagged `late_data_history`: compare only the stored versions in the
        partitions the snapshot's query selects, so cost follows the late window and
        hard_deletes='invalidate' closes exactly the windows that vanished in that range. -#}
    {%- if 'late_data_history' in config.get('tags', []) -%}
        {%- set stored_in_range -%}
            (select * from {{ target_relation }} where {{ late_data_checked_partitions(target_relation) }})
        {%- endset -%}
        {{- return(default__snapshot_staging_table(strategy, source_sql, stored_in_range)) -}}
    {%- endif -%}
    {{- return(default__snapshot_staging_table(strategy, source_sql, target_relation)) -}}
{% endmacro %}


{% macro spark__snapshot_merge_sql(target, source, insert_cols) %}
    {#- For snapshots tagged `late_data_history`: dbt-spark's merge, with the target restricted to
        the checked partitions in its join condition, so the table format reads and rewrites only
        the files of the partitions a run can have changed (every version closed or added lies
        there: see spark__snapshot_staging_table). Other snapshots get dbt-spark's merge. -#}
    {%- if 'late_data_history' not in config.get('tags', []) -%}
        {{- return(dbt.spark__snapshot_merge_sql(target, source, insert_cols)) -}}
    {%- endif -%}
    {%- set columns = config.get('snapshot_table_column_names') or get_snapshot_table_column_names() %}
    merge into {{ target }} as DBT_INTERNAL_DEST
    using {{ source.identifier if target.is_iceberg else source }} as DBT_INTERNAL_SOURCE
    on DBT_INTERNAL_SOURCE.{{ columns.dbt_scd_id }} = DBT_INTERNAL_DEST.{{ columns.dbt_scd_id }}
        and {{ late_data_checked_partitions(target, partition_column='DBT_INTERNAL_DEST.partition_start') }}
    when matched
        and DBT_INTERNAL_DEST.{{ columns.dbt_valid_to }} is null
        and DBT_INTERNAL_SOURCE.dbt_change_type in ('update', 'delete')
        then update set {{ columns.dbt_valid_to }} = DBT_INTERNAL_SOURCE.{{ columns.dbt_valid_to }}
    when not matched
        and DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'
        then insert *
{%- endmacro %}


{% macro late_data_as_of(history, as_of=none) %}
    {#- The versions of a snapshot valid at `as_of` (a SQL timestamp expression): the table as it
        stood right after the last run at or before that moment. Without `as_of`: the current versions. -#}
    select *
    from {{ history }}
    where
    {%- if as_of is none %}
        dbt_valid_to is null
    {%- else %}
        dbt_valid_from <= {{ as_of }}
        and (dbt_valid_to > {{ as_of }} or dbt_valid_to is null)
    {%- endif %}
{%- endmacro %}


{% macro late_data_window_revisions(history, key_columns, count_column, value_column) %}
    {#- A select of every version in a late-data snapshot `history`, per window key, with its
        number, the change from the previous version and a reason: `initial`, `backfill` (written
        by a backfill run), `late_data` (more rows), `correction` (fewer rows, or another value at
        the same count: a correction replaced or moved a row) or `finalized` (status only). -#}
    with

    run_kinds as (

        select distinct
            invocation_id,
            run_kind
        from {{ source('late_data_audit', 'late_data_run_audit') }}
        where model_role = 'windows'

    ),

    numbered as (

        select
            versions.*,
            row_number() over window_versions as version_number,
            lag(versions.{{ count_column }}) over window_versions as previous_count,
            lag(versions.{{ value_column }}) over window_versions as previous_value
        from {{ history }} as versions
        window window_versions as (
            partition by {% for key in key_columns %}versions.{{ key }}{{ ', ' if not loop.last }}{% endfor %}
            order by versions.dbt_valid_from
        )

    )

    select
        {%- for key in key_columns %}
        numbered.{{ key }},
        {%- endfor %}
        numbered.version_number,
        numbered.{{ value_column }},
        numbered.{{ count_column }},
        numbered.is_final,
        numbered.dbt_valid_from as valid_from,
        numbered.dbt_valid_to as valid_to,
        numbered.{{ value_column }} - numbered.previous_value as value_change,
        100 * (numbered.{{ value_column }} - numbered.previous_value)
        / nullif(abs(numbered.previous_value), 0) as value_change_percent,
        numbered.{{ count_column }} - numbered.previous_count as count_change,
        case
            when numbered.version_number = 1 then 'initial'
            when run_kinds.run_kind = 'backfill' then 'backfill'
            when numbered.{{ count_column }} < numbered.previous_count then 'correction'
            when numbered.{{ count_column }} > numbered.previous_count then 'late_data'
            when not numbered.{{ value_column }} <=> numbered.previous_value then 'correction'
            else 'finalized'
        end as revision_reason
    from numbered
    left join run_kinds on numbered.invocation_id = run_kinds.invocation_id
{%- endmacro %}
