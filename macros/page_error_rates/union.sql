{% macro page_error_rates_union(errors, views, carried_columns) -%}
    {#- The two page counters as one relation (source_table, error_count, view_count), so one
        checksum covers a page's window whichever counter changed. -#}
    {%- for relation, source_table, counts in [
        (errors, 'page_errors', ['error_count', '0 as view_count']),
        (views, 'page_views', ['0 as error_count', 'view_count']),
    ] %}
    select
        '{{ source_table }}' as source_table,
        event_id,
        page,
        event_time,
        {{ (counts + ['ingested_at'] + carried_columns) | join(',\n        ') }}
    from {{ relation }}
    {% if not loop.last %}
    union all
    {% endif -%}
    {%- endfor %}
{%- endmacro %}
