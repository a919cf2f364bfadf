-- The SQL of a rebuild run at 2026-01-01 01:15:10, as `late-data explain` compiles it.
-- Each node's select; its materialization stages and writes it as the line under its name says.

-- node: int_page_error_rates__versions
-- model, incremental: staged (cached), then written by insert_overwrite into the partitions it holds
with

page_errors as (

    select * from analytics.stg_web__page_errors

),

page_views as (

    select * from analytics.stg_web__page_views

),

delivered_versions as (

    
    select
        'page_errors' as source_table,
        event_id,
        page,
        event_time,
        error_count,
        0 as view_count,
        ingested_at,
        quarantine_reason
    from page_errors
    
    union all
    
    select
        'page_views' as source_table,
        event_id,
        page,
        event_time,
        0 as error_count,
        view_count,
        ingested_at,
        quarantine_reason
    from page_views
    

),

new_versions as (

    
    -- Written in arrival order, so every file covers a narrow range of stamps and later runs,
    -- which read by stamp, skip the files they do not need.
    select * from delivered_versions
    order by ingested_at

)

select
    source_table,
    event_id,
    page,
    event_time,
    error_count,
    view_count,
    ingested_at,
    quarantine_reason,
    timestamp'2026-01-01 01:15:10' as loaded_at
from new_versions


-- node: int_water_level__versions
-- model, incremental: staged (cached), then written by insert_overwrite into the partitions it holds
with

delivered_versions as (

    select * from analytics.stg_sensors__water_level_readings

),

new_versions as (

    
    -- Written in arrival order, so every file covers a narrow range of stamps and later runs,
    -- which read by stamp, skip the files they do not need.
    select * from delivered_versions
    order by ingested_at

)

select
    event_id,
    location,
    event_time,
    reading_value,
    ingested_at,
    quarantine_reason,
    timestamp'2026-01-01 01:15:10' as loaded_at
from new_versions


-- node: accepted_values_int_page_error_rates__versions_source_table__page_errors__page_views
-- test, test: test
with all_values as (

    select
        source_table as value_field,
        count(*) as n_records

    from analytics.int_page_error_rates__versions
    group by source_table

)

select *
from all_values
where value_field not in (
    'page_errors','page_views'
)


-- node: late_data_ambiguous_versions_int_page_error_rates__versions_source_table__event_id__page__event_time__error_count__view_count
-- test, test: test
select
        source_table, event_id,
        ingested_at,
        count(*) as versions,
        to_json(collect_set(struct(page, event_time, error_count, view_count))) as ambiguous_values
    from analytics.int_page_error_rates__versions
    where quarantine_reason is null
    group by source_table, event_id, ingested_at
    having count(distinct struct(page, event_time, error_count, view_count)) > 1


-- node: not_null_int_page_error_rates__versions_loaded_at
-- test, test: test
select loaded_at
from analytics.int_page_error_rates__versions
where loaded_at is null


-- node: unique_combination_of_columns_int_page_error_rates__versions_source_table__event_id__event_time__error_count__view_count__page__ingested_at
-- test, test: test
select
        source_table, event_id, event_time, error_count, view_count, page, ingested_at,
        count(*) as occurrences
    from analytics.int_page_error_rates__versions
    group by source_table, event_id, event_time, error_count, view_count, page, ingested_at
    having count(*) > 1


-- node: late_data_ambiguous_versions_int_water_level__versions_event_id__location__event_time__reading_value
-- test, test: test
select
        event_id,
        ingested_at,
        count(*) as versions,
        to_json(collect_set(struct(location, event_time, reading_value))) as ambiguous_values
    from analytics.int_water_level__versions
    where quarantine_reason is null
    group by event_id, ingested_at
    having count(distinct struct(location, event_time, reading_value)) > 1


-- node: not_null_int_water_level__versions_loaded_at
-- test, test: test
select loaded_at
from analytics.int_water_level__versions
where loaded_at is null


-- node: unique_combination_of_columns_int_water_level__versions_event_id__location__event_time__reading_value__ingested_at
-- test, test: test
select
        event_id, location, event_time, reading_value, ingested_at,
        count(*) as occurrences
    from analytics.int_water_level__versions
    group by event_id, location, event_time, reading_value, ingested_at
    having count(*) > 1


