{% macro late_data_version_chain(relation, tie_breaker_columns=[]) %}
    {#- A select of every row version of `relation` (columns event_id, event_time, ingested_at,
        ...) with the version chain that de-duplicates by event_id: a version is current from
        its own ingested_at until superseded_at, the arrival of the next version (null while it
        is the latest). previous_version_event_time is the event time of the version it replaces.
        `tie_breaker_columns` order versions that arrived at the same instant. -#}
    select
        *,
        lead(ingested_at) over event_versions as superseded_at,
        lag(event_time) over event_versions as previous_version_event_time
    from {{ relation }}
    window event_versions as (
        partition by event_id
        order by {{ (['ingested_at', 'event_time'] + tie_breaker_columns) | join(', ') }}
    )
{%- endmacro %}


{% macro late_data_windowed(relation, late_window_seconds) %}
    {#- A select of the versions of `relation` (a late_data_version_chain) with their window and
        partition, and final_at = window end + late window: the moment after which the window no
        longer accepts rows. previous_version_final_at is that of the version a row replaces. -#}
    {%- set seconds_until_final = var('window_size_seconds') + late_window_seconds %}
    select
        *,
        {{ late_data_add_seconds('window_start', var('window_size_seconds')) }} as window_end,
        {{ late_data_add_seconds('window_start', seconds_until_final) }} as final_at,
        {{ late_data_add_seconds('previous_version_window_start', seconds_until_final) }} as previous_version_final_at
    from (
        select
            *,
            {{ late_data_time_bucket('event_time', var('window_size_seconds')) }} as window_start,
            {{ late_data_time_bucket('previous_version_event_time', var('window_size_seconds')) }}
                as previous_version_window_start,
            {{ late_data_time_bucket('event_time', var('partition_size_seconds')) }} as partition_start
        from {{ relation }}
    )
{%- endmacro %}


{% macro late_data_too_late_versions(relation, version_columns, arrived_after) %}
    {#- A select of the versions in `relation` (a late_data_windowed select) that could not be
        applied in full: they arrived after their own window was final (`arrived_after_final`),
        or they replace a version whose window was already final (`replaces_final_version`: that
        window keeps the old version). Only versions that arrived after `arrived_after` and by
        the run time. `version_columns` identify a version (hashed into version_id). -#}
    select
        sha2(concat_ws('|', {% for column in version_columns %}cast({{ column }} as string){{ ', ' if not loop.last }}{% endfor %}), 256)
            as version_id,
        *,
        case
            when ingested_at > final_at then 'arrived_after_final'
            else 'replaces_final_version'
        end as too_late_reason,
        unix_seconds(ingested_at) - unix_seconds(coalesce(
            case when ingested_at > final_at then final_at end, previous_version_final_at
        )) as seconds_after_final
    from {{ relation }}
    where
        ingested_at <= {{ late_data_run_time() }}
        and ingested_at > {{ arrived_after }}
        and (ingested_at > final_at or ingested_at > previous_version_final_at)
{%- endmacro %}
