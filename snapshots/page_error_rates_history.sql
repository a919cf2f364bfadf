{% snapshot page_error_rates_history %}

{{
    config(
        unique_key='window_key',
        strategy='check',
        check_cols=['counted_rows', 'error_count', 'view_count', 'is_final'],
        hard_deletes='invalidate',
        partition_by=['partition_start', 'series_bucket', 'is_current_version'],
        tblproperties=late_data_history_table_properties(),
        file_format=env_var('LATE_DATA_TABLE_FORMAT', 'iceberg'),
        tags=['late_data', 'late_data_history', 'page_error_rates'],
        meta={'late_data_sources': ['page_errors', 'page_views'], 'late_data_role': 'history'},
    )
}}

{#- Like water_level_window_means_history: only the windows changed in this run are compared. -#}

select
    {{ late_data_window_key(['window_start', 'page']) }} as window_key,
    window_start,
    window_end,
    page,
    error_count,
    view_count,
    error_rate_percent,
    counted_rows,
    is_final,
    final_at,
    computed_at,
    invocation_id,
    partition_start,
    series_bucket
from {{ ref('page_error_rates') }}
where {{ late_data_history_candidates(ref('page_error_rates')) }}

{% endsnapshot %}
