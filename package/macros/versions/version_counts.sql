{% macro version_counts(pipeline, plan, matching=none) %}
    {#- The versions of a pipeline (quarantined ones left out) that `plan` (late_data.count_plan)
        reads in this run, windowed, chained, with the flags of late_data.count_flags. With
        `matching` ({relation, columns}), the events late_data.matching_events selects instead of
        those with a version arrived since plan.arrived_since. -#}
    {%- set versions = late_data.pipeline_relation(pipeline, 'versions') -%}
    {%- set run_time = late_data.run_time() -%}
    {%- set version_final_at = 'version_final_at' if pipeline.source_column else 'final_at' -%}
    {%- set events = 'matching_events' if matching else ('arrived_events' if plan.arrived_since else none) %}
    with

    {%- if matching %}

    matching_events as (

        {{ late_data.matching_events(pipeline, plan, matching) }}

    ),
    {%- elif plan.arrived_since %}

    arrived_events as (

        {{ late_data.arrived_events(pipeline, plan.arrived_since) }}

    ),
    {%- endif %}

    selected_versions as (

        select {{ '/*+ BROADCAST(' ~ events ~ ') */ ' if events and plan.get('broadcast') }}selected.*
        from {{ versions }} as selected
        {%- if events %}
        left semi join {{ events }}
            on {% for key in pipeline.event_key %}selected.{{ key }} = {{ events }}.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
        {%- endif %}
        where selected.ingested_at <= {{ run_time }} and selected.quarantine_reason is null and {{ plan.lookup }}

    ),

    windowed_versions as (

        {{ late_data.windowed('selected_versions', pipeline) }}

    ),

    chained_versions as (

        {{ late_data.chained_versions('windowed_versions', pipeline, plan.counted_run_time, version_final_at) }}

    )

    select
        *,
        {%- if not pipeline.source_column %}
        final_at as version_final_at,
        {%- endif %}
        {{ late_data.count_flags(plan.counted_run_time, version_final_at) }}
    from chained_versions
{%- endmacro %}


{% macro arrived_events(pipeline, arrived_since) %}
    {#- A select of the events (their event key) that got a countable version after
        `arrived_since`, for late_data.version_counts. -#}
    {%- set since = late_data.timestamp_literal(arrived_since) %}
    select distinct {{ pipeline.event_key | join(', ') }}
    from {{ late_data.pipeline_relation(pipeline, 'versions') }}
    where
        -- Two comparisons, not greatest(): each can skip files by its column's bounds.
        (loaded_at > {{ since }} or ingested_at > {{ since }})
        and ingested_at <= {{ late_data.run_time() }}
        and quarantine_reason is null
{%- endmacro %}


{% macro matching_events(pipeline, plan, matching) %}
    {#- A select of the events (their event key) with a version in the range `plan` reads whose
        window matches a row of the CTE `matching.relation` on `matching.columns` (the window's
        start and series key, and a value column), for late_data.version_counts. Broadcast where
        the plan broadcasts the arrivals (those rows come from them): else Spark, which cannot
        size the CTE, shuffles every candidate version of the range to join them. -#}
    {%- set versions = late_data.pipeline_relation(pipeline, 'versions') -%}
    {%- set candidates -%}
        (
            select * from {{ versions }}
            where ingested_at <= {{ late_data.run_time() }} and quarantine_reason is null and {{ plan.lookup }}
        ) as candidate_versions
    {%- endset %}
    select {{ '/*+ BROADCAST(matched) */ ' if plan.get('broadcast') }}distinct {% for key in pipeline.event_key %}windowed_candidates.{{ key }}{{ ', ' if not loop.last }}{% endfor %}
    from (
        {{ late_data.windowed(candidates, pipeline) }}
    ) as windowed_candidates
    left semi join {{ matching.relation }} as matched
        on {% for column in matching.columns %}windowed_candidates.{{ column }} = matched.{{ column }}{{ ' and ' if not loop.last }}{% endfor %}
{%- endmacro %}


{% macro chained_versions(windowed_versions, pipeline, counted_run_time, version_final_at) %}
    {#- A select of `windowed_versions` with each version's place in its event's chain (ordered by
        arrival, then event time and the pipeline's tie breakers): when a later version superseded
        it (superseded_at; superseded_before: among the versions loaded by the previous run
        `counted_run_time`) and the version_final_at and window_start of the version it replaces. -#}
    {%- set counted_run = late_data.timestamp_literal(counted_run_time) if counted_run_time else none -%}
    {#- A sliding window pipeline chains each window offset apart: every version has one row per offset. -#}
    {%- set keys = (pipeline.event_key + (['window_offset'] if pipeline.window_slide < pipeline.window_size else [])) | join(', ') -%}
    {%- set chain_order = (['ingested_at', 'event_time'] + pipeline.tie_breaker) | join(', ') %}
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
        {%- if pipeline.dimensions and counted_run %}
        -- A dimension change made a version of the event since the previous run.
        max(ingested_at != source_ingested_at and loaded_at > {{ counted_run }}) over (partition by {{ keys }}) as dimension_changed,
        {%- endif %}
        lag({{ version_final_at }}) over event_versions as previous_version_final_at,
        lag(window_start) over event_versions as previous_window_start
    from {{ windowed_versions }}
    window
        event_versions as (partition by {{ keys }} order by {{ chain_order }}),
        later_versions as (
            partition by {{ keys }} order by {{ chain_order }} rows between 1 following and unbounded following
        )
{%- endmacro %}


{% macro count_flags(counted_run_time, version_final_at) %}
    {#- The select-list columns saying how a chained version counts: counts_now (as of the run time),
        counted_before (as of the previous run `counted_run_time`, among the versions loaded by
        then) and written_late (loaded since that run, stamped before it by more than
        write_delay_seconds); false without a previous run. -#}
    {%- set counted_run = late_data.timestamp_literal(counted_run_time) if counted_run_time else none %}
        {{ late_data.counts_as_of(late_data.judged_at(late_data.run_time(), version_final_at)) }} as counts_now,
        {%- if counted_run %}
        loaded_at <= {{ counted_run }}
        and {{ late_data.counts_as_of('least(' ~ counted_run ~ ', ' ~ version_final_at ~ ')', 'superseded_before') }} as counted_before,
        loaded_at > {{ counted_run }} and ingested_at < {{ late_data.timestamp_literal(
            counted_run_time - late_data.seconds(late_data.write_delay_seconds())
        ) }} as written_late
        {%- else %}
        false as counted_before,
        false as written_late
        {%- endif %}
{%- endmacro %}


{% macro checked_versions(pipeline, checked) %}
    {#- SQL predicate over a pipeline's versions selecting what a recomputation of the `checked` range needs:
        every version whose event time lies in it, and every version that arrived since the
        earliest arrival among those (so every later version of an event in range is chained, a
        correction that moved it out of the range included). 'true' without a range. Runs one
        small query (the earliest arrival). -#}
    {%- if checked is none -%}
        {{- return('true') -}}
    {%- endif -%}
    {%- set versions = late_data.pipeline_relation(pipeline, 'versions') -%}
    {%- set in_range = 'event_time >= ' ~ late_data.timestamp_literal(checked.lower) -%}
    {%- if checked.upper is not none -%}
        {#- A sliding window starting in range holds event times up to its size after its start. -#}
        {%- set in_range = in_range ~ ' and event_time < ' ~ late_data.timestamp_literal(checked.upper + late_data.seconds(pipeline.window_size - pipeline.window_slide)) -%}
    {%- endif -%}
    {%- if not execute or late_data.is_explain() -%}
        {{- return(in_range) -}}
    {%- endif -%}
    {%- set earliest_arrival = run_query('select min(ingested_at) from ' ~ versions ~ ' where ' ~ in_range).columns[0].values()[0] -%}
    {%- set arrived_from = [earliest_arrival, checked.lower] | min if earliest_arrival is not none else checked.lower -%}
    {{- return('((' ~ in_range ~ ') or ingested_at >= ' ~ late_data.timestamp_literal(arrived_from) ~ ')') -}}
{% endmacro %}


{% macro checked_range_after(pipeline, last_run_time) %}
    {#- The partitions a recomputation of a pipeline's result compares, given the run time of its
        last scheduled run, as {'lower': datetime, 'upper': datetime or none}. Scheduled
        (reconcile): from the partition holding the oldest window that can have changed since that
        run (or since run_time minus the late window, if older), on. Backfill (var `backfill`): the
        partitions overlapping [backfill.from, backfill.to). -#}
    {%- set run_time = late_data.run_time_value() -%}
    {%- set since = [run_time, last_run_time] | min if last_run_time is not none else run_time -%}
    {%- set scheduled_from = late_data.floor_to(
        since - late_data.seconds(pipeline.late_window + pipeline.window_size), pipeline.partition_size) -%}
    {%- set backfill = late_data.backfill() -%}
    {%- if pipeline.session_gap -%}
        {%- if backfill is not none -%}
            {%- do exceptions.raise_compiler_error(
                "a backfill of " ~ pipeline.alias ~ " is not supported yet: its windows are sessions; rebuild it with"
                ~ " --full-refresh (var include_too_late does not apply to sessions yet)"
            ) -%}
        {%- endif -%}
        {{- return(late_data.session_range(pipeline, since)) -}}
    {%- endif -%}
    {%- if backfill is none -%}
        {{- return({'lower': scheduled_from, 'upper': none}) -}}
    {%- endif -%}
    {#- History versions are stamped with the run time: a backfill stamped at or before the last
        scheduled run would collide with, or predate, versions that run recorded. -#}
    {%- if last_run_time is not none and run_time <= last_run_time -%}
        {%- do exceptions.raise_compiler_error(
            "a backfill's run_time must be after the last scheduled run of " ~ pipeline.alias ~ " ("
            ~ last_run_time ~ "); got run_time=" ~ run_time
        ) -%}
    {%- endif -%}
    {%- set upper = late_data.floor_to(backfill.to - modules.datetime.timedelta(microseconds=1), pipeline.partition_size)
        + late_data.seconds(pipeline.partition_size) -%}
    {#- Scheduled runs change the partitions from scheduled_from on, relative to what the last run
        stored; a backfill rewriting them would be counted twice or undone. -#}
    {%- if upper > scheduled_from -%}
        {%- do exceptions.raise_compiler_error(
            "a backfill must end by " ~ scheduled_from ~ ": later partitions are still kept by scheduled runs"
            ~ " (use late-data reconcile for them, or run one at a later run time first); got to=" ~ backfill.to
        ) -%}
    {%- endif -%}
    {{- return({'lower': late_data.floor_to(backfill['from'], pipeline.partition_size), 'upper': upper}) -}}
{% endmacro %}