-- node: page_error_rates_too_late_counts
-- model, incremental: staged (cached), then written by insert_overwrite into the partitions it holds
with

 __dbt__cte__int_page_error_rates__version_counts as (
with

version_counts as (

    
    with

    selected_versions as (

        select selected.*
        from analytics.int_page_error_rates__versions as selected
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and true

    ),

    windowed_versions as (

        
    select
        *,
        
    window_start + interval 60 second as window_end,
        
    window_start + interval 3660 second as final_at,
        timestamp_seconds(unix_seconds(window_start) + 60 + case source_table
        when 'page_errors' then 3600
        when 'page_views' then 3600
    end) as version_final_at,
        timestamp_seconds(floor(unix_seconds(event_time) / 600) * 600) as partition_start,
        cast(pmod(xxhash64(page), 1) as int) as series_bucket
    from (
        select
            *,
            timestamp_seconds(floor(unix_seconds(event_time) / 60) * 60) as window_start
        from selected_versions
    )

    ),

    chained_versions as (

        
    select
        *,
        min(ingested_at) over later_versions as superseded_at,
        cast(null as timestamp) as superseded_before,
        lag(version_final_at) over event_versions as previous_version_final_at
    from windowed_versions
    window
        event_versions as (partition by source_table, event_id order by ingested_at, event_time, error_count, view_count, page),
        later_versions as (
            partition by source_table, event_id order by ingested_at, event_time, error_count, view_count, page rows between 1 following and unbounded following
        )

    )

    select
        *,
        
        (ingested_at <= least(timestamp'2026-01-01 01:15:10', version_final_at) and coalesce(superseded_at > least(timestamp'2026-01-01 01:15:10', version_final_at), true)) as counts_now,
        false as counted_before,
        false as written_late
    from chained_versions

)

select * from version_counts
), version_counts as (

    select * from __dbt__cte__int_page_error_rates__version_counts

),

too_late_versions as (

    
    select
        sha2(concat_ws('|', cast(source_table as string), cast(event_id as string), cast(ingested_at as string), cast(event_time as string), cast(error_count as string), cast(view_count as string), cast(page as string)), 256)
            as version_id,
        *,
        case
            when ingested_at > version_final_at then 'arrived_after_final'
            else 'replaces_final_version'
        end as too_late_reason,
        unix_seconds(ingested_at) - unix_seconds(coalesce(
            case when ingested_at > version_final_at then version_final_at end, previous_version_final_at
        )) as seconds_after_final
    from version_counts
    where
        (ingested_at > version_final_at or ingested_at > previous_version_final_at)

)

select
    version_id,
    source_table,
    event_id,
    page,
    event_time,
    error_count,
    view_count,
    ingested_at,
    window_start,
    version_final_at as final_at,
    too_late_reason,
    seconds_after_final,
    timestamp'2026-01-01 01:15:10' as detected_at,
    '<invocation_id>' as invocation_id
from too_late_versions


-- node: not_null_int_page_error_rates__version_counts_counted_before
-- test, test: test
with __dbt__cte__int_page_error_rates__version_counts as (
with

version_counts as (

    
    with

    selected_versions as (

        select selected.*
        from analytics.int_page_error_rates__versions as selected
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and true

    ),

    windowed_versions as (

        
    select
        *,
        
    window_start + interval 60 second as window_end,
        
    window_start + interval 3660 second as final_at,
        timestamp_seconds(unix_seconds(window_start) + 60 + case source_table
        when 'page_errors' then 3600
        when 'page_views' then 3600
    end) as version_final_at,
        timestamp_seconds(floor(unix_seconds(event_time) / 600) * 600) as partition_start,
        cast(pmod(xxhash64(page), 1) as int) as series_bucket
    from (
        select
            *,
            timestamp_seconds(floor(unix_seconds(event_time) / 60) * 60) as window_start
        from selected_versions
    )

    ),

    chained_versions as (

        
    select
        *,
        min(ingested_at) over later_versions as superseded_at,
        cast(null as timestamp) as superseded_before,
        lag(version_final_at) over event_versions as previous_version_final_at
    from windowed_versions
    window
        event_versions as (partition by source_table, event_id order by ingested_at, event_time, error_count, view_count, page),
        later_versions as (
            partition by source_table, event_id order by ingested_at, event_time, error_count, view_count, page rows between 1 following and unbounded following
        )

    )

    select
        *,
        
        (ingested_at <= least(timestamp'2026-01-01 01:15:10', version_final_at) and coalesce(superseded_at > least(timestamp'2026-01-01 01:15:10', version_final_at), true)) as counts_now,
        false as counted_before,
        false as written_late
    from chained_versions

)

select * from version_counts
) select counted_before
from __dbt__cte__int_page_error_rates__version_counts
where counted_before is null


