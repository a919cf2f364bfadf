{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='reading_version_id',
        on_schema_change='fail',
        tags=['late_data', 'too_late_rows'],
    )
}}

{#- Each run lists the versions that arrived since the last successful run (merge makes a rerun
    harmless); a version's lateness is fixed when it arrives. -#}
{%- set last_run_time = late_data_last_run_time(this) if is_incremental() else none %}
{%- set arrived_after = (
    late_data_timestamp_literal(last_run_time) if last_run_time else "timestamp'1970-01-01 00:00:00'"
) %}

with

readings as (

    select * from {{ ref('int_water_level_readings__windowed') }}
    where
        ingested_at <= {{ late_data_run_time() }}
        and ingested_at > {{ arrived_after }}

),

too_late as (

    -- Versions that could not be applied in full: they arrived after their own window was
    -- final, or they replace a version whose window was already final (that window keeps
    -- the old version).
    select
        sha2(
            concat_ws(
                '|', event_id, cast(ingested_at as string), cast(event_time as string),
                cast(reading_value as string), location
            ),
            256
        ) as reading_version_id,
        event_id,
        location,
        event_time,
        reading_value,
        ingested_at,
        window_start,
        final_at,
        case
            when ingested_at > final_at then 'arrived_after_final'
            else 'replaces_final_version'
        end as too_late_reason,
        unix_seconds(ingested_at) - unix_seconds(coalesce(
            case when ingested_at > final_at then final_at end, previous_version_final_at
        )) as seconds_after_final,
        {{ late_data_run_time() }} as detected_at,
        '{{ invocation_id }}' as invocation_id
    from readings
    where ingested_at > final_at or ingested_at > previous_version_final_at

)

select * from too_late
