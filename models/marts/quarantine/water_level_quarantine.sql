{{ config(materialized='view', tags=['water_level', 'quarantine']) }}

{#- A view over the versions table, so quarantining costs a run nothing beyond loading the
    versions it loads anyway: the table keeps every delivered version with its quarantine reason,
    and only versions without one are counted. -#}

with

reading_versions as (

    select * from {{ ref('int_water_level__versions') }}

),

quarantined_readings as (

    select
        'water_level_readings' as source_table,
        event_id,
        location as series_key,
        event_time,
        cast(reading_value as string) as raw_value,
        ingested_at,
        quarantine_reason,
        loaded_at as quarantined_at
    from reading_versions
    where quarantine_reason is not null

)

select * from quarantined_readings
