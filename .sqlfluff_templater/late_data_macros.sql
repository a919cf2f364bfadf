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
{% macro late_data_parse_time(raw, name) -%}{{ return(raw) }}{%- endmacro %}
{% macro late_data_as_of(history, as_of=none) -%}
    select * from {{ history }} where dbt_valid_from <= {{ as_of }} and (dbt_valid_to > {{ as_of }} or dbt_valid_to is null)
{%- endmacro %}
{% macro late_data_counts_as_of(judged_at, superseded_at='superseded_at') -%}
    (ingested_at <= {{ judged_at }} and coalesce({{ superseded_at }} > {{ judged_at }}, true))
{%- endmacro %}
{% macro late_data_judged_at(run_time, final_at='final_at') -%}least({{ run_time }}, {{ final_at }}){%- endmacro %}
{% macro var(name, default=none) -%}
    {{- return({
        'window_size_seconds': 60,
        'late_window_seconds': 3600,
        'partition_size_seconds': 600,
        'series_buckets': 8,
        'raw_schema': 'raw',
    }.get(name, default)) -}}
{%- endmacro %}
{% macro late_data_late_window_seconds(sources=none) -%}{{ return(3600) }}{%- endmacro %}
{% macro late_data_source_late_window(source_column, sources) -%}
    case {{ source_column }} when 'page_errors' then 3600 else 3600 end
{%- endmacro %}
{% macro late_data_windowed(relation, late_window_seconds, series_key, version_late_window=none) -%}
    select *, window_start + interval {{ late_window_seconds }} second as final_at from {{ relation }}
{%- endmacro %}
{% macro late_data_new_versions(relation, version_columns, late_window_seconds) -%}
    select * from {{ relation }} where ingested_at >= timestamp'2026-01-01 00:00:00'
{%- endmacro %}
{% macro late_data_version_counts(
    versions, late_window_seconds, series_key, counted_for, listed_for=[], event_key_columns=['event_id'],
    tie_breaker_columns=[], version_late_window=none
) -%}
    select *, true as counts_now, false as counted_before from {{ versions }}
{%- endmacro %}
{% macro late_data_too_late_versions(version_counts, version_columns) -%}
    select *, 'arrived_after_final' as too_late_reason from {{ version_counts }}
{%- endmacro %}
{% macro late_data_count() -%}{{ return({}) }}{%- endmacro %}
{% macro late_data_exact_sum(column) -%}{{ return({}) }}{%- endmacro %}
{% macro late_data_integer_sum(column) -%}{{ return({}) }}{%- endmacro %}
{% macro late_data_digest(columns) -%}{{ return({}) }}{%- endmacro %}
{% macro late_data_window_checksums(version_counts, result, key_columns, checksums) -%}
    select window_start, count(*) as checksum from {{ version_counts }} group by window_start
{%- endmacro %}
{% macro late_data_windows_to_write(window_checksums, result, key_columns, checksums, late_window_seconds) -%}
    select *, true as is_final from {{ window_checksums }}
{%- endmacro %}
{% macro late_data_write_columns() -%}{{ return(', window_change, window_repaired') }}{%- endmacro %}
{% macro late_data_window_key(key_columns) -%}concat_ws('|', {{ key_columns | join(', ') }}){%- endmacro %}
{% macro late_data_window_revisions(history, key_columns, count_column, value_column) -%}
    select *, 1 as version_number from {{ history }}
{%- endmacro %}
{% macro late_data_check_version_counts(version_counts, result=none, listing=false) -%}{%- endmacro %}
{% macro late_data_model_relation(model_name) -%}{{ return('analytics.' ~ model_name) }}{%- endmacro %}
{% macro late_data_quarantine_reason(required_columns, exact_sum_column=none, count_column=none) -%}
    case when {{ required_columns[0] }} is null then 'null_{{ required_columns[0] }}' end
{%- endmacro %}
{% macro late_data_target_share() -%}{{ return(0.999) }}{%- endmacro %}
{% macro page_error_rates_union(errors, views, carried_columns) -%}
    select * from {{ errors }}
    union all
    select * from {{ views }}
{%- endmacro %}
