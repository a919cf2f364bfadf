{% snapshot water_level_window_means_history %}

{{
    config(
        unique_key='window_key',
        strategy='check',
        check_cols=['reading_count', 'mean_value', 'is_final'],
        hard_deletes='invalidate',
        partition_by=['partition_start'],
        file_format=env_var('LATE_DATA_TABLE_FORMAT', 'iceberg'),
        tags=['late_data', 'late_data_history', 'water_level'],
        meta={'late_data_sources': ['water_level_readings']},
    )
}}

{#- Only the partitions a run can have changed are compared: the snapshot's per-run cost follows
    the late window, not the length of history (see spark__snapshot_staging_table). -#}

select
    concat(location, '|', cast(window_start as string)) as window_key,
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
    partition_start
from {{ ref('water_level_window_means') }}
where {{ late_data_checked_partitions(this) if late_data_relation_exists(this) else 'true' }}

{% endsnapshot %}