-- node: not_null_int_page_error_rates__version_counts_counts_now
-- test, test: test
with __dbt__cte__int_page_error_rates__version_counts as (
with

version_counts as (

    
    with

    selected_versions as (

        select selected.*
        from analytics.int_page_error_rates__versions as selected
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and true

    ),

    windowed_versions as (

        
    select
        *,
        
    window_start + interval 60 second as window_end,
        
    window_start + interval 3660 second as final_at,
        timestamp_seconds(unix_seconds(window_start) + 60 + case source_table
        when 'page_errors' then 3600
        when 'page_views' then 3600
    end) as version_final_at,
        timestamp_seconds(floor(unix_seconds(event_time) / 600) * 600) as partition_start,
        cast(pmod(xxhash64(page), 1) as int) as series_bucket
    from (
        select
            *,
            timestamp_seconds(floor(unix_seconds(event_time) / 60) * 60) as window_start
        from selected_versions
    )

    ),

    chained_versions as (

        
    select
        *,
        min(ingested_at) over later_versions as superseded_at,
        cast(null as timestamp) as superseded_before,
        lag(version_final_at) over event_versions as previous_version_final_at
    from windowed_versions
    window
        event_versions as (partition by source_table, event_id order by ingested_at, event_time, error_count, view_count, page),
        later_versions as (
            partition by source_table, event_id order by ingested_at, event_time, error_count, view_count, page rows between 1 following and unbounded following
        )

    )

    select
        *,
        
        (ingested_at <= least(timestamp'2026-01-01 01:15:10', version_final_at) and coalesce(superseded_at > least(timestamp'2026-01-01 01:15:10', version_final_at), true)) as counts_now,
        false as counted_before,
        false as written_late
    from chained_versions

)

select * from version_counts
) select counts_now
from __dbt__cte__int_page_error_rates__version_counts
where counts_now is null


-- node: not_null_int_page_error_rates__version_counts_source_table
-- test, test: test
with __dbt__cte__int_page_error_rates__version_counts as (
with

version_counts as (

    
    with

    selected_versions as (

        select selected.*
        from analytics.int_page_error_rates__versions as selected
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and true

    ),

    windowed_versions as (

        
    select
        *,
        
    window_start + interval 60 second as window_end,
        
    window_start + interval 3660 second as final_at,
        timestamp_seconds(unix_seconds(window_start) + 60 + case source_table
        when 'page_errors' then 3600
        when 'page_views' then 3600
    end) as version_final_at,
        timestamp_seconds(floor(unix_seconds(event_time) / 600) * 600) as partition_start,
        cast(pmod(xxhash64(page), 1) as int) as series_bucket
    from (
        select
            *,
            timestamp_seconds(floor(unix_seconds(event_time) / 60) * 60) as window_start
        from selected_versions
    )

    ),

    chained_versions as (

        
    select
        *,
        min(ingested_at) over later_versions as superseded_at,
        cast(null as timestamp) as superseded_before,
        lag(version_final_at) over event_versions as previous_version_final_at
    from windowed_versions
    window
        event_versions as (partition by source_table, event_id order by ingested_at, event_time, error_count, view_count, page),
        later_versions as (
            partition by source_table, event_id order by ingested_at, event_time, error_count, view_count, page rows between 1 following and unbounded following
        )

    )

    select
        *,
        
        (ingested_at <= least(timestamp'2026-01-01 01:15:10', version_final_at) and coalesce(superseded_at > least(timestamp'2026-01-01 01:15:10', version_final_at), true)) as counts_now,
        false as counted_before,
        false as written_late
    from chained_versions

)

select * from version_counts
) select source_table
from __dbt__cte__int_page_error_rates__version_counts
where source_table is null


