-- The SQL of a scheduled run at 2026-01-01 01:15:10, as `late-data explain` works it out.
-- Each table's select; its node stages and writes it as the line under its name says.

-- node: int_page_error_rates__versions
-- versions of page_error_rates: the versions that arrived since the previous run, appended (a rebuild: every version, a new table)
with delivered as (
            select
        source_table,
        event_id,
        page,
        event_time,
        error_count,
        view_count,
        ingested_at,
        case
        when quarantine_reason is not null then quarantine_reason
        when source_table is null then 'null_source_table'
        when event_id is null then 'null_event_id'
        when page is null then 'null_page'
        when event_time is null then 'null_event_time'
        when error_count is null then 'null_error_count'
        when view_count is null then 'null_view_count'
        when ingested_at is null then 'null_ingested_at'
        when abs(error_count) > 2147483647 then 'out_of_range'
        when abs(view_count) > 2147483647 then 'out_of_range'
    end as quarantine_reason,
        timestamp'2026-01-01 01:15:10' as loaded_at
    from (
        with

page_errors as (

    select * from analytics.stg_web__page_errors

),

page_views as (

    select * from analytics.stg_web__page_views

),

page_counts as (

    
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
    

)

select * from page_counts
    ) as delivered
        )
        
    select distinct delivered.*
    from delivered as delivered
    left anti join (
        select source_table, event_id, page, event_time, error_count, view_count, ingested_at
        from analytics.int_page_error_rates__versions
        where (ingested_at >= timestamp'2026-01-01 00:40:10' or ingested_at is null)
    ) as loaded
        on
            delivered.source_table <=> loaded.source_table and
            delivered.event_id <=> loaded.event_id and
            delivered.page <=> loaded.page and
            delivered.event_time <=> loaded.event_time and
            delivered.error_count <=> loaded.error_count and
            delivered.view_count <=> loaded.view_count and
            delivered.ingested_at <=> loaded.ingested_at
    where (delivered.ingested_at >= timestamp'2026-01-01 00:40:10' or delivered.ingested_at is null)


