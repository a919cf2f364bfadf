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


{% macro listing_since(pipeline) %}
    {#- The run time a pipeline's too-late listing lists arrivals after: its previous run, or none
        when it is built from scratch (then it lists every version). -#}
    {%- set listing = late_data.pipeline_relation(pipeline, 'too_late') -%}
    {%- set existing = load_relation(listing) if execute else none -%}
    {{- return(late_data.last_run_time(listing) if existing is not none and not flags.FULL_REFRESH else none) -}}
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