-- node: unique_combination_of_columns_int_page_error_rates__version_counts_source_table__event_id__event_time__error_count__view_count__page__ingested_at
-- test, test: test
with __dbt__cte__int_page_error_rates__version_counts as (
with

version_counts as (

    
    with

    selected_versions as (

        select selected.*
        from analytics.int_page_error_rates__versions as selected
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and true

    ),

    windowed_versions as (

        
    select
        *,
        
    window_start + interval 60 second as window_end,
        
    window_start + interval 3660 second as final_at,
        timestamp_seconds(unix_seconds(window_start) + 60 + case source_table
        when 'page_errors' then 3600
        when 'page_views' then 3600
    end) as version_final_at,
        timestamp_seconds(floor(unix_seconds(event_time) / 600) * 600) as partition_start,
        cast(pmod(xxhash64(page), 1) as int) as series_bucket
    from (
        select
            *,
            timestamp_seconds(floor(unix_seconds(event_time) / 60) * 60) as window_start
        from selected_versions
    )

    ),

    chained_versions as (

        
    select
        *,
        min(ingested_at) over later_versions as superseded_at,
        cast(null as timestamp) as superseded_before,
        lag(version_final_at) over event_versions as previous_version_final_at
    from windowed_versions
    window
        event_versions as (partition by source_table, event_id order by ingested_at, event_time, error_count, view_count, page),
        later_versions as (
            partition by source_table, event_id order by ingested_at, event_time, error_count, view_count, page rows between 1 following and unbounded following
        )

    )

    select
        *,
        
        (ingested_at <= least(timestamp'2026-01-01 01:15:10', version_final_at) and coalesce(superseded_at > least(timestamp'2026-01-01 01:15:10', version_final_at), true)) as counts_now,
        false as counted_before,
        false as written_late
    from chained_versions

)

select * from version_counts
) select
        source_table, event_id, event_time, error_count, view_count, page, ingested_at,
        count(*) as occurrences
    from __dbt__cte__int_page_error_rates__version_counts
    group by source_table, event_id, event_time, error_count, view_count, page, ingested_at
    having count(*) > 1


-- node: water_level_too_late_readings
-- model, incremental: staged (cached), then written by insert_overwrite into the partitions it holds
with

 __dbt__cte__int_water_level__version_counts as (
with

version_counts as (

    
    with

    selected_versions as (

        select selected.*
        from analytics.int_water_level__versions as selected
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and true

    ),

    windowed_versions as (

        
    select
        *,
        
    window_start + interval 60 second as window_end,
        
    window_start + interval 3660 second as final_at,
        timestamp_seconds(floor(unix_seconds(event_time) / 600) * 600) as partition_start,
        cast(pmod(xxhash64(location), 1) as int) as series_bucket
    from (
        select
            *,
            timestamp_seconds(floor(unix_seconds(event_time) / 60) * 60) as window_start
        from selected_versions
    )

    ),

    chained_versions as (

        
    select
        *,
        min(ingested_at) over later_versions as superseded_at,
        cast(null as timestamp) as superseded_before,
        lag(final_at) over event_versions as previous_version_final_at
    from windowed_versions
    window
        event_versions as (partition by event_id order by ingested_at, event_time, reading_value, location),
        later_versions as (
            partition by event_id order by ingested_at, event_time, reading_value, location rows between 1 following and unbounded following
        )

    )

    select
        *,
        final_at as version_final_at,
        
        (ingested_at <= least(timestamp'2026-01-01 01:15:10', final_at) and coalesce(superseded_at > least(timestamp'2026-01-01 01:15:10', final_at), true)) as counts_now,
        false as counted_before,
        false as written_late
    from chained_versions

)

select * from version_counts
), version_counts as (

    select * from __dbt__cte__int_water_level__version_counts

),

too_late_versions as (

    
    select
        sha2(concat_ws('|', cast(event_id as string), cast(ingested_at as string), cast(event_time as string), cast(reading_value as string), cast(location as string)), 256)
            as version_id,
        *,
        case
            when ingested_at > version_final_at then 'arrived_after_final'
            else 'replaces_final_version'
        end as too_late_reason,
        unix_seconds(ingested_at) - unix_seconds(coalesce(
            case when ingested_at > version_final_at then version_final_at end, previous_version_final_at
        )) as seconds_after_final
    from version_counts
    where
        (ingested_at > version_final_at or ingested_at > previous_version_final_at)

)

select
    version_id,
    event_id,
    location,
    event_time,
    reading_value,
    ingested_at,
    window_start,
    final_at,
    too_late_reason,
    seconds_after_final,
    timestamp'2026-01-01 01:15:10' as detected_at,
    '<invocation_id>' as invocation_id
from too_late_versions


-- node: not_null_int_water_level__version_counts_counted_before
-- test, test: test
with __dbt__cte__int_water_level__version_counts as (
with

version_counts as (

    
    with

    selected_versions as (

        select selected.*
        from analytics.int_water_level__versions as selected
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and true

    ),

    windowed_versions as (

        
    select
        *,
        
    window_start + interval 60 second as window_end,
        
    window_start + interval 3660 second as final_at,
        timestamp_seconds(floor(unix_seconds(event_time) / 600) * 600) as partition_start,
        cast(pmod(xxhash64(location), 1) as int) as series_bucket
    from (
        select
            *,
            timestamp_seconds(floor(unix_seconds(event_time) / 60) * 60) as window_start
        from selected_versions
    )

    ),

    chained_versions as (

        
    select
        *,
        min(ingested_at) over later_versions as superseded_at,
        cast(null as timestamp) as superseded_before,
        lag(final_at) over event_versions as previous_version_final_at
    from windowed_versions
    window
        event_versions as (partition by event_id order by ingested_at, event_time, reading_value, location),
        later_versions as (
            partition by event_id order by ingested_at, event_time, reading_value, location rows between 1 following and unbounded following
        )

    )

    select
        *,
        final_at as version_final_at,
        
        (ingested_at <= least(timestamp'2026-01-01 01:15:10', final_at) and coalesce(superseded_at > least(timestamp'2026-01-01 01:15:10', final_at), true)) as counts_now,
        false as counted_before,
        false as written_late
    from chained_versions

)

select * from version_counts
) select counted_before
from __dbt__cte__int_water_level__version_counts
where counted_before is null


