{% macro late_data_version_counts(
    versions, late_window_seconds, series_key, counted_for, listed_for=[], event_key_columns=['event_id'],
    tie_breaker_columns=[], version_late_window=none
) %}
    {#- The versions (quarantined ones left out) that the result `counted_for` and the listings
        `listed_for` must look at in this run (late_data_count_plan), windowed, chained, and with
        the flags of late_data_count_flags. Columns: _versions__macros.yml. -#}
    {%- set plan = late_data_count_plan(versions, late_window_seconds, counted_for, listed_for) -%}
    {%- set run_time = late_data_run_time() -%}
    {%- set version_final_at = 'version_final_at' if version_late_window else 'final_at' %}
    with

    {%- if plan.arrived_since %}
    {%- set since = late_data_timestamp_literal(plan.arrived_since) %}

    arrived_events as (

        select distinct {{ event_key_columns | join(', ') }}
        from {{ versions }}
        where
            -- Two comparisons, not greatest(): each can skip files by its column's bounds.
            (loaded_at > {{ since }} or ingested_at > {{ since }})
            and ingested_at <= {{ run_time }}
            and quarantine_reason is null

    ),
    {%- endif %}

    selected_versions as (

        select selected.*
        from {{ versions }} as selected
        {%- if plan.arrived_since %}
        left semi join arrived_events
            on {% for key in event_key_columns %}selected.{{ key }} = arrived_events.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
        {%- endif %}
        where selected.ingested_at <= {{ run_time }} and selected.quarantine_reason is null and {{ plan.lookup }}

    ),

    windowed_versions as (

        {{ late_data_windowed('selected_versions', late_window_seconds, series_key, version_late_window) }}

    ),

    chained_versions as (

        {{ late_data_chained_versions('windowed_versions', event_key_columns, tie_breaker_columns, plan.counted_run_time, version_final_at) }}

    )

    select
        *,
        {%- if not version_late_window %}
        final_at as version_final_at,
        {%- endif %}
        {{ late_data_count_flags(plan.counted_run_time, version_final_at) }}
    from chained_versions
{%- endmacro %}


{% macro late_data_chained_versions(windowed_versions, event_key_columns, tie_breaker_columns, counted_run_time, version_final_at) %}
    {#- A select of `windowed_versions` with each version's place in its event's chain (ordered by
        arrival, then event time and the tie breakers): when a later version superseded it
        (superseded_at; superseded_before: among the versions loaded by the previous run
        `counted_run_time`) and the version_final_at of the version it replaces. -#}
    {%- set counted_run = late_data_timestamp_literal(counted_run_time) if counted_run_time else none -%}
    {%- set keys = event_key_columns | join(', ') -%}
    {%- set chain_order = (['ingested_at', 'event_time'] + tie_breaker_columns) | join(', ') %}
    select
        *,
        min(ingested_at) over later_versions as superseded_at,
        {%- if counted_run %}
        min(if(loaded_at <= {{ counted_run }} and ingested_at <= {{ counted_run }}, ingested_at, null))
            over later_versions as superseded_before,
        {%- else %}
        {#- Kept so every run writes the same columns in the same order. #}
        cast(null as timestamp) as superseded_before,
        {%- endif %}
        lag({{ version_final_at }}) over event_versions as previous_version_final_at
    from {{ windowed_versions }}
    window
        event_versions as (partition by {{ keys }} order by {{ chain_order }}),
        later_versions as (
            partition by {{ keys }} order by {{ chain_order }} rows between 1 following and unbounded following
        )
{%- endmacro %}


{% macro late_data_count_flags(counted_run_time, version_final_at) %}
    {#- The select-list columns saying how a chained version counts: counts_now (as of the run time),
        counted_before (as of the previous run `counted_run_time`, among the versions loaded by
        then) and written_late (loaded since that run, stamped before it by more than
        write_delay_seconds); false without a previous run. -#}
    {%- set counted_run = late_data_timestamp_literal(counted_run_time) if counted_run_time else none %}
        {{ late_data_counts_as_of(late_data_judged_at(late_data_run_time(), version_final_at)) }} as counts_now,
        {%- if counted_run %}
        loaded_at <= {{ counted_run }}
        and {{ late_data_counts_as_of('least(' ~ counted_run ~ ', ' ~ version_final_at ~ ')', 'superseded_before') }} as counted_before,
        loaded_at > {{ counted_run }} and ingested_at < {{ late_data_timestamp_literal(
            counted_run_time - modules.datetime.timedelta(seconds=late_data_write_delay_seconds())
        ) }} as written_late
        {%- else %}
        false as counted_before,
        false as written_late
        {%- endif %}
{%- endmacro %}


{% macro late_data_run_mode(target=none) %}
    {#- How a result model (`target`, default the model being built) reads the versions in this run,
        as {mode, previous_run_time}: 'rebuild' (first build or --full-refresh: every version),
        'delta' (a scheduled run: the arrivals since its previous run and the versions they can
        affect) or 'recompute' (reconcile or backfill, or a table whose previous run the audit does
        not know: every version of the checked range, compared with what is stored).
        previous_run_time: the run its stored state reflects (none on rebuilds and backfills). -#}
    {%- set target = target or this -%}
    {%- if not late_data_builds_incrementally(target) -%}
        {{- return({'mode': 'rebuild', 'previous_run_time': none}) -}}
    {%- endif -%}
    {%- set run_time = late_data_run_time_value() -%}
    {%- set previous_run_time = late_data_last_run_time(target) -%}
    {%- if previous_run_time is not none and run_time < previous_run_time and not late_data_backfill() -%}
        {%- do exceptions.raise_compiler_error(
            "run_time " ~ run_time ~ " is before the last run of " ~ target.identifier ~ " (" ~ previous_run_time
            ~ "): runs must move forward; rebuild with --full-refresh to start over"
        ) -%}
    {%- endif -%}
    {%- if late_data_backfill() -%}
        {{- return({'mode': 'recompute', 'previous_run_time': none}) -}}
    {%- endif -%}
    {%- if previous_run_time is none or late_data_reconcile() -%}
        {{- return({'mode': 'recompute', 'previous_run_time': previous_run_time}) -}}
    {%- endif -%}
    {{- return({'mode': 'delta', 'previous_run_time': previous_run_time}) -}}
{% endmacro %}


{% macro late_data_listing_since(target=none) %}
    {#- The run time a too-late listing (`target`, default the model being built) lists arrivals
        after: its previous run, or none when it is built from scratch (then it lists every version;
        so does a unit test, which has no previous run). -#}
    {%- if model.resource_type == 'unit_test' -%}{{ return(none) }}{%- endif -%}
    {%- set target = target or this -%}
    {{- return(late_data_last_run_time(target) if late_data_builds_incrementally(target) else none) -}}
{% endmacro %}


{% macro late_data_count_plan(versions, late_window_seconds, counted_for, listed_for=[]) %}
    {#- What late_data_version_counts reads from `versions` in this run, for the result model
        `counted_for` and those of the listings `listed_for` (model names) selected in this
        invocation: {mode (the result model's,
        late_data_run_mode), counted_run_time (the previous run its counted_before refers to),
        arrived_since (only events with a version arrived after it; none: no such restriction),
        lookup (SQL predicate), checked (the recomputed range, or none)}. A unit test (fixed input
        rows; it has no audit nor stored state to read) gets a rebuild's plan. -#}
    {%- if model.resource_type == 'unit_test' -%}
        {{- return({'mode': 'rebuild', 'counted_run_time': none, 'arrived_since': none, 'lookup': 'true', 'checked': none}) -}}
    {%- endif -%}
    {%- set result = late_data_model_relation(counted_for) -%}
    {%- set run_mode = late_data_run_mode(result) if execute else {'mode': 'rebuild', 'previous_run_time': none} -%}
    {%- set since = [] -%}
    {%- set everything = [run_mode.mode == 'rebuild'] -%}
    {#- A listing not selected in this invocation reads nothing now; when it next runs, the counts of
        that invocation cover the arrivals since its own previous run. -#}
    {%- for listing in listed_for if ('model.' ~ project_name ~ '.' ~ listing) in selected_resources -%}
        {%- set listed_since = late_data_listing_since(late_data_model_relation(listing)) if execute else none -%}
        {%- if listed_since is none -%}{%- do everything.append(true) -%}{%- else -%}{%- do since.append(listed_since) -%}{%- endif -%}
    {%- endfor -%}
    {%- if run_mode.mode == 'recompute' -%}
        {%- set checked = late_data_checked_range_after(result, late_data_last_run_time(result), late_window_seconds)
            if run_mode.previous_run_time or late_data_backfill() else none -%}
        {%- set plan = {
            'mode': 'recompute', 'counted_run_time': run_mode.previous_run_time, 'arrived_since': none,
            'lookup': 'true' if true in everything else late_data_checked_versions(versions, checked), 'checked': checked,
        } -%}
    {%- elif true in everything -%}
        {%- set plan = {'mode': run_mode.mode, 'counted_run_time': run_mode.previous_run_time, 'arrived_since': none, 'lookup': 'true', 'checked': none} -%}
    {%- else -%}
        {#- A version whose count can change since the earliest of the previous runs lies in a window
            not yet final then (or at the stamp of a version written up to write_delay_seconds late),
            or arrived after that; so does every version chained to it. -#}
        {%- set arrived_since = (since + [run_mode.previous_run_time]) | min -%}
        {%- set horizon = arrived_since - modules.datetime.timedelta(
            seconds=late_data_write_delay_seconds() + late_window_seconds + late_data_window_size_seconds()
        ) -%}
        {%- set plan = {
            'mode': 'delta', 'counted_run_time': run_mode.previous_run_time, 'arrived_since': arrived_since,
            'lookup': '(event_time >= ' ~ late_data_timestamp_literal(horizon) ~ ' or ingested_at >= '
                ~ late_data_timestamp_literal(horizon) ~ ')',
            'checked': {'lower': late_data_floor_to_partition(horizon), 'upper': none},
        } -%}
    {%- endif -%}
    {{- return(plan) -}}
{% endmacro %}


{% macro late_data_checked_versions(versions, checked) %}
    {#- SQL predicate over `versions` selecting what a recomputation of the `checked` range needs:
        every version whose event time lies in it, and every version that arrived since the
        earliest arrival among those (so every later version of an event in range is chained, a
        correction that moved it out of the range included). 'true' without a range. Runs one
        small query (the earliest arrival). -#}
    {%- if checked is none -%}
        {{- return('true') -}}
    {%- endif -%}
    {%- set in_range = 'event_time >= ' ~ late_data_timestamp_literal(checked.lower) -%}
    {%- if checked.upper is not none -%}
        {%- set in_range = in_range ~ ' and event_time < ' ~ late_data_timestamp_literal(checked.upper) -%}
    {%- endif -%}
    {%- if not execute -%}
        {{- return(in_range) -}}
    {%- endif -%}
    {%- set earliest_arrival = run_query('select min(ingested_at) from ' ~ versions ~ ' where ' ~ in_range).columns[0].values()[0] -%}
    {%- set arrived_from = [earliest_arrival, checked.lower] | min if earliest_arrival is not none else checked.lower -%}
    {{- return('((' ~ in_range ~ ') or ingested_at >= ' ~ late_data_timestamp_literal(arrived_from) ~ ')') -}}
{% endmacro %}
