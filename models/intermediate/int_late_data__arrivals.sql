{#- Every row version of every late-data source that has arrived, with how late it arrived, measured
    from its event time and from its window's end, and the late window configured for its source
    (the package's late_data.arrivals, over the staging views: every row the raw tables hold, not
    only those a run has loaded). Arrived means by the run time when one is given; otherwise by the
    moment the view is read (these are views, read long after they were built). A row stamped
    later (a clock ahead) has not arrived yet and would skew the lateness. -#}

{%- set arrived_by = late_data.run_time() if var('run_time', none) else 'current_timestamp()' %}
{%- set water_levels = late_data.pipeline_named('water_level_window_means', stand_in={'series_key': ['location']}) %}
{%- set page_counts = late_data.pipeline_named(
    'page_error_rates', stand_in={'series_key': ['page'], 'source_column': 'source_table'}
) %}

with

water_level_readings as (

    select * from {{ ref('stg_sensors__water_level_readings') }}

),

page_errors as (

    select * from {{ ref('stg_web__page_errors') }}

),

page_views as (

    select * from {{ ref('stg_web__page_views') }}

),

page_count_versions as (

    {{ page_error_rates_union('page_errors', 'page_views', carried_columns=['quarantine_reason']) }}

),

arrivals as (

    {{ late_data.arrivals('water_level_readings', water_levels) }}
    union all
    {{ late_data.arrivals('page_count_versions', page_counts) }}

)

select * from arrivals
where ingested_at <= {{ arrived_by }}