-- node: not_null_int_water_level__version_counts_counts_now
-- test, test: test
with __dbt__cte__int_water_level__version_counts as (
with

version_counts as (

    
    with

    selected_versions as (

        select selected.*
        from analytics.int_water_level__versions as selected
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and true

    ),

    windowed_versions as (

        
    select
        *,
        
    window_start + interval 60 second as window_end,
        
    window_start + interval 3660 second as final_at,
        timestamp_seconds(floor(unix_seconds(event_time) / 600) * 600) as partition_start,
        cast(pmod(xxhash64(location), 1) as int) as series_bucket
    from (
        select
            *,
            timestamp_seconds(floor(unix_seconds(event_time) / 60) * 60) as window_start
        from selected_versions
    )

    ),

    chained_versions as (

        
    select
        *,
        min(ingested_at) over later_versions as superseded_at,
        cast(null as timestamp) as superseded_before,
        lag(final_at) over event_versions as previous_version_final_at
    from windowed_versions
    window
        event_versions as (partition by event_id order by ingested_at, event_time, reading_value, location),
        later_versions as (
            partition by event_id order by ingested_at, event_time, reading_value, location rows between 1 following and unbounded following
        )

    )

    select
        *,
        final_at as version_final_at,
        
        (ingested_at <= least(timestamp'2026-01-01 01:15:10', final_at) and coalesce(superseded_at > least(timestamp'2026-01-01 01:15:10', final_at), true)) as counts_now,
        false as counted_before,
        false as written_late
    from chained_versions

)

select * from version_counts
) select counts_now
from __dbt__cte__int_water_level__version_counts
where counts_now is null


-- node: not_null_int_water_level__version_counts_event_id
-- test, test: test
with __dbt__cte__int_water_level__version_counts as (
with

version_counts as (

    
    with

    selected_versions as (

        select selected.*
        from analytics.int_water_level__versions as selected
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and true

    ),

    windowed_versions as (

        
    select
        *,
        
    window_start + interval 60 second as window_end,
        
    window_start + interval 3660 second as final_at,
        timestamp_seconds(floor(unix_seconds(event_time) / 600) * 600) as partition_start,
        cast(pmod(xxhash64(location), 1) as int) as series_bucket
    from (
        select
            *,
            timestamp_seconds(floor(unix_seconds(event_time) / 60) * 60) as window_start
        from selected_versions
    )

    ),

    chained_versions as (

        
    select
        *,
        min(ingested_at) over later_versions as superseded_at,
        cast(null as timestamp) as superseded_before,
        lag(final_at) over event_versions as previous_version_final_at
    from windowed_versions
    window
        event_versions as (partition by event_id order by ingested_at, event_time, reading_value, location),
        later_versions as (
            partition by event_id order by ingested_at, event_time, reading_value, location rows between 1 following and unbounded following
        )

    )

    select
        *,
        final_at as version_final_at,
        
        (ingested_at <= least(timestamp'2026-01-01 01:15:10', final_at) and coalesce(superseded_at > least(timestamp'2026-01-01 01:15:10', final_at), true)) as counts_now,
        false as counted_before,
        false as written_late
    from chained_versions

)

select * from version_counts
) select event_id
from __dbt__cte__int_water_level__version_counts
where event_id is null


