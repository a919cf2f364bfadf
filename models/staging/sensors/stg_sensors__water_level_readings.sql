with

source as (

    select * from {{ source('sensors', 'water_level_readings') }}

),

checked as (

    select
        *,
        {{ raw_quarantine_reason(
            required_columns=['event_id', 'location', 'event_time', 'value', 'ingested_at'],
            exact_sum_column='value',
        ) }} as quarantine_reason
    from source

),

renamed as (

    select
        event_id,
        location,
        event_time,
        value as reading_value,  -- noqa: RF04
        ingested_at,
        quarantine_reason
    from checked

)

select * from renamed
