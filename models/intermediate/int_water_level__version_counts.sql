{{
    config(
        materialized='table',
        tags=['late_data', 'water_level'],
        meta={'late_data_sources': ['water_level_readings'], 'late_data_role': 'version_counts'},
    )
}}

{#- Rewritten every run: the reading versions this run's result model and too-late listing look
    at, with their version chain, and whether each counts now and counted at the previous run. -#}

with

version_counts as (

    {{ late_data_version_counts(
        ref('int_water_level_readings__versions'),
        late_window_seconds=late_data_late_window_seconds(['water_level_readings']),
        series_key='location',
        counted_for='water_level_window_means',
        listed_for=['water_level_too_late_readings'],
        tie_breaker_columns=['reading_value', 'location'],
    ) }}

)

select * from version_counts
