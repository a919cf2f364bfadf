{{ config(materialized='ephemeral') }}

{#- Ephemeral for the same reason as int_water_level_readings__scanned. -#}

select *
from {{ ref('int_page_counts__windowed') }}
where {{ late_data_scan_horizon(ref('int_page_counts__windowed'), ['page_errors', 'page_views']) }}
