{% macro late_data_new_versions(relation, version_columns, late_window_seconds) %}
    {#- A select of the row versions in `relation` (a source's typed versions) that the versions
        table being built ({{ this }}) does not hold yet, compared on every column of
        `version_columns`: what arrived since its previous run. Everything on a first build or
        --full-refresh. A scheduled run looks at versions stamped from its previous run minus var
        `write_delay_seconds` on (so a row written a little after its ingested_at stamp is still
        found); a reconcile run at every version whose event time or arrival lies in the checked
        range, so it also finds rows written later than that. Both sides of the comparison are read
        with the same predicate on the stamps, which lets the table format skip older files. A
        backfill loads nothing: it recomputes old partitions from the versions loaded so far, and
        the next scheduled run loads and applies what arrived since. -#}
    {%- if not is_incremental() %}
    -- Written in arrival order, so every file covers a narrow range of stamps and later runs,
    -- which read by stamp, skip the files they do not need.
    select * from {{ relation }}
    order by ingested_at
    {%- else %}
    select delivered.*
    from {{ relation }} as delivered
    left anti join (
        select {{ version_columns | join(', ') }}
        from {{ this }}
        where {{ late_data_load_candidates(this, late_window_seconds) }}
    ) as loaded
        on
        {%- for column in version_columns %}
            delivered.{{ column }} <=> loaded.{{ column }}{{ ' and' if not loop.last }}
        {%- endfor %}
    where {{ late_data_load_candidates(this, late_window_seconds, relation_alias='delivered') }}
    {%- endif %}
{%- endmacro %}


{% macro late_data_load_candidates(target, late_window_seconds, relation_alias=none) %}
    {#- SQL predicate over ingested_at and event_time (of `relation_alias`, if given): the row
        versions a run of the versions table `target` compares with those it holds (see
        late_data_new_versions), and every version without an ingested_at stamp. 'true' when its
        last run is unknown. -#}
    {%- set prefix = relation_alias ~ '.' if relation_alias else '' -%}
    {#- A version without a stamp is never counted but is loaded, so the quarantine shows it. -#}
    {%- set unstamped = prefix ~ 'ingested_at is null' -%}
    {%- if late_data_backfill() -%}
        {{- return('false') -}}
    {%- endif -%}
    {%- set last_run_time = late_data_last_run(target).get('any_run_time') -%}
    {%- if last_run_time is none -%}
        {{- return('true') -}}
    {%- endif -%}
    {%- set delay = modules.datetime.timedelta(seconds=late_data_write_delay_seconds()) -%}
    {%- if late_data_reconcile() -%}
        {%- set lower = late_data_checked_range_after(target, last_run_time, late_window_seconds).lower - delay -%}
        {{- return('(' ~ prefix ~ 'event_time >= ' ~ late_data_timestamp_literal(lower) ~ ' or ' ~ prefix ~ 'ingested_at >= ' ~ late_data_timestamp_literal(lower) ~ ' or ' ~ unstamped ~ ')') -}}
    {%- endif -%}
    {{- return('(' ~ prefix ~ 'ingested_at >= ' ~ late_data_timestamp_literal([last_run_time, late_data_run_time_value()] | min - delay) ~ ' or ' ~ unstamped ~ ')') -}}
{% endmacro %}