-- node: unique_combination_of_columns_int_water_level__version_counts_event_id__location__event_time__reading_value__ingested_at
-- test, test: test
with __dbt__cte__int_water_level__version_counts as (
with

version_counts as (

    
    with

    selected_versions as (

        select selected.*
        from analytics.int_water_level__versions as selected
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and true

    ),

    windowed_versions as (

        
    select
        *,
        
    window_start + interval 60 second as window_end,
        
    window_start + interval 3660 second as final_at,
        timestamp_seconds(floor(unix_seconds(event_time) / 600) * 600) as partition_start,
        cast(pmod(xxhash64(location), 1) as int) as series_bucket
    from (
        select
            *,
            timestamp_seconds(floor(unix_seconds(event_time) / 60) * 60) as window_start
        from selected_versions
    )

    ),

    chained_versions as (

        
    select
        *,
        min(ingested_at) over later_versions as superseded_at,
        cast(null as timestamp) as superseded_before,
        lag(final_at) over event_versions as previous_version_final_at
    from windowed_versions
    window
        event_versions as (partition by event_id order by ingested_at, event_time, reading_value, location),
        later_versions as (
            partition by event_id order by ingested_at, event_time, reading_value, location rows between 1 following and unbounded following
        )

    )

    select
        *,
        final_at as version_final_at,
        
        (ingested_at <= least(timestamp'2026-01-01 01:15:10', final_at) and coalesce(superseded_at > least(timestamp'2026-01-01 01:15:10', final_at), true)) as counts_now,
        false as counted_before,
        false as written_late
    from chained_versions

)

select * from version_counts
) select
        event_id, location, event_time, reading_value, ingested_at,
        count(*) as occurrences
    from __dbt__cte__int_water_level__version_counts
    group by event_id, location, event_time, reading_value, ingested_at
    having count(*) > 1


-- node: page_error_rates
-- model, incremental: staged (cached), then written by insert_overwrite into the partitions it holds
with

 __dbt__cte__int_page_error_rates__version_counts as (
with

version_counts as (

    
    with

    selected_versions as (

        select selected.*
        from analytics.int_page_error_rates__versions as selected
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and true

    ),

    windowed_versions as (

        
    select
        *,
        
    window_start + interval 60 second as window_end,
        
    window_start + interval 3660 second as final_at,
        timestamp_seconds(unix_seconds(window_start) + 60 + case source_table
        when 'page_errors' then 3600
        when 'page_views' then 3600
    end) as version_final_at,
        timestamp_seconds(floor(unix_seconds(event_time) / 600) * 600) as partition_start,
        cast(pmod(xxhash64(page), 1) as int) as series_bucket
    from (
        select
            *,
            timestamp_seconds(floor(unix_seconds(event_time) / 60) * 60) as window_start
        from selected_versions
    )

    ),

    chained_versions as (

        
    select
        *,
        min(ingested_at) over later_versions as superseded_at,
        cast(null as timestamp) as superseded_before,
        lag(version_final_at) over event_versions as previous_version_final_at
    from windowed_versions
    window
        event_versions as (partition by source_table, event_id order by ingested_at, event_time, error_count, view_count, page),
        later_versions as (
            partition by source_table, event_id order by ingested_at, event_time, error_count, view_count, page rows between 1 following and unbounded following
        )

    )

    select
        *,
        
        (ingested_at <= least(timestamp'2026-01-01 01:15:10', version_final_at) and coalesce(superseded_at > least(timestamp'2026-01-01 01:15:10', version_final_at), true)) as counts_now,
        false as counted_before,
        false as written_late
    from chained_versions

)

select * from version_counts
),  __dbt__cte__int_page_error_rates__windows_to_write as (


with

version_counts as (

    select * from __dbt__cte__int_page_error_rates__version_counts

),

window_checksums as (

    
    select
        window_start,
        page,
        final_at,
        partition_start,
        series_bucket,
        sum(if(counts_now, 1, 0)) as counted_rows,
        sum(if(counts_now, error_count, 0)) as error_count,
        sum(if(counts_now, view_count, 0)) as view_count,
        sum(if(counts_now, 
    cast(xxhash64(source_table, event_id, event_time, error_count, view_count) as decimal(20, 0)), 0)) as counts_digest
    from version_counts
    where counts_now or counted_before
    group by window_start, page, final_at, partition_start, series_bucket

),

windows_to_write as (

    
    select
        *,
        final_at <= timestamp'2026-01-01 01:15:10' as is_final,
        timestamp'2026-01-01 01:15:10' as computed_at,
        '<invocation_id>' as invocation_id,
        timestamp'2026-01-01 01:15:10' as written_at
    from window_checksums
    where counted_rows > 0

)

select * from windows_to_write
), windows_to_write as (

    select * from __dbt__cte__int_page_error_rates__windows_to_write

),

error_rates as (

    -- A window with rows of one series only has 0 for the other; a window whose counts are all
    -- 0 has no rate (null) rather than a division by zero.
    select
        window_start,
        
    window_start + interval 60 second as window_end,
        page,
        error_count,
        view_count,
        100 * cast(error_count as double) / nullif(error_count + view_count, 0) as error_rate_percent,
        counted_rows,
        is_final,
        final_at,
        counts_digest,
        computed_at,
        invocation_id,
        written_at,
        partition_start,
        series_bucket
    from windows_to_write

)

