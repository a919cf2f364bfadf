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

)

select * from typed