-- node: int_page_error_rates__versions__chain_<invocation>
-- chain of page_error_rates: the version chain, staged (cached) once for the windows and the too-late listing
with

    arrived_events as (

        
    select distinct source_table, event_id
    from analytics.int_page_error_rates__versions
    where
        -- Two comparisons, not greatest(): each can skip files by its column's bounds.
        (loaded_at > timestamp'2026-01-01 00:45:10' or ingested_at > timestamp'2026-01-01 00:45:10')
        and ingested_at <= timestamp'2026-01-01 01:15:10'
        and quarantine_reason is null

    ),

    selected_versions as (

        select /*+ BROADCAST(arrived_events) */ selected.*
        from analytics.int_page_error_rates__versions as selected
        left semi join arrived_events
            on selected.source_table = arrived_events.source_table and selected.event_id = arrived_events.event_id
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and (event_time >= timestamp'2025-12-31 23:39:10' or ingested_at >= timestamp'2025-12-31 23:39:10')

    ),

    windowed_versions as (

        
    select
        *,
        window_start + interval 60 second as window_end,
        window_start + interval 3660 second as final_at,
        timestamp_seconds(unix_seconds(window_start) + 60 + case source_table
        when 'page_errors' then 3600
        when 'page_views' then 3600
        else 3600
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
        min(if(loaded_at <= timestamp'2026-01-01 00:45:10' and ingested_at <= timestamp'2026-01-01 00:45:10', ingested_at, null))
            over later_versions as superseded_before,
        lag(version_final_at) over event_versions as previous_version_final_at,
        lag(window_start) over event_versions as previous_window_start
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
        loaded_at <= timestamp'2026-01-01 00:45:10'
        and (ingested_at <= least(timestamp'2026-01-01 00:45:10', version_final_at) and coalesce(superseded_before > least(timestamp'2026-01-01 00:45:10', version_final_at), true)) as counted_before,
        loaded_at > timestamp'2026-01-01 00:45:10' and ingested_at < timestamp'2026-01-01 00:40:10' as written_late
    from chained_versions


-- node: page_error_rates
-- windows of page_error_rates: staged (cached), then written by replacing the (time partition, series bucket) pairs it holds
-- plan: delta, broadcast lookup, chain shared with the too-late listing
with

    version_counts as (

        select * from global_temp.int_page_error_rates__versions__chain_<invocation>

    ),

    window_checksums as (

        
    select
        window_start,
        page,
        final_at,
        partition_start,
        series_bucket,
        sum(case when counts_now and not counted_before then error_count when counted_before and not counts_now then -(error_count) else 0 end) as error_count__change,
        sum(case when counts_now and not counted_before then view_count when counted_before and not counts_now then -(view_count) else 0 end) as view_count__change,
        sum(case when counts_now and not counted_before then 1 when counted_before and not counts_now then -(1) else 0 end) as counted_rows__change,
        sum(case when counts_now and not counted_before then cast(xxhash64(source_table, event_id, event_time, error_count, view_count) as decimal(20, 0)) when counted_before and not counts_now then -(cast(xxhash64(source_table, event_id, event_time, error_count, view_count) as decimal(20, 0))) else 0 end) as counts_digest__change,
        max(written_late and counts_now != counted_before) as changed_by_late_write
    from version_counts
    where counts_now or counted_before
    group by window_start, page, final_at, partition_start, series_bucket

    ),

    windows_to_write as (

        
    with

    window_changes as (

        select *
        from window_checksums
        where not (error_count__change = 0 and view_count__change = 0 and counted_rows__change = 0 and counts_digest__change = 0)

    ),

    stored_windows as (

        select *
        from analytics.page_error_rates
        where partition_start >= timestamp'2025-12-31 23:30:00'

    ),

    joined_windows as (

        
    select
            coalesce(changes.window_start, stored.window_start) as window_start,
            coalesce(changes.page, stored.page) as page,
            coalesce(changes.final_at, stored.final_at) as final_at,
            coalesce(changes.partition_start, stored.partition_start) as partition_start,
            coalesce(changes.series_bucket, stored.series_bucket) as series_bucket,
        cast(coalesce(stored.error_count, 0) as bigint) + cast(coalesce(changes.error_count__change, 0) as bigint) as error_count,
        cast(coalesce(stored.view_count, 0) as bigint) + cast(coalesce(changes.view_count__change, 0) as bigint) as view_count,
        cast(coalesce(stored.counted_rows, 0) as bigint) + cast(coalesce(changes.counted_rows__change, 0) as bigint) as counted_rows,
        cast(coalesce(stored.counts_digest, 0) as decimal(37, 0)) + cast(coalesce(changes.counts_digest__change, 0) as decimal(37, 0)) as counts_digest,
            stored.error_count as stored_error_count,
            stored.view_count as stored_view_count,
            stored.counted_rows as stored_counted_rows,
            stored.counts_digest as stored_counts_digest,
            stored.is_final as stored_is_final,
            stored.computed_at as stored_computed_at,
            stored.invocation_id as stored_invocation_id,
        -- A window changed, or it becomes final now.
        changes.window_start is not null
        or (not stored.is_final and stored.final_at <= timestamp'2026-01-01 01:15:10') as is_moved
    from stored_windows as stored
    full outer join window_changes as changes
        on stored.window_start = changes.window_start and stored.page = changes.page

    ),

    updated_windows as (

        select *
        from (
            select *, max(is_moved) over (partition by partition_start, series_bucket) as is_partition_rewritten
            from joined_windows
        )
        where is_partition_rewritten

    )

    
    select
        window_start,
        page,
        final_at,
        partition_start,
        series_bucket,
        if(
            counted_rows < 0,
            cast(raise_error(concat(
                'late-data: the stored counted_rows of page_error_rates window ',
                concat_ws('|', cast(window_start as string), cast(page as string)),
                ' would become negative: the stored checksums drifted; run late-data reconcile'
            )) as bigint),
            counted_rows
        ) as counted_rows,
        cast(error_count as bigint) as error_count,
        cast(view_count as bigint) as view_count,
        cast(counts_digest as decimal(38, 0)) as counts_digest,
        final_at <= timestamp'2026-01-01 01:15:10' as is_final,
        window_change,
        if(window_change = 'published', timestamp'2026-01-01 01:15:10', stored_computed_at) as computed_at,
        if(window_change = 'published', '<invocation_id>', stored_invocation_id) as invocation_id,
        -- Every row of a rewritten partition: what the next run compares with the audit to find a
        -- run that wrote and was interrupted before it recorded its outcome.
        timestamp'2026-01-01 01:15:10' as written_at,
        false as window_repaired
    from (
        select
            *,
            case
                when counted_rows = 0 then 'vanished'
                when stored_counted_rows is null then 'published'
                when not 
    (
        error_count <=> stored_error_count and
        view_count <=> stored_view_count and
        counted_rows <=> stored_counted_rows and
        final_at <= timestamp'2026-01-01 01:15:10' <=> stored_is_final
    ) then 'published'
                when not 
    (
        error_count <=> stored_error_count and
        view_count <=> stored_view_count and
        counted_rows <=> stored_counted_rows and
        counts_digest <=> stored_counts_digest
    ) then 'checksum'
                else 'unchanged'
            end as window_change
        from updated_windows
    )

    ),

    measured_windows as (

        select
            *
        from windows_to_write

    )

    select
        window_start,
        window_start + interval 60 second as window_end,
        page,
        error_count,
        view_count,
        (100 * cast(error_count as double) / nullif(error_count + view_count, 0)) as error_rate_percent,
        counted_rows,
        is_final,
        final_at,
        counts_digest,
        computed_at,
        invocation_id,
        written_at,
        partition_start,
        series_bucket, window_change, window_repaired
    from measured_windows


-- node: int_water_level__versions
-- versions of water_level_window_means: the versions that arrived since the previous run, appended (a rebuild: every version, a new table)
with delivered as (
            select
        event_id,
        location,
        event_time,
        reading_value,
        ingested_at,
        case
        when quarantine_reason is not null then quarantine_reason
        when event_id is null then 'null_event_id'
        when location is null then 'null_location'
        when event_time is null then 'null_event_time'
        when reading_value is null then 'null_reading_value'
        when ingested_at is null then 'null_ingested_at'
        when isnan(reading_value) or abs(reading_value) = double('infinity') then 'not_finite'
        when abs(reading_value) >= 1e19 then 'out_of_range'
    end as quarantine_reason,
        timestamp'2026-01-01 01:15:10' as loaded_at
    from (
        with

readings as (

    select * from analytics.stg_sensors__water_level_readings

)

select
    event_id,
    location,
    event_time,
    reading_value,
    ingested_at,
    quarantine_reason
from readings
    ) as delivered
        )
        
    select distinct delivered.*
    from delivered as delivered
    left anti join (
        select event_id, location, event_time, reading_value, ingested_at
        from analytics.int_water_level__versions
        where (ingested_at >= timestamp'2026-01-01 00:40:10' or ingested_at is null)
    ) as loaded
        on
            delivered.event_id <=> loaded.event_id and
            delivered.location <=> loaded.location and
            delivered.event_time <=> loaded.event_time and
            delivered.reading_value <=> loaded.reading_value and
            delivered.ingested_at <=> loaded.ingested_at
    where (delivered.ingested_at >= timestamp'2026-01-01 00:40:10' or delivered.ingested_at is null)


-- node: int_water_level__versions__chain_<invocation>
-- chain of water_level_window_means: the version chain, staged (cached) once for the windows and the too-late listing
with

    arrived_events as (

        
    select distinct event_id
    from analytics.int_water_level__versions
    where
        -- Two comparisons, not greatest(): each can skip files by its column's bounds.
        (loaded_at > timestamp'2026-01-01 00:45:10' or ingested_at > timestamp'2026-01-01 00:45:10')
        and ingested_at <= timestamp'2026-01-01 01:15:10'
        and quarantine_reason is null

    ),

    selected_versions as (

        select /*+ BROADCAST(arrived_events) */ selected.*
        from analytics.int_water_level__versions as selected
        left semi join arrived_events
            on selected.event_id = arrived_events.event_id
        where selected.ingested_at <= timestamp'2026-01-01 01:15:10' and selected.quarantine_reason is null and (event_time >= timestamp'2025-12-31 23:39:10' or ingested_at >= timestamp'2025-12-31 23:39:10')

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
        min(if(loaded_at <= timestamp'2026-01-01 00:45:10' and ingested_at <= timestamp'2026-01-01 00:45:10', ingested_at, null))
            over later_versions as superseded_before,
        lag(final_at) over event_versions as previous_version_final_at,
        lag(window_start) over event_versions as previous_window_start
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
        loaded_at <= timestamp'2026-01-01 00:45:10'
        and (ingested_at <= least(timestamp'2026-01-01 00:45:10', final_at) and coalesce(superseded_before > least(timestamp'2026-01-01 00:45:10', final_at), true)) as counted_before,
        loaded_at > timestamp'2026-01-01 00:45:10' and ingested_at < timestamp'2026-01-01 00:40:10' as written_late
    from chained_versions


-- node: water_level_window_means
-- windows of water_level_window_means: staged (cached), then written by replacing the (time partition, series bucket) pairs it holds
-- plan: delta, broadcast lookup, chain shared with the too-late listing
with

    version_counts as (

        select * from global_temp.int_water_level__versions__chain_<invocation>

    ),

    window_checksums as (

        
    select
        window_start,
        location,
        final_at,
        partition_start,
        series_bucket,
        sum(case when counts_now and not counted_before then 1 when counted_before and not counts_now then -(1) else 0 end) as reading_count__change,
        sum(case when counts_now and not counted_before then cast(reading_value as decimal(28, 9)) when counted_before and not counts_now then -(cast(reading_value as decimal(28, 9))) else 0 end) as value_sum__change,
        sum(case when counts_now and not counted_before then cast(xxhash64(event_id, event_time, reading_value) as decimal(20, 0)) when counted_before and not counts_now then -(cast(xxhash64(event_id, event_time, reading_value) as decimal(20, 0))) else 0 end) as readings_digest__change,
        max(written_late and counts_now != counted_before) as changed_by_late_write
    from version_counts
    where counts_now or counted_before
    group by window_start, location, final_at, partition_start, series_bucket

    ),

    windows_to_write as (

        
    with

    window_changes as (

        select *
        from window_checksums
        where not (reading_count__change = 0 and value_sum__change = 0 and readings_digest__change = 0)

    ),

    stored_windows as (

        select *
        from analytics.water_level_window_means
        where partition_start >= timestamp'2025-12-31 23:30:00'

    ),

    joined_windows as (

        
    select
            coalesce(changes.window_start, stored.window_start) as window_start,
            coalesce(changes.location, stored.location) as location,
            coalesce(changes.final_at, stored.final_at) as final_at,
            coalesce(changes.partition_start, stored.partition_start) as partition_start,
            coalesce(changes.series_bucket, stored.series_bucket) as series_bucket,
        cast(coalesce(stored.reading_count, 0) as bigint) + cast(coalesce(changes.reading_count__change, 0) as bigint) as reading_count,
        cast(coalesce(stored.value_sum, 0) as decimal(37, 9)) + cast(coalesce(changes.value_sum__change, 0) as decimal(37, 9)) as value_sum,
        cast(coalesce(stored.readings_digest, 0) as decimal(37, 0)) + cast(coalesce(changes.readings_digest__change, 0) as decimal(37, 0)) as readings_digest,
            stored.reading_count as stored_reading_count,
            stored.value_sum as stored_value_sum,
            stored.readings_digest as stored_readings_digest,
            stored.is_final as stored_is_final,
            stored.computed_at as stored_computed_at,
            stored.invocation_id as stored_invocation_id,
        -- A window changed, or it becomes final now.
        changes.window_start is not null
        or (not stored.is_final and stored.final_at <= timestamp'2026-01-01 01:15:10') as is_moved
    from stored_windows as stored
    full outer join window_changes as changes
        on stored.window_start = changes.window_start and stored.location = changes.location

    ),

    updated_windows as (

        select *
        from (
            select *, max(is_moved) over (partition by partition_start, series_bucket) as is_partition_rewritten
            from joined_windows
        )
        where is_partition_rewritten

    )

    
    select
        window_start,
        location,
        final_at,
        partition_start,
        series_bucket,
        if(
            reading_count < 0,
            cast(raise_error(concat(
                'late-data: the stored reading_count of water_level_window_means window ',
                concat_ws('|', cast(window_start as string), cast(location as string)),
                ' would become negative: the stored checksums drifted; run late-data reconcile'
            )) as bigint),
            reading_count
        ) as reading_count,
        cast(value_sum as decimal(38, 9)) as value_sum,
        cast(readings_digest as decimal(38, 0)) as readings_digest,
        final_at <= timestamp'2026-01-01 01:15:10' as is_final,
        window_change,
        if(window_change = 'published', timestamp'2026-01-01 01:15:10', stored_computed_at) as computed_at,
        if(window_change = 'published', '<invocation_id>', stored_invocation_id) as invocation_id,
        -- Every row of a rewritten partition: what the next run compares with the audit to find a
        -- run that wrote and was interrupted before it recorded its outcome.
        timestamp'2026-01-01 01:15:10' as written_at,
        false as window_repaired
    from (
        select
            *,
            case
                when reading_count = 0 then 'vanished'
                when stored_reading_count is null then 'published'
                when not 
    (
        reading_count <=> stored_reading_count and
        value_sum <=> stored_value_sum and
        final_at <= timestamp'2026-01-01 01:15:10' <=> stored_is_final
    ) then 'published'
                when not 
    (
        reading_count <=> stored_reading_count and
        value_sum <=> stored_value_sum and
        readings_digest <=> stored_readings_digest
    ) then 'checksum'
                else 'unchanged'
            end as window_change
        from updated_windows
    )

    ),

    measured_windows as (

        select
            *,
            cast(value_sum as double) / reading_count as mean_value
        from windows_to_write

    )

    select
        window_start,
        window_start + interval 60 second as window_end,
        location,
        reading_count,
        mean_value,
        value_sum,
        is_final,
        final_at,
        readings_digest,
        computed_at,
        invocation_id,
        written_at,
        partition_start,
        series_bucket, window_change, window_repaired
    from measured_windows


-- node: page_error_rates_history__closed
-- history of page_error_rates_history: the versions this run closed (the result before its write against the result now), appended to the history's closed versions (a new history: an empty table, and the view)
with

    base_versions as (

        select
        *,
        md5(coalesce(cast(window_key as string), '')
         || '|' || coalesce(cast(computed_at as string), '')
        ) as dbt_scd_id,
        computed_at as dbt_updated_at,
        computed_at as dbt_valid_from,
        cast(null as timestamp) as dbt_valid_to,
        true as is_current_version
    from (
        select
            concat_ws('|', cast(window_start as string), cast(page as string)) as window_key,
            window_start, window_end, page, error_count, view_count, error_rate_percent, counted_rows, is_final, final_at, computed_at, invocation_id, partition_start, series_bucket
        from analytics.page_error_rates timestamp as of timestamp'2026-01-01 01:15:10' as stored
        where false
    ) as published_windows

    ),

    current_windows as (

        select concat_ws('|', cast(window_start as string), cast(page as string)) as window_key, computed_at
        from analytics.page_error_rates as stored
        where false

    ),

    closed_versions as (

        select
            base_versions.window_key,
            base_versions.window_start,
            base_versions.window_end,
            base_versions.page,
            base_versions.error_count,
            base_versions.view_count,
            base_versions.error_rate_percent,
            base_versions.counted_rows,
            base_versions.is_final,
            base_versions.final_at,
            base_versions.computed_at,
            base_versions.invocation_id,
            base_versions.partition_start,
            base_versions.series_bucket,
            base_versions.dbt_scd_id,
            base_versions.dbt_updated_at,
            base_versions.dbt_valid_from,
            coalesce(
                current_windows.computed_at,
                timestamp'2026-01-01 01:15:10'
            ) as dbt_valid_to,
            false as is_current_version
        from base_versions
        left join current_windows on base_versions.window_key = current_windows.window_key
        where current_windows.window_key is null or current_windows.computed_at != base_versions.dbt_valid_from

    )

    select * from closed_versions


-- node: page_error_rates_too_late_counts
-- too_late of page_error_rates_history: merged by version_id (a new listing: created from it)
with

    version_counts as (

        select * from global_temp.int_page_error_rates__versions__chain_<invocation>

    ),

    too_late_versions as (

        
    with

    late_versions as (

        select * from version_counts
        where
            (ingested_at > version_final_at or coalesce(ingested_at > previous_version_final_at, false))
            and (loaded_at > timestamp'2026-01-01 00:45:10' or ingested_at > timestamp'2026-01-01 00:45:10')

    ),

    replaced_versions as (

        
    select
        late.*,
        coalesce(late.previous_window_start, beyond_chain.replaced.window_start) as replaced_window_start,
        coalesce(late.previous_version_final_at, beyond_chain.replaced.final_at) as replaced_final_at
    from late_versions as late
    left join (
        select
            late.source_table,
            late.event_id,
            late.ingested_at,
            late.event_time,
            late.error_count,
            late.view_count,
            late.page,
            max(named_struct(
                'chain', struct(earlier.ingested_at, earlier.event_time, earlier.error_count, earlier.view_count, earlier.page),
                'window_start', earlier.window_start,
                'final_at', earlier.version_final_at
            )) as replaced
        from late_versions as late
        inner join (
    select
        *,
        window_start + interval 60 second as window_end,
        window_start + interval 3660 second as final_at,
        timestamp_seconds(unix_seconds(window_start) + 60 + case source_table
        when 'page_errors' then 3600
        when 'page_views' then 3600
        else 3600
    end) as version_final_at,
        timestamp_seconds(floor(unix_seconds(event_time) / 600) * 600) as partition_start,
        cast(pmod(xxhash64(page), 1) as int) as series_bucket
    from (
        select
            *,
            timestamp_seconds(floor(unix_seconds(event_time) / 60) * 60) as window_start
        from (
            select earlier.* from analytics.int_page_error_rates__versions as earlier
            left semi join (select * from late_versions where previous_version_final_at is null) as late
                on earlier.source_table = late.source_table and earlier.event_id = late.event_id
            where earlier.quarantine_reason is null and earlier.ingested_at <= timestamp'2026-01-01 01:15:10'
        ) as unreached_versions
    )) as earlier
            on late.source_table = earlier.source_table and late.event_id = earlier.event_id and struct(earlier.ingested_at, earlier.event_time, earlier.error_count, earlier.view_count, earlier.page)
                < struct(late.ingested_at, late.event_time, late.error_count, late.view_count, late.page)
        where late.previous_version_final_at is null
        group by late.source_table, late.event_id, late.ingested_at, late.event_time, late.error_count, late.view_count, late.page
    ) as beyond_chain
        on late.source_table <=> beyond_chain.source_table and late.event_id <=> beyond_chain.event_id and late.ingested_at <=> beyond_chain.ingested_at and late.event_time <=> beyond_chain.event_time and late.error_count <=> beyond_chain.error_count and late.view_count <=> beyond_chain.view_count and late.page <=> beyond_chain.page

    )

    select
        sha2(concat_ws('|', cast(source_table as string), cast(event_id as string), cast(ingested_at as string), cast(event_time as string), cast(error_count as string), cast(view_count as string), cast(page as string), cast(missed.window_start as string)), 256)
            as version_id,
        *,
        missed.window_start as missed_window_start,
        missed.final_at as missed_final_at,
        missed.reason as too_late_reason,
        -- Whole seconds, rounded up, of the exact (microsecond) difference: at least 1 for every entry.
        cast(ceil((unix_micros(ingested_at) - unix_micros(missed.final_at)) / 1000000.0) as bigint) as seconds_after_final
    from replaced_versions
    lateral view explode(array(
        if(coalesce(ingested_at > replaced_final_at, false), named_struct(
            'window_start', replaced_window_start, 'final_at', replaced_final_at, 'reason', 'replaces_final_version'
        ), null),
        if(ingested_at > version_final_at and not (coalesce(ingested_at > replaced_final_at, false) and replaced_window_start = window_start), named_struct('window_start', window_start, 'final_at', version_final_at, 'reason', 'arrived_after_final'), null)
    )) missed_windows as missed
    where missed is not null

    ),

    -- One entry per version and window: copies of one version delivered together (a versions
    -- table loaded before copies were stored once) are listed once.
    too_late_entries as (

        select
            *,
            row_number() over (partition by version_id order by too_late_reason) as copy_number
        from too_late_versions

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
        missed_window_start as window_start,
        missed_final_at as final_at,
        too_late_reason,
        seconds_after_final,
        timestamp'2026-01-01 01:15:10' as detected_at,
        '<invocation_id>' as invocation_id
    from too_late_entries
    where copy_number = 1


-- node: water_level_window_means_history__closed
-- history of water_level_window_means_history: the versions this run closed (the result before its write against the result now), appended to the history's closed versions (a new history: an empty table, and the view)
with

    base_versions as (

        select
        *,
        md5(coalesce(cast(window_key as string), '')
         || '|' || coalesce(cast(computed_at as string), '')
        ) as dbt_scd_id,
        computed_at as dbt_updated_at,
        computed_at as dbt_valid_from,
        cast(null as timestamp) as dbt_valid_to,
        true as is_current_version
    from (
        select
            concat_ws('|', cast(window_start as string), cast(location as string)) as window_key,
            window_start, window_end, location, reading_count, mean_value, value_sum, is_final, final_at, computed_at, invocation_id, partition_start, series_bucket
        from analytics.water_level_window_means timestamp as of timestamp'2026-01-01 01:15:10' as stored
        where false
    ) as published_windows

    ),

    current_windows as (

        select concat_ws('|', cast(window_start as string), cast(location as string)) as window_key, computed_at
        from analytics.water_level_window_means as stored
        where false

    ),

    closed_versions as (

        select
            base_versions.window_key,
            base_versions.window_start,
            base_versions.window_end,
            base_versions.location,
            base_versions.reading_count,
            base_versions.mean_value,
            base_versions.value_sum,
            base_versions.is_final,
            base_versions.final_at,
            base_versions.computed_at,
            base_versions.invocation_id,
            base_versions.partition_start,
            base_versions.series_bucket,
            base_versions.dbt_scd_id,
            base_versions.dbt_updated_at,
            base_versions.dbt_valid_from,
            coalesce(
                current_windows.computed_at,
                timestamp'2026-01-01 01:15:10'
            ) as dbt_valid_to,
            false as is_current_version
        from base_versions
        left join current_windows on base_versions.window_key = current_windows.window_key
        where current_windows.window_key is null or current_windows.computed_at != base_versions.dbt_valid_from

    )

    select * from closed_versions


-- node: water_level_too_late_readings
-- too_late of water_level_window_means_history: merged by version_id (a new listing: created from it)
with

    version_counts as (

        select * from global_temp.int_water_level__versions__chain_<invocation>

    ),

    too_late_versions as (

        
    with

    late_versions as (

        select * from version_counts
        where
            (ingested_at > version_final_at or coalesce(ingested_at > previous_version_final_at, false))
            and (loaded_at > timestamp'2026-01-01 00:45:10' or ingested_at > timestamp'2026-01-01 00:45:10')

    ),

    replaced_versions as (

        
    select
        late.*,
        coalesce(late.previous_window_start, beyond_chain.replaced.window_start) as replaced_window_start,
        coalesce(late.previous_version_final_at, beyond_chain.replaced.final_at) as replaced_final_at
    from late_versions as late
    left join (
        select
            late.event_id,
            late.ingested_at,
            late.event_time,
            late.reading_value,
            late.location,
            max(named_struct(
                'chain', struct(earlier.ingested_at, earlier.event_time, earlier.reading_value, earlier.location),
                'window_start', earlier.window_start,
                'final_at', earlier.final_at
            )) as replaced
        from late_versions as late
        inner join (
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
        from (
            select earlier.* from analytics.int_water_level__versions as earlier
            left semi join (select * from late_versions where previous_version_final_at is null) as late
                on earlier.event_id = late.event_id
            where earlier.quarantine_reason is null and earlier.ingested_at <= timestamp'2026-01-01 01:15:10'
        ) as unreached_versions
    )) as earlier
            on late.event_id = earlier.event_id and struct(earlier.ingested_at, earlier.event_time, earlier.reading_value, earlier.location)
                < struct(late.ingested_at, late.event_time, late.reading_value, late.location)
        where late.previous_version_final_at is null
        group by late.event_id, late.ingested_at, late.event_time, late.reading_value, late.location
    ) as beyond_chain
        on late.event_id <=> beyond_chain.event_id and late.ingested_at <=> beyond_chain.ingested_at and late.event_time <=> beyond_chain.event_time and late.reading_value <=> beyond_chain.reading_value and late.location <=> beyond_chain.location

    )

    select
        sha2(concat_ws('|', cast(event_id as string), cast(ingested_at as string), cast(event_time as string), cast(reading_value as string), cast(location as string), cast(missed.window_start as string)), 256)
            as version_id,
        *,
        missed.window_start as missed_window_start,
        missed.final_at as missed_final_at,
        missed.reason as too_late_reason,
        -- Whole seconds, rounded up, of the exact (microsecond) difference: at least 1 for every entry.
        cast(ceil((unix_micros(ingested_at) - unix_micros(missed.final_at)) / 1000000.0) as bigint) as seconds_after_final
    from replaced_versions
    lateral view explode(array(
        if(coalesce(ingested_at > replaced_final_at, false), named_struct(
            'window_start', replaced_window_start, 'final_at', replaced_final_at, 'reason', 'replaces_final_version'
        ), null),
        if(ingested_at > version_final_at and not (coalesce(ingested_at > replaced_final_at, false) and replaced_window_start = window_start), named_struct('window_start', window_start, 'final_at', version_final_at, 'reason', 'arrived_after_final'), null)
    )) missed_windows as missed
    where missed is not null

    ),

    -- One entry per version and window: copies of one version delivered together (a versions
    -- table loaded before copies were stored once) are listed once.
    too_late_entries as (

        select
            *,
            row_number() over (partition by version_id order by too_late_reason) as copy_number
        from too_late_versions

    )

    select
        version_id,
        event_id,
        location,
        event_time,
        reading_value,
        ingested_at,
        missed_window_start as window_start,
        missed_final_at as final_at,
        too_late_reason,
        seconds_after_final,
        timestamp'2026-01-01 01:15:10' as detected_at,
        '<invocation_id>' as invocation_id
    from too_late_entries
    where copy_number = 1