select * from error_rates


-- node: accepted_values_page_error_rates_too_late_counts_too_late_reason__arrived_after_final__replaces_final_version
-- test, test: test
with all_values as (

    select
        too_late_reason as value_field,
        count(*) as n_records

    from analytics.page_error_rates_too_late_counts
    group by too_late_reason

)

select *
from all_values
where value_field not in (
    'arrived_after_final','replaces_final_version'
)


-- node: assert_no_too_late_page_counts
-- test, test: test
-- Warns when rows arrived after their window became final: they count toward no window until a
-- deliberate backfill includes them. See page_error_rates_too_late_counts for the rows.
select
    event_id,
    source_table,
    page,
    window_start,
    too_late_reason,
    seconds_after_final
from analytics.page_error_rates_too_late_counts


-- node: not_null_page_error_rates_too_late_counts_version_id
-- test, test: test
select version_id
from analytics.page_error_rates_too_late_counts
where version_id is null


-- node: unique_page_error_rates_too_late_counts_version_id
-- test, test: test
select
    version_id as unique_field,
    count(*) as n_records

from analytics.page_error_rates_too_late_counts
where version_id is not null
group by version_id
having count(*) > 1


-- node: water_level_window_means
-- model, incremental: staged (cached), then written by insert_overwrite into the partitions it holds
with

 __dbt__cte__int_water_level__version_counts as (
with

version_counts as (

    
    with

    selected_versions as (

        select selected.*
        from analytics.int_water_level__versions as selected
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and true

    ),

    windowed_versions as (

        
    select
        *,
        
    window_start + interval 60 second as window_end,
        
    window_start + interval 3660 second as final_at,
        timestamp_seconds(floor(unix_seconds(event_time) / 600) * 600) as partition_start,
        cast(pmod(xxhash64(location), 1) as int) as series_bucket
    from (
        select
            *,
            timestamp_seconds(floor(unix_seconds(event_time) / 60) * 60) as window_start
        from selected_versions
    )

    ),

    chained_versions as (

        
    select
        *,
        min(ingested_at) over later_versions as superseded_at,
        cast(null as timestamp) as superseded_before,
        lag(final_at) over event_versions as previous_version_final_at
    from windowed_versions
    window
        event_versions as (partition by event_id order by ingested_at, event_time, reading_value, location),
        later_versions as (
            partition by event_id order by ingested_at, event_time, reading_value, location rows between 1 following and unbounded following
        )

    )

    select
        *,
        final_at as version_final_at,
        
        (ingested_at <= least(timestamp'2026-01-01 01:15:10', final_at) and coalesce(superseded_at > least(timestamp'2026-01-01 01:15:10', final_at), true)) as counts_now,
        false as counted_before,
        false as written_late
    from chained_versions

)

select * from version_counts
),  __dbt__cte__int_water_level__windows_to_write as (


with

version_counts as (

    select * from __dbt__cte__int_water_level__version_counts

),

window_checksums as (

    
    select
        window_start,
        location,
        final_at,
        partition_start,
        series_bucket,
        sum(if(counts_now, 1, 0)) as reading_count,
        sum(if(counts_now, cast(reading_value as decimal(28, 9)), 0)) as value_sum,
        sum(if(counts_now, 
    cast(xxhash64(event_id, event_time, reading_value) as decimal(20, 0)), 0)) as readings_digest
    from version_counts
    where counts_now or counted_before
    group by window_start, location, final_at, partition_start, series_bucket

),

windows_to_write as (

    
    select
        *,
        final_at <= timestamp'2026-01-01 01:15:10' as is_final,
        timestamp'2026-01-01 01:15:10' as computed_at,
        '<invocation_id>' as invocation_id,
        timestamp'2026-01-01 01:15:10' as written_at
    from window_checksums
    where reading_count > 0

)

select * from windows_to_write
), windows_to_write as (

    select * from __dbt__cte__int_water_level__windows_to_write

),

window_means as (

    select
        window_start,
        
    window_start + interval 60 second as window_end,
        location,
        reading_count,
        cast(value_sum as double) / reading_count as mean_value,
        is_final,
        final_at,
        value_sum,
        readings_digest,
        computed_at,
        invocation_id,
        written_at,
        partition_start,
        series_bucket
    from windows_to_write

)

select * from window_means


