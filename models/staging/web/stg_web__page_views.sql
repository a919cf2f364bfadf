with

source as (

    select * from {{ source('web', 'page_views') }}

),

checked as (

    select
        *,
        {{ raw_quarantine_reason(
            required_columns=['event_id', 'page', 'event_time', 'value', 'ingested_at'],
            count_column='value',
        ) }} as quarantine_reason
    from source

),

renamed as (

    select
        event_id,
        page,
        event_time,
        value as view_count,  -- noqa: RF04
        ingested_at,
        quarantine_reason
    from checked

)

select * from renamed
