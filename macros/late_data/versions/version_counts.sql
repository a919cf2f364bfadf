{% macro late_data_version_counts(
    versions, late_window_seconds, series_key, event_key_columns=['event_id'], tie_breaker_columns=[],
    version_late_window=none, listing=false
) %}
    {#- A select of the row versions in `versions` (a versions table: typed source rows plus
        loaded_at) that the model being built ({{ this }}) must look at, windowed, with their
        version chain and:
        - counts_now: the version counts toward its window as of the run time (it is the newest
          version of its event at least(run_time, final_at));
        - counted_before: it counted at the model's previous run, as of that run time, among the
          versions loaded by then (false on a first build);
        - arrived_since_previous_run: loaded since the previous run, or stamped after it;
        - version_final_at: when the version's window stops accepting it (final_at, unless
          `version_late_window` gives each source its own late window: see late_data_windowed);
        - previous_version_final_at: version_final_at of the version it replaces.
        Which versions, by run (late_data_count_plan): on a scheduled run only the events that
        received a version since the previous run, with their versions that can still change a
        window (so the cost follows the arrivals); on a first build every version; on a reconcile or
        backfill run every version of the checked partitions and every version that arrived since
        the earliest of them. `listing` (the too-late listings): scheduled or first build only. -#}
    {%- set plan = late_data_count_plan(versions, late_window_seconds, listing) -%}
    {%- set keys = event_key_columns | join(', ') -%}
    {%- set chain_order = (['ingested_at', 'event_time'] + tie_breaker_columns) | join(', ') -%}
    {%- set run_time = late_data_run_time() -%}
    {%- set previous = late_data_timestamp_literal(plan.previous_run_time) if plan.previous_run_time else none -%}
    {%- set version_final_at = 'version_final_at' if version_late_window else 'final_at' %}
    with

    {%- if plan.mode == 'delta' %}

    arrived_events as (

        select distinct {{ keys }}
        from {{ versions }}
        where {{ plan.arrived }} and ingested_at <= {{ run_time }}

    ),
    {%- endif %}

    selected_versions as (

        select selected.*
        from {{ versions }} as selected
        {%- if plan.mode == 'delta' %}
        left semi join arrived_events
            on
            {%- for key in event_key_columns %}
                selected.{{ key }} = arrived_events.{{ key }}{{ ' and' if not loop.last }}
            {%- endfor %}
        {%- endif %}
        where selected.ingested_at <= {{ run_time }} and {{ plan.lookup }}

    ),

    windowed_versions as (

        {{ late_data_windowed('selected_versions', late_window_seconds, series_key, version_late_window) }}

    ),

    chained_versions as (

        select
            *,
            min(ingested_at) over later_versions as superseded_at,
            {%- if previous %}
            min(if(loaded_at <= {{ previous }} and ingested_at <= {{ previous }}, ingested_at, null))
                over later_versions as superseded_before,
            {%- endif %}
            lag({{ version_final_at }}) over event_versions as previous_version_final_at
        from windowed_versions
        window
            event_versions as (partition by {{ keys }} order by {{ chain_order }}),
            later_versions as (
                partition by {{ keys }} order by {{ chain_order }} rows between 1 following and unbounded following
            )

    )

    select
        *,
        {%- if not version_late_window %}
        final_at as version_final_at,
        {%- endif %}
        {{ late_data_counts_as_of(late_data_judged_at(run_time, version_final_at)) }} as counts_now,
        {%- if previous %}
        loaded_at <= {{ previous }}
        and {{ late_data_counts_as_of('least(' ~ previous ~ ', ' ~ version_final_at ~ ')', 'superseded_before') }} as counted_before,
        {%- else %}
        false as counted_before,
        {%- endif %}
        {{ plan.arrived }} as arrived_since_previous_run
    from chained_versions
{%- endmacro %}


