{{ config(materialized='view') }}

with

versions as (

    select * from {{ ref('water_level_window_means_history') }}

),

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
        lag(versions.reading_count) over window_versions as previous_reading_count,
        lag(versions.mean_value) over window_versions as previous_mean_value
    from versions
    window window_versions as (partition by versions.window_key order by versions.dbt_valid_from)

),

revisions as (

    select
        numbered.window_start,
        numbered.location,
        numbered.version_number,
        numbered.mean_value,
        numbered.reading_count,
        numbered.is_final,
        numbered.dbt_valid_from as valid_from,
        numbered.dbt_valid_to as valid_to,
        numbered.mean_value - numbered.previous_mean_value as mean_change,
        100 * (numbered.mean_value - numbered.previous_mean_value)
        / nullif(abs(numbered.previous_mean_value), 0) as mean_change_percent,
        numbered.reading_count - numbered.previous_reading_count as count_change,
        -- Late data only adds rows; fewer rows, or other values at the same count, mean a
        -- correction replaced or moved a reading. A change of status alone is finalization.
        case
            when numbered.version_number = 1 then 'initial'
            when run_kinds.run_kind = 'backfill' then 'backfill'
            when numbered.reading_count < numbered.previous_reading_count then 'correction'
            when numbered.reading_count > numbered.previous_reading_count then 'late_data'
            when numbered.mean_value != numbered.previous_mean_value then 'correction'
            else 'finalized'
        end as revision_reason
    from numbered
    left join run_kinds on numbered.invocation_id = run_kinds.invocation_id

)

select * from revisions
