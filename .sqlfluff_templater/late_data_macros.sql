{#- Lint-time stand-ins for the project's macros (sqlfluff's jinja templater has no dbt adapter,
    no run_query and no `modules`). Each renders SQL of the same shape as the real macro. -#}
{% macro late_data_time_bucket(timestamp_expression, size_seconds) -%}
    timestamp_seconds(floor(unix_seconds({{ timestamp_expression }}) / {{ size_seconds }}) * {{ size_seconds }})
{%- endmacro %}
{% macro late_data_add_seconds(timestamp_expression, seconds) -%}
    {{ timestamp_expression }} + interval {{ seconds }} second
{%- endmacro %}
{% macro late_data_timestamp_literal(moment) -%}timestamp'2026-01-01 00:00:00'{%- endmacro %}
{% macro late_data_run_time() -%}timestamp'2026-01-01 01:00:10'{%- endmacro %}
{% macro late_data_checked_partitions(target) -%}partition_start >= timestamp'2026-01-01 00:00:00'{%- endmacro %}
{% macro late_data_relation_exists(relation) -%}{{ return(true) }}{%- endmacro %}
{% macro late_data_parse_time(raw, name) -%}{{ return(raw) }}{%- endmacro %}
{% macro late_data_as_of(history, as_of=none) -%}
    select * from {{ history }} where dbt_valid_from <= {{ as_of }} and (dbt_valid_to > {{ as_of }} or dbt_valid_to is null)
{%- endmacro %}
{% macro late_data_last_run_time(target) -%}{{ return(none) }}{%- endmacro %}
{% macro late_data_counts_as_of(run_time) -%}
    (ingested_at <= least({{ run_time }}, final_at) and coalesce(superseded_at > least({{ run_time }}, final_at), true))
{%- endmacro %}
{% macro late_data_exact_sum(column) -%}sum(cast({{ column }} as decimal(28, 9))){%- endmacro %}
{% macro late_data_digest(columns) -%}sum(cast(xxhash64({{ columns | join(', ') }}) as decimal(38, 0))){%- endmacro %}
{% macro var(name, default=none) -%}
    {{- return({
        'window_size_seconds': 60,
        'late_window_seconds': 3600,
        'partition_size_seconds': 600,
        'raw_schema': 'raw',
    }.get(name, default)) -}}
{%- endmacro %}
{% macro late_data_late_window_seconds(sources=none) -%}{{ return(3600) }}{%- endmacro %}
{% macro late_data_version_chain(relation, event_key_columns=['event_id'], tie_breaker_columns=[]) -%}
    select *, lead(ingested_at) over event_versions as superseded_at
    from {{ relation }}
    window event_versions as (partition by event_id order by ingested_at)
{%- endmacro %}
{% macro late_data_scan_horizon(relation, source_tables) -%}
    (event_time >= timestamp'2026-01-01 00:00:00' or ingested_at >= timestamp'2026-01-01 00:00:00')
{%- endmacro %}
{% macro late_data_windowed(relation, late_window_seconds) -%}
    select *, window_start + interval {{ late_window_seconds }} second as final_at from {{ relation }}
{%- endmacro %}
{% macro late_data_too_late_versions(
    relation, version_columns, arrived_after, event_key_columns=['event_id'], tie_breaker_columns=[]
) -%}
    select *, 'arrived_after_final' as too_late_reason from {{ relation }} where ingested_at > {{ arrived_after }}
{%- endmacro %}
{% macro late_data_window_revisions(history, key_columns, count_column, value_column) -%}
    select *, 1 as version_number from {{ history }}
{%- endmacro %}
{% macro late_data_windows_to_write(fresh, key_columns, checksum_columns, partition_column='partition_start') -%}
    select *, window_start as partition_start from {{ fresh }} where window_start >= timestamp'2026-01-01 00:00:00'
{%- endmacro %}
