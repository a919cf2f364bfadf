{% snapshot water_level_window_means_history %}

{{
    config(
        unique_key='window_key',
        strategy='check',
        check_cols=['reading_count', 'mean_value', 'is_final'],
        hard_deletes='invalidate',
        partition_by=['partition_start', 'series_bucket', 'is_current_version'],
        tblproperties=late_data_history_table_properties(),
        file_format=env_var('LATE_DATA_TABLE_FORMAT', 'iceberg'),
        tags=['late_data', 'late_data_history', 'water_level'],
        meta={'late_data_sources': ['water_level_readings'], 'late_data_role': 'history'},
    )
}}

{#- Only the windows the result model changed in this run are compared (late_data_history_plan);
    every version is valid from the run time that published it (computed_at). -#}

select
    {{ late_data_window_key(['window_start', 'location']) }} as window_key,
    window_start,
    window_end,
    location,
    reading_count,
    mean_value,
    is_final,
    final_at,
    value_sum,
    computed_at,
    invocation_id,
    partition_start,
    series_bucket
from {{ ref('water_level_window_means') }}
where {{ late_data_history_candidates(ref('water_level_window_means')) }}

{% endsnapshot %}
