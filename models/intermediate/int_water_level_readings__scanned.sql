{{ config(materialized='ephemeral') }}

{#- Ephemeral: compiled once per invocation, so every model of a run reads the same scan horizon
    and the horizon's lookups run once. -#}

select *
from {{ ref('int_water_level_readings__windowed') }}
where {{ late_data_scan_horizon(ref('int_water_level_readings__windowed'), ['water_level_readings']) }}
