{% macro late_data_too_late_versions(version_counts, version_columns) %}
    {#- A select of the versions in `version_counts` (a version-counts model) that arrived since the
        listing's previous run (every version when it is built from scratch) and could not be
        applied in full: they arrived after their own window was final (`arrived_after_final`), or
        they replace a version whose window was already final (`replaces_final_version`: that
        window keeps the old version). `version_columns` identify a version (hashed into
        version_id). -#}
    {%- set since = late_data_listing_since() if execute else none -%}
    {%- set since = late_data_timestamp_literal(since) if since else none %}
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
    where
        (ingested_at > version_final_at or ingested_at > previous_version_final_at)
        {%- if since %}
        and (loaded_at > {{ since }} or ingested_at > {{ since }})
        {%- endif %}
{%- endmacro %}
