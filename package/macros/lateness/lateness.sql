{% macro arrivals(relation, pipeline) %}
    {#- A select, per countable version in `relation` (a pipeline's versions table, or any relation
        of its versions with the model's columns and a quarantine_reason; a quarantined version
        counts nowhere, and copies of one are one version), of how late it arrived: source_table, event_id and series_key (as text), event_time, ingested_at, the end and
        final_at of the earliest window holding it (of sliding windows, the first to close), its
        source's late window (late_window_seconds), lateness_seconds (ingested_at - event_time)
        and seconds_after_window_end, and is_first_delivery: whether it is the first delivery of
        its event (a correction is not). A version a dimension change made is no delivery and is
        left out. -#}
    select
        *,
        ingested_at = min(ingested_at) over (partition by source_table, event_id) as is_first_delivery,
        timestamp_seconds(unix_seconds(window_end) + late_window_seconds) as final_at,
        (unix_millis(ingested_at) - unix_millis(event_time)) / 1000.0 as lateness_seconds,
        (unix_millis(ingested_at) - unix_millis(window_end)) / 1000.0 as seconds_after_window_end
    from (
        select
            {{ pipeline.source_column or late_data.sql_string(late_data.source_table_name(pipeline)) }} as source_table,
            {{ late_data.text_key(pipeline.event_key | reject('equalto', pipeline.source_column) | list) }} as event_id,
            {{ late_data.text_key(pipeline.series_key) }} as series_key,
            event_time,
            ingested_at,
            {#- A session version's own moment is its event time (late_data.windowed). #}
            {{ 'event_time' if pipeline.session_gap else late_data.add_seconds(late_data.time_bucket('event_time', pipeline.window_slide), pipeline.window_slide) }} as window_end,
            {{ late_data.source_late_window(pipeline) if pipeline.source_column else pipeline.late_window }} as late_window_seconds
        from (
            -- Copies of one version (an older versions table may hold them) are one arrival.
            select distinct * from {{ relation }}
            where
                quarantine_reason is null
                {%- if pipeline.dimensions %}
                and ingested_at = source_ingested_at
                {%- endif %}
        )
    )
{%- endmacro %}


{% macro source_table_name(pipeline) %}
    {#- The name a pipeline without a source_column gives its versions' source: the one source table
        its facts come from (a dimension's are not), else the model's name. -#}
    {{- return(pipeline.source_tables[0] if pipeline.source_tables | length == 1 else pipeline.alias) -}}
{% endmacro %}


{% macro recommended_late_windows(arrivals) %}
    {#- A select, per source table of the rows of `arrivals` (late_data.arrivals) that count
        (late_data.counted_arrivals; counts_corrections says which), of their late window
        (configured_late_window_seconds), the share it captured (arrived by window end + late window)
        and the smallest whole number of seconds L such that var `late_window_target_share` of them
        arrived by window end + L (recommended_late_window_seconds, 0 if they arrived before it). -#}
    {%- set target_share = late_data.target_share() %}
    with

    counted_arrivals as (

        {{ late_data.counted_arrivals(arrivals) }}

    ),

    ranked_arrivals as (

        select
            source_table,
            seconds_after_window_end,
            cume_dist() over (partition by source_table order by seconds_after_window_end) as cumulative_share
        from counted_arrivals

    ),

    target_quantiles as (

        select
            source_table,
            min(seconds_after_window_end) as target_quantile_seconds
        from ranked_arrivals
        where cumulative_share >= {{ target_share }}
        group by source_table

    ),

    per_source as (

        select
            source_table,
            count(*) as arrived_rows,
            max(late_window_seconds) as configured_late_window_seconds,
            avg(cast(seconds_after_window_end <= late_window_seconds as int)) as configured_captured_share
        from counted_arrivals
        group by source_table

    )

    select
        per_source.source_table,
        per_source.arrived_rows,
        {{ target_share }} as target_share,
        per_source.configured_late_window_seconds,
        per_source.configured_captured_share,
        greatest(0, cast(ceil(target_quantiles.target_quantile_seconds) as bigint)) as recommended_late_window_seconds,
        per_source.configured_captured_share >= {{ target_share }} as configured_meets_target,
        {{ late_data.counts_corrections() }} as counts_corrections
    from per_source
    inner join target_quantiles on per_source.source_table = target_quantiles.source_table
{%- endmacro %}


{% macro counted_arrivals(arrivals) %}
    {#- A select of the rows of `arrivals` (late_data.arrivals) that lateness statistics count: each
        event's first delivery, or every delivery with var late_window_counts_corrections. -#}
    select * from {{ arrivals }}
    {%- if not late_data.counts_corrections() %}
    where is_first_delivery
    {%- endif %}
{%- endmacro %}


{% macro lateness(pipeline) %}
    {#- A select, per source table of a pipeline (its versions loaded so far), of how late its rows
        arrive and which late window would capture var `late_window_target_share` of them:
        arrived_rows, p50/p90/p99 and max lateness (ingested_at - event_time, seconds; exact
        percentiles), the share that arrived after their window was final
        (share_beyond_late_window), and the columns of late_data.recommended_late_windows; each
        event's first delivery only, unless var late_window_counts_corrections. The
        pipeline's lateness view (<model>__lateness) holds it; `pipeline` may also be a model's
        name, for a one-line model of your own. -#}
    {%- set pipeline = late_data.pipeline_named(pipeline) if pipeline is string else pipeline %}
    with

    arrivals as (

        {{ late_data.arrivals(late_data.pipeline_relation(pipeline, 'versions'), pipeline) }}

    ),

    distribution as (

        select
            source_table,
            percentile(lateness_seconds, array(0.5, 0.9, 0.99)) as lateness_percentiles,
            max(lateness_seconds) as max_lateness_seconds,
            avg(cast(seconds_after_window_end > late_window_seconds as int)) as share_beyond_late_window
        from ({{ late_data.counted_arrivals('arrivals') }})
        group by source_table

    ),

    recommendations as (

        {{ late_data.recommended_late_windows('arrivals') }}

    )

    select
        recommendations.source_table,
        recommendations.arrived_rows,
        distribution.lateness_percentiles[0] as p50_lateness_seconds,
        distribution.lateness_percentiles[1] as p90_lateness_seconds,
        distribution.lateness_percentiles[2] as p99_lateness_seconds,
        distribution.max_lateness_seconds,
        distribution.share_beyond_late_window,
        recommendations.configured_late_window_seconds,
        recommendations.configured_captured_share,
        recommendations.target_share,
        recommendations.recommended_late_window_seconds,
        recommendations.configured_meets_target,
        recommendations.counts_corrections
    from recommendations
    inner join distribution on recommendations.source_table = distribution.source_table
{%- endmacro %}
