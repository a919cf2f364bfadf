with

source as (

    select * from {{ source('web', 'page_errors') }}

),

typed as (

    select
        cast(event_id as string) as event_id,
        cast(page as string) as page,
        cast(event_time as timestamp) as event_time,
        cast(value as bigint) as error_count,  -- noqa: RF04
        cast(ingested_at as timestamp) as ingested_at
    from source

)

select * from typed
