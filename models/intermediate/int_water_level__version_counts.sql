{{
    config(
        materialized='ephemeral',
        tags=['late_data', 'water_level'],
    )
}}

{#- The reading versions this run's result model and too-late listing look at, with their version
    chain, and whether each counts now and counted at the previous run. Ephemeral: each model that
    reads it works it out inside its own query, in this run, so nothing is written for it. -#}

with

version_counts as (

    {{ late_data_version_counts(
        ref('int_water_level__versions'),
        late_window_seconds=late_data_late_window_seconds(['water_level_readings']),
        series_key='location',
        counted_for='water_level_window_means',
        listed_for=['water_level_too_late_readings'],
        tie_breaker_columns=['reading_value', 'location'],
    ) }}

)

select * from version_counts