-- node: accepted_values_water_level_too_late_readings_too_late_reason__arrived_after_final__replaces_final_version
-- test, test: test
with all_values as (

    select
        too_late_reason as value_field,
        count(*) as n_records

    from analytics.water_level_too_late_readings
    group by too_late_reason

)

select *
from all_values
where value_field not in (
    'arrived_after_final','replaces_final_version'
)


-- node: assert_no_too_late_readings
-- test, test: test
-- Warns when rows arrived after their window became final: they count toward no window until a
-- deliberate backfill includes them. See water_level_too_late_readings for the rows.
select
    event_id,
    location,
    window_start,
    too_late_reason,
    seconds_after_final
from analytics.water_level_too_late_readings


-- node: not_null_water_level_too_late_readings_version_id
-- test, test: test
select version_id
from analytics.water_level_too_late_readings
where version_id is null


-- node: unique_water_level_too_late_readings_version_id
-- test, test: test
select
    version_id as unique_field,
    count(*) as n_records

from analytics.water_level_too_late_readings
where version_id is not null
group by version_id
having count(*) > 1


-- node: page_error_rates_history
-- snapshot, snapshot: staged against the history's open versions, then merged (macros/late_data/history)
select
    concat_ws('|', cast(window_start as string), cast(page as string)) as window_key,
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
from analytics.page_error_rates
where true


-- node: not_null_page_error_rates_error_count
-- test, test: test
select error_count
from analytics.page_error_rates
where error_count is null


-- node: not_null_page_error_rates_is_final
-- test, test: test
select is_final
from analytics.page_error_rates
where is_final is null


-- node: not_null_page_error_rates_page
-- test, test: test
select page
from analytics.page_error_rates
where page is null


-- node: not_null_page_error_rates_partition_start
-- test, test: test
select partition_start
from analytics.page_error_rates
where partition_start is null


-- node: not_null_page_error_rates_series_bucket
-- test, test: test
select series_bucket
from analytics.page_error_rates
where series_bucket is null


-- node: not_null_page_error_rates_view_count
-- test, test: test
select view_count
from analytics.page_error_rates
where view_count is null


-- node: not_null_page_error_rates_window_start
-- test, test: test
select window_start
from analytics.page_error_rates
where window_start is null


-- node: unique_combination_of_columns_page_error_rates_window_start__page
-- test, test: test
select
        window_start, page,
        count(*) as occurrences
    from analytics.page_error_rates
    group by window_start, page
    having count(*) > 1


-- node: water_level_window_means_history
-- snapshot, snapshot: staged against the history's open versions, then merged (macros/late_data/history)
select
    concat_ws('|', cast(window_start as string), cast(location as string)) as window_key,
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
from analytics.water_level_window_means
where true


-- node: not_null_water_level_window_means_is_final
-- test, test: test
select is_final
from analytics.water_level_window_means
where is_final is null


-- node: not_null_water_level_window_means_location
-- test, test: test
select location
from analytics.water_level_window_means
where location is null


-- node: not_null_water_level_window_means_mean_value
-- test, test: test
select mean_value
from analytics.water_level_window_means
where mean_value is null


-- node: not_null_water_level_window_means_partition_start
-- test, test: test
select partition_start
from analytics.water_level_window_means
where partition_start is null


-- node: not_null_water_level_window_means_reading_count
-- test, test: test
select reading_count
from analytics.water_level_window_means
where reading_count is null


-- node: not_null_water_level_window_means_series_bucket
-- test, test: test
select series_bucket
from analytics.water_level_window_means
where series_bucket is null


-- node: not_null_water_level_window_means_window_end
-- test, test: test
select window_end
from analytics.water_level_window_means
where window_end is null


-- node: not_null_water_level_window_means_window_start
-- test, test: test
select window_start
from analytics.water_level_window_means
where window_start is null


-- node: unique_combination_of_columns_water_level_window_means_window_start__location
-- test, test: test
select
        window_start, location,
        count(*) as occurrences
    from analytics.water_level_window_means
    group by window_start, location
    having count(*) > 1


-- node: not_null_page_error_rates_history_dbt_valid_from
-- test, test: test
select dbt_valid_from
from analytics.page_error_rates_history
where dbt_valid_from is null


-- node: not_null_page_error_rates_history_window_key
-- test, test: test
select window_key
from analytics.page_error_rates_history
where window_key is null


-- node: not_null_water_level_window_means_history_dbt_valid_from
-- test, test: test
select dbt_valid_from
from analytics.water_level_window_means_history
where dbt_valid_from is null


-- node: not_null_water_level_window_means_history_window_key
-- test, test: test
select window_key
from analytics.water_level_window_means_history
where window_key is null
