{% snapshot page_error_rates_history %}

{{
    config(
        unique_key='window_key',
        strategy='check',
        check_cols=['counted_rows', 'error_count', 'view_count', 'is_final'],
        hard_deletes='invalidate',
        partition_by=['partition_start'],
        file_format=env_var('LATE_DATA_TABLE_FORMAT', 'iceberg'),
        tags=['late_data', 'late_data_history', 'web_pages'],
        meta={'late_data_sources': ['page_errors', 'page_views']},
    )
}}

{#- Like water_level_window_means_history: only the partitions a run can have changed are compared. -#}

select
    concat(page, '|', cast(window_start as string)) as window_key,
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
    partition_start
from {{ ref('page_error_rates') }}
where {{ late_data_checked_partitions(this) if late_data_relation_exists(this) else 'true' }}

{% endsnapshot %}
