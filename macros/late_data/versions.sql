{% macro late_data_windowed(relation, late_window_seconds) %}
    {#- A select of the row versions of `relation` (event_id, event_time, ingested_at, ...) with
        their window, the result partition holding that window, and final_at = window end + late
        window: the moment after which the window no longer accepts rows. -#}
    {%- set window_size = var('window_size_seconds') | int -%}
    {%- set partition_size = var('partition_size_seconds') | int -%}
    {%- if partition_size % window_size != 0 -%}
        {%- do exceptions.raise_compiler_error(
            "var partition_size_seconds=" ~ partition_size ~ " must be a multiple of window_size_seconds="
            ~ window_size ~ ": a window must lie in exactly one partition"
        ) -%}
    {%- endif %}
    select
        *,
        {{ late_data_add_seconds('window_start', window_size) }} as window_end,
        {{ late_data_add_seconds('window_start', window_size + late_window_seconds) }} as final_at,
        {{ late_data_time_bucket('event_time', partition_size) }} as partition_start
    from (
        select
            *,
            {{ late_data_time_bucket('event_time', window_size) }} as window_start
        from {{ relation }}
    )
{%- endmacro %}


{% macro late_data_version_chain(relation, event_key_columns=['event_id'], tie_breaker_columns=[]) %}
    {#- A select of the row versions of `relation` (a late_data_windowed select) with the version
        chain that de-duplicates by event: a version is current from its own ingested_at until
        superseded_at, the arrival of the next version of the same event (null while it is the
        latest); previous_version_final_at is the final_at of the version it replaces. Versions
        that arrived at the same instant are ordered by event_time, then `tie_breaker_columns`. -#}
    select
        *,
        lead(ingested_at) over event_versions as superseded_at,
        lag(final_at) over event_versions as previous_version_final_at
    from {{ relation }}
    window event_versions as (
        partition by {{ event_key_columns | join(', ') }}
        order by {{ (['ingested_at', 'event_time'] + tie_breaker_columns) | join(', ') }}
    )
{%- endmacro %}


{% macro late_data_too_late_versions(
    relation, version_columns, arrived_after, event_key_columns=['event_id'], tie_breaker_columns=[]
) %}
    {#- A select of the versions in `relation` (a late_data_windowed select) that arrived after
        `arrived_after` and by the run time and could not be applied in full: they arrived after
        their own window was final (`arrived_after_final`), or they replace a version whose window
        was already final (`replaces_final_version`: that window keeps the old version). Only the
        events that received a version in that interval are chained, so the cost follows the
        arrivals. `version_columns` identify a version (hashed into version_id). -#}
    with

    arrived_events as (

        select distinct {{ event_key_columns | join(', ') }}
        from {{ relation }}
        where ingested_at > {{ arrived_after }} and ingested_at <= {{ late_data_run_time() }}

    ),

    arrived_event_versions as (

        select *
        from {{ relation }}
        where ({{ event_key_columns | join(', ') }}) in (select * from arrived_events)

    ),

    chained_versions as (

        {{ late_data_version_chain('arrived_event_versions', event_key_columns, tie_breaker_columns) }}

    )

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
    from chained_versions
    where
        ingested_at > {{ arrived_after }}
        and ingested_at <= {{ late_data_run_time() }}
        and (ingested_at > final_at or ingested_at > previous_version_final_at)
{%- endmacro %}
