{{ config(materialized='late_data') }}

with

orders as (

    select * from {{ source('shop', 'orders') }}

),

customers as (

    select * from {{ ref('customers_snapshot') }}

)

-- Each order joins its customer's row valid at the order's event time.
select
    orders.event_id,
    orders.customer_id,
    customers.region,
    orders.event_time,
    orders.amount,
    orders.ingested_at
from orders
left join customers
    on
        orders.customer_id = customers.customer_id
        and orders.event_time >= customers.dbt_valid_from
        and (orders.event_time < customers.dbt_valid_to or customers.dbt_valid_to is null)
