with

source as (

    select * from {{ source('sensors', 'water_level_readings') }}

),

typed as (

    select
        cast(event_id as string) as event_id,
        cast(location as string) as location,
        cast(event_time as timestamp) as event_time,
        cast(value as double) as reading_value,  -- noqa: RF04
        cast(ingested_at as timestamp) as ingested_at
    from source

),

versioned as (

    -- All versions of a reading, each with the arrival of the next one: a version is current
    -- from its own ingested_at until superseded_at (null while it is the latest).
    select
        event_id,
        location,
        event_time,
        reading_value,
        ingested_at,
        lead(ingested_at) over reading_versions as superseded_at,
        lag(event_time) over reading_versions as previous_version_event_time
    from typed
    window reading_versions as (
        partition by event_id
        order by ingested_at, event_time, reading_value, location
    )

)

select * from versioned
