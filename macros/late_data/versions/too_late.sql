{% macro late_data_too_late_versions(version_counts, version_columns, event_key_columns=['event_id']) %}
    {#- A select of the versions in `version_counts` (a version-counts model) that arrived since the
        listing's previous run (every version when it is built from scratch) and could not be
        applied in full: they arrived after their own window was final (`arrived_after_final`), or
        they replace a version whose window was already final (`replaces_final_version`: that
        window keeps the old version). `version_columns` identify a version (hashed into
        version_id); `event_key_columns` identify an event, as in the version chain. -#}
    {%- set since = late_data_listing_since() if execute else none -%}
    {%- set since = late_data_timestamp_literal(since) if since else none -%}
    {%- set keys = event_key_columns | join(', ') %}
    select
        sha2(concat_ws('|', {% for column in version_columns %}cast({{ column }} as string){{ ', ' if not loop.last }}{% endfor %}), 256)
            as version_id,
        *,
        case
            when ingested_at > version_final_at then 'arrived_after_final'
            else 'replaces_final_version'
        end as too_late_reason,
        unix_seconds(ingested_at) - unix_seconds(coalesce(
            case when ingested_at > version_final_at then version_final_at end, previous_version_final_at
        )) as seconds_after_final
    from {{ version_counts }}
    {#- Either reason needs a version of the event whose window was final before this run: only
        those events are chained for the listing. Written as an IN subquery on the event key,
        the chain's window partition, so Spark applies it below that window (a semi join
        written here would stay above it); the listing's cost follows the events that can be
        listed, not all that arrived. #}
    where
        (ingested_at > version_final_at or ingested_at > previous_version_final_at)
        and ({{ keys }}) in (
            select {{ keys }} from {{ version_counts }} where version_final_at < {{ late_data_run_time() }}
        )
        {%- if since %}
        and (loaded_at > {{ since }} or ingested_at > {{ since }})
        {%- endif %}
{%- endmacro %}