{% macro late_data_run_mode(listing=false) %}
    {#- How the model being built ({{ this }}) reads its versions in this run, as {mode,
        previous_run_time}: 'rebuild' (first build or --full-refresh: every version), 'delta'
        (a scheduled run: the arrivals since the previous run and the versions they can affect) or
        'recompute' (reconcile or backfill, or a table whose previous run the audit does not know:
        every version of the checked range, compared with what is stored). previous_run_time: the
        run the stored state reflects (none on rebuilds and backfills). `listing` (too-late
        listings): rebuild or delta only. -#}
    {%- if not is_incremental() -%}
        {{- return({'mode': 'rebuild', 'previous_run_time': none}) -}}
    {%- endif -%}
    {%- set run_time = late_data_run_time_value() -%}
    {%- set previous_run_time = late_data_last_run_time(this) -%}
    {%- set backfill = late_data_backfill() and not listing -%}
    {%- if previous_run_time is not none and run_time < previous_run_time and not backfill -%}
        {%- do exceptions.raise_compiler_error(
            "run_time " ~ run_time ~ " is before the last run of " ~ this.identifier ~ " (" ~ previous_run_time
            ~ "): runs must move forward; rebuild with --full-refresh to start over"
        ) -%}
    {%- endif -%}
    {%- if backfill -%}
        {{- return({'mode': 'recompute', 'previous_run_time': none}) -}}
    {%- endif -%}
    {%- if previous_run_time is none or (late_data_reconcile() and not listing) -%}
        {{- return({'mode': 'recompute', 'previous_run_time': previous_run_time}) -}}
    {%- endif -%}
    {{- return({'mode': 'delta', 'previous_run_time': previous_run_time}) -}}
{% endmacro %}


{% macro late_data_count_plan(versions, late_window_seconds, listing=false) %}
    {#- late_data_run_mode plus what to read from `versions`: {mode, previous_run_time, checked (the
        recomputed range, or none), lookup (SQL predicate), arrived (SQL predicate: arrived since
        the previous run)}. -#}
    {%- set run_mode = late_data_run_mode(listing) -%}
    {%- set previous_run_time = run_mode.previous_run_time -%}
    {%- set previous = late_data_timestamp_literal(previous_run_time) if previous_run_time else none -%}
    {%- set arrived = '(loaded_at > ' ~ previous ~ ' or ingested_at > ' ~ previous ~ ')' if previous else 'true' -%}
    {%- if run_mode.mode == 'rebuild' -%}
        {{- return({'mode': 'rebuild', 'previous_run_time': none, 'checked': none, 'lookup': 'true', 'arrived': 'true'}) -}}
    {%- endif -%}
    {%- if run_mode.mode == 'recompute' -%}
        {%- set checked = late_data_checked_range_after(this, late_data_last_run_time(this), late_window_seconds)
            if previous_run_time or late_data_backfill() else none -%}
        {{- return({
            'mode': 'recompute',
            'previous_run_time': previous_run_time,
            'checked': checked,
            'lookup': late_data_checked_versions(versions, checked),
            'arrived': arrived,
        }) -}}
    {%- endif -%}
    {#- A version whose count can change between the previous run and this one lies in a window
        not yet final at the previous run (or at the stamp of a version written up to
        write_delay_seconds late), or arrived after that; so does every version chained to it. -#}
    {%- set horizon = previous_run_time - modules.datetime.timedelta(
        seconds=late_data_write_delay_seconds() + late_window_seconds + late_data_window_size_seconds()
    ) -%}
    {{- return({
        'mode': 'delta',
        'previous_run_time': previous_run_time,
        'checked': {'lower': late_data_floor_to_partition(horizon), 'upper': none},
        'lookup': '(event_time >= ' ~ late_data_timestamp_literal(horizon) ~ ' or ingested_at >= ' ~ late_data_timestamp_literal(horizon) ~ ')',
        'arrived': arrived,
    }) -}}
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
