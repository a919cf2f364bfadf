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


{% macro run_mode(pipeline) %}
    {#- How a pipeline's result reads its versions in this run, as {mode, previous_run_time,
        repairs}: 'rebuild' (first build or --full-refresh: every version), 'delta' (a scheduled
        run: the arrivals since its previous run and the versions they can affect) or 'recompute'
        (reconcile, backfill, a result whose previous run the audit does not know: every version of
        the checked range, compared with what is stored). previous_run_time: the run its stored state reflects
        (none on rebuilds and backfills); repairs: a reconciliation, which counts the windows it
        repairs. Worked out once per invocation. -#}
    {%- set state = late_data.invocation_state().setdefault('run_modes', {}) -%}
    {%- if pipeline.unique_id in state -%}{{ return(state[pipeline.unique_id]) }}{%- endif -%}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- if not late_data.builds_incrementally(pipeline) -%}
        {%- set mode = {'mode': 'rebuild', 'previous_run_time': none, 'repairs': false} -%}
    {%- else -%}
        {%- set run_time = late_data.run_time_value() -%}
        {%- set previous_run_time = late_data.last_run_time(result) -%}
        {%- if previous_run_time is not none and run_time < previous_run_time and not late_data.backfill() -%}
            {%- do exceptions.raise_compiler_error(
                "run_time " ~ run_time ~ " is before the last run of " ~ result.identifier ~ " (" ~ previous_run_time
                ~ "): runs must move forward; rebuild with --full-refresh to start over"
            ) -%}
        {%- endif -%}
        {%- if late_data.backfill() -%}
            {%- set mode = {'mode': 'recompute', 'previous_run_time': none, 'repairs': false} -%}
        {%- elif previous_run_time is none or late_data.reconcile() -%}
            {#- A session pipeline's scheduled run recomputes too: there is nothing to repair. -#}
            {%- set mode = {'mode': 'recompute', 'previous_run_time': previous_run_time, 'repairs': previous_run_time is not none and not pipeline.session_gap} -%}
        {%- elif pipeline.session_gap -%}
            {#- Sessions are recomputed from the versions of every session that can still change
                (late_data.checked_range_after), and compared with what is stored. -#}
            {%- set mode = {'mode': 'recompute', 'previous_run_time': previous_run_time, 'repairs': false} -%}
        {%- else -%}
            {%- set mode = {'mode': 'delta', 'previous_run_time': previous_run_time, 'repairs': false} -%}
        {%- endif -%}
    {%- endif -%}
    {%- do state.update({pipeline.unique_id: mode}) -%}
    {{- return(mode) -}}
{% endmacro %}


{% macro shared_chain(pipeline, plan) %}
    {#- The name of the view (global_temp.<versions>__chain_<invocation>) in which a pipeline's result
        stages its version chain for its too-late listing in this invocation, or none when the
        listing works its chain out itself. Shared when both read the same versions: a scheduled
        run, the listing last written at the result's previous run, a history snapshot of the
        pipeline selected. A global temporary view, because dbt opens a Thrift session per node
        and a global one is seen by every session of the Spark application (the Thrift Server's,
        or the embedded one). The listing then filters the staged rows instead of scanning and
        chaining the versions a second time. Never with var share_version_chain false. -#}
    {%- if plan.mode != 'delta' or late_data.backfill() or not late_data.share_version_chain()
        or late_data.pipeline_relation(pipeline, 'too_late') is none
        or not late_data.pipeline_histories(pipeline, selected_only=true)
        or late_data.listing_since(pipeline) != plan.arrived_since -%}
        {{- return(none) -}}
    {%- endif -%}
    {{- return('global_temp.' ~ late_data.invocation_view_name(pipeline.companions.versions, 'chain')) -}}
{% endmacro %}


{% macro staged_chain(pipeline) %}
    {#- The view late_data.shared_chain named, once the pipeline's result staged its chain in this
        invocation (or explained doing so); none otherwise. -#}
    {{- return(late_data.invocation_state().get('chains', {}).get(pipeline.unique_id)) -}}
{% endmacro %}


{% macro stage_chain(pipeline, chain, sql) %}
    {#- Stages the version chain `sql` of a pipeline's result as the cached view `chain` for its
        too-late listing (late_data.shared_chain); remembered for the listing and for on-run-end,
        which drops one the listing did not get to. In `late-data explain` its SQL is logged. -#}
    {%- if late_data.explain() -%}
        {%- do late_data.explain_step('chain', api.Relation.create(identifier=chain, type='view'), sql) -%}
    {%- else -%}
        {%- do adapter.execute('create global temporary view ' ~ chain.split('.')[-1] ~ ' as ' ~ sql) -%}
        {%- do adapter.execute('cache table ' ~ chain) -%}
    {%- endif -%}
    {%- do late_data.invocation_state().setdefault('chains', {}).update({pipeline.unique_id: chain}) -%}
{% endmacro %}


{% macro drop_chain(unique_id) %}
    {#- Drops the version chain staged for the pipeline whose result is `unique_id`
        (late_data.stage_chain), which frees its cached rows, if there is one. -#}
    {%- set chain = late_data.invocation_state().get('chains', {}).pop(unique_id, none) -%}
    {%- if chain is not none and not late_data.explain() -%}
        {%- do late_data.unstage(chain) -%}
    {%- endif -%}
{% endmacro %}


{% macro listing_since(pipeline) %}
    {#- The run time a pipeline's too-late listing lists arrivals after: its previous run, or none
        when it is built from scratch (then it lists every version). -#}
    {%- set listing = late_data.pipeline_relation(pipeline, 'too_late') -%}
    {%- set existing = load_relation(listing) if execute else none -%}
    {{- return(late_data.last_run_time(listing) if existing is not none and not flags.FULL_REFRESH else none) -}}
{% endmacro %}


{% macro count_plan(pipeline, purpose) %}
    {#- What late_data.version_counts reads in this run for the pipeline's result (`purpose`
        'windows') or its too-late listing ('listing'), as {mode, counted_run_time (the previous
        run counted_before refers to), arrived_since (only events with a version arrived after it;
        none: no such restriction), lookup (SQL predicate), checked (the recomputed range, or
        none)}. -#}
    {%- set versions = late_data.pipeline_relation(pipeline, 'versions') -%}
    {%- if purpose == 'listing' -%}
        {%- set since = late_data.listing_since(pipeline) -%}
        {%- if since is none -%}
            {{- return({'mode': 'rebuild', 'counted_run_time': none, 'arrived_since': none, 'lookup': 'true', 'checked': none}) -}}
        {%- endif -%}
        {{- return(late_data.arrivals_plan(pipeline, since, none)) -}}
    {%- endif -%}
    {%- set run_mode = late_data.run_mode(pipeline) -%}
    {%- if run_mode.mode == 'rebuild' -%}
        {{- return({'mode': 'rebuild', 'counted_run_time': none, 'arrived_since': none, 'lookup': 'true', 'checked': none}) -}}
    {%- elif run_mode.mode == 'recompute' -%}
        {%- set result = late_data.pipeline_relation(pipeline) -%}
        {%- set checked = late_data.checked_range_after(pipeline, late_data.last_run_time(result))
            if run_mode.previous_run_time or late_data.backfill() else none -%}
        {{- return({
            'mode': 'recompute', 'counted_run_time': run_mode.previous_run_time if run_mode.repairs else none,
            'arrived_since': none, 'lookup': late_data.checked_versions(pipeline, checked), 'checked': checked,
        }) -}}
    {%- endif -%}
    {{- return(late_data.arrivals_plan(pipeline, run_mode.previous_run_time, run_mode.previous_run_time)) -}}
{% endmacro %}


{% macro arrivals_plan(pipeline, arrived_since, counted_run_time) %}
    {#- A plan reading the events with a version arrived after `arrived_since`: a version whose count
        can change since then lies in a window not yet final then (or at the stamp of a version
        written up to write_delay_seconds late), or arrived after that; so does every version
        chained to it. Those events are looked up by broadcasting their keys when few enough
        arrived (late_data.broadcasts_arrivals), else by a shuffle join. -#}
    {%- set horizon = arrived_since - late_data.seconds(
        late_data.write_delay_seconds() + pipeline.late_window + pipeline.window_size) -%}
    {{- return({
        'mode': 'delta', 'counted_run_time': counted_run_time, 'arrived_since': arrived_since,
        'broadcast': late_data.broadcasts_arrivals(pipeline, arrived_since),
        'lookup': '(event_time >= ' ~ late_data.timestamp_literal(horizon) ~ ' or ingested_at >= '
            ~ late_data.timestamp_literal(horizon) ~ ')',
        'checked': {'lower': late_data.floor_to(horizon, pipeline.partition_size), 'upper': none},
    }) -}}
{% endmacro %}


{% macro broadcasts_arrivals(pipeline, arrived_since) %}
    {#- Whether a run looks the events with a version arrived after `arrived_since` up in the
        versions table by broadcasting their keys: when the pipeline's versions table was last
        loaded at `arrived_since` (so what arrived since is what this invocation loaded) and this
        invocation loaded at most var `broadcast_arrivals_max` versions. Then every version of the
        late window is scanned once and probed in memory; a shuffle join writes all of them to
        disk and sorts them. Otherwise (more arrivals, or arrivals since longer ago than this
        invocation's load, e.g. a listing or a result a few runs behind) the shuffle join, whose
        memory does not grow with the arrivals. Both plans read the same versions. -#}
    {%- set versions = late_data.pipeline_relation(pipeline, 'versions') -%}
    {%- set loaded = (late_data.written(versions) or {}).get('rows_written') -%}
    {{- return(loaded is not none and late_data.last_run(versions).get('loaded_run_time') == arrived_since
        and loaded <= late_data.broadcast_arrivals_max()) -}}
{% endmacro %}


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
    {%- if not execute or late_data.explain() -%}
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


{% macro session_range(pipeline, since) %}
    {#- The range a session pipeline's run recomputes, given the run time its stored sessions
        reflect (`since`): {'lower': the partition it reads and compares from, 'upper': none,
        'sessions_from': a moment before which no session can change}. Every version that can
        change a session since then has an event time after since - late window - write delay
        (late_data.windowed), so a session ending (last event + gap) at or before sessions_from =
        that minus the gap is as stored. The versions are read from the first event (burst_start)
        of every stored session ending later: a burst cut by max_session_seconds is cut again from
        its first event. One small query over the stored sessions. -#}
    {%- set cache = late_data.invocation_state().setdefault('session_ranges', {}) -%}
    {%- if pipeline.unique_id in cache -%}{{ return(cache[pipeline.unique_id]) }}{%- endif -%}
    {%- set sessions_from = since - late_data.seconds(pipeline.late_window + pipeline.session_gap + late_data.write_delay_seconds()) -%}
    {%- set lower = sessions_from -%}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- if execute and not late_data.explain() and late_data.relation_exists(result) -%}
        {%- set earliest = run_query(
            'select min(burst_start) from ' ~ result ~ ' where window_end > ' ~ late_data.timestamp_literal(sessions_from)
        ).columns[0].values()[0] -%}
        {%- if earliest is not none and earliest < lower -%}{%- set lower = earliest -%}{%- endif -%}
    {%- endif -%}
    {%- set checked = {'lower': late_data.floor_to(lower, pipeline.partition_size), 'upper': none, 'sessions_from': sessions_from} -%}
    {%- do cache.update({pipeline.unique_id: checked}) -%}
    {{- return(checked) -}}
{% endmacro %}


{% macro range_predicate(checked, partition_column='partition_start') %}
    {#- SQL predicate selecting the partitions of a checked range; `partition_column` may be any
        expression giving a row's partition. -#}
    {%- set predicate = partition_column ~ ' >= ' ~ late_data.timestamp_literal(checked.lower) -%}
    {%- if checked.upper is not none -%}
        {%- set predicate = predicate ~ ' and ' ~ partition_column ~ ' < ' ~ late_data.timestamp_literal(checked.upper) -%}
    {%- endif -%}
    {{- return(predicate) -}}
{% endmacro %}
