{% macro windows_to_write(window_checksums, pipeline, aggregates, plan) %}
    {#- A select of the rows a pipeline's result table is given in this run, from `window_checksums`
        (late_data.window_checksums) and what the result stores (the fresh-versus-stored
        comparison), with the window's status (is_final), computed_at and invocation_id (the run
        that last changed its published numbers or status) and written_at (the run that last wrote
        its partition):
        - first build or --full-refresh: every window;
        - scheduled run: every window of the partitions (time partition and series bucket) where a
          window changed or became final since the previous run, its stored checksums plus what
          changed, in one pass over the changes and the stored rows of those partitions only;
        - reconcile or backfill: the checked range recomputed and compared with what is stored;
          every window of the partitions where one differs.
        On incremental runs each row also says what happened to it, `window_change`: 'published'
        (a published number or the status changed), 'checksum' (only the digest changed),
        'unchanged' (kept in a rewritten partition) or 'vanished' (no counted version left: a
        correction moved its only reading; a marker row that the write deletes), and
        `window_repaired` (reconcile: the recomputation disagreed with what the arrival-driven path
        would have stored). A run holds (writes nothing, and its changes wait for the next run)
        while a history snapshot of the pipeline, selected in this invocation, has not recorded
        the result's last run. -#}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- set count_column = pipeline.count_column -%}
    {%- set held = execute and plan.mode != 'rebuild' and late_data.histories_behind(pipeline) -%}
    {%- if held and late_data.backfill() -%}
        {%- do exceptions.raise_compiler_error(
            "history snapshot " ~ held | join(', ') ~ " missed a run of " ~ result.identifier
            ~ ": run a scheduled run first, so it records what that run published"
        ) -%}
    {%- endif -%}
    {%- if execute -%}
        {%- do late_data.check_series_buckets(pipeline) -%}
        {%- do late_data.record_write(result, {'mode': 'held' if held else plan.mode, 'key_columns': late_data.key_columns(pipeline)}) -%}
        {%- if held -%}
            {%- do log('late-data: ' ~ result.identifier ~ ' holds this run: ' ~ held | join(', ')
                ~ ' missed its last run and records it first', info=true) -%}
        {%- endif -%}
    {%- endif -%}
    {%- if held %}
    select * from (
    {%- endif -%}
    {%- if plan.mode == 'rebuild' %}
    {{- late_data.rebuilt_windows(window_checksums, pipeline, aggregates) }}
    {%- elif plan.mode == 'delta' %}
    {{- late_data.updated_windows(window_checksums, pipeline, aggregates, plan) }}
    {%- elif pipeline.session_gap %}
    {{- late_data.compared_sessions(window_checksums, pipeline, aggregates, plan) }}
    {%- else %}
    {{- late_data.compared_windows(window_checksums, pipeline, aggregates, plan) }}
    {%- endif %}
    {%- if held %}
    ) as held_windows
    where false
    {%- endif %}
{%- endmacro %}


{% macro updated_windows(window_checksums, pipeline, aggregates, plan) %}
    {#- The scheduled path of late_data.windows_to_write: stored checksums plus changes, for every
        window of the partitions where a window changed or became final. One join of the changes
        with the stored windows a change can reach, and a window function per partition (picking
        the partitions first and joining twice made Spark work the changes out four times). The
        recomputed measures (min, max, percentiles) of the windows that changed are worked out
        from every version of those windows (late_data.recomputed_windows); the others keep theirs. -#}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- set key_columns = late_data.key_columns(pipeline) -%}
    {%- set run_time = late_data.run_time() -%}
    {%- set previous_run_time = late_data.run_mode(pipeline).previous_run_time -%}
    {%- set horizon = previous_run_time - late_data.seconds(pipeline.late_window + pipeline.window_size + late_data.write_delay_seconds()) -%}
    {%- set lowest_partition = late_data.floor_to(horizon, pipeline.partition_size) -%}
    {%- do late_data.record_write(result, {'checked_from': lowest_partition}) %}
    with

    window_changes as (

        select *
        from {{ window_checksums }}
        where not ({% for name in aggregates.checksums %}{{ name }}__change = 0{{ ' and ' if not loop.last }}{% endfor %})

    ),
    {%- if aggregates.recomputed %}

    recomputed_windows as (

        {{ late_data.recomputed_windows('window_changes', pipeline, aggregates, plan) }}

    ),
    {%- endif %}

    stored_windows as (

        select *
        from {{ result }}
        where partition_start >= {{ late_data.timestamp_literal(lowest_partition) }}

    ),

    joined_windows as (

        {{ late_data.joined_windows('stored_windows', 'window_changes', pipeline, aggregates) }}

    ),

    updated_windows as (

        select *
        from (
            select *, max(is_moved) over (partition by partition_start, series_bucket) as is_partition_rewritten
            from joined_windows
        )
        where is_partition_rewritten

    )

    {{ late_data.written_windows('updated_windows', pipeline, aggregates, plan_mode='delta') }}
{%- endmacro %}


{% macro joined_windows(stored_windows, window_changes, pipeline, aggregates) %}
    {#- The scheduled path's join of the stored windows with the windows that changed: every
        checksum stored plus its change, the recomputed measures of a changed window from the CTE
        recomputed_windows (the others' as stored), what was stored, and is_moved (the window
        changed, or it becomes final now). -#}
    {%- set key_columns = late_data.key_columns(pipeline) %}
    select
        {{- late_data.window_identity(key_columns, 'changes') }}
        {%- for name, spec in aggregates.checksums.items() %}
        {{ late_data.stored_plus_change(name, spec, 'changes') }} as {{ name }},
        {%- endfor %}
        {%- for name in aggregates.recomputed %}
        if(changes.{{ key_columns[0] }} is null, stored.{{ name }}, recomputed.{{ name }}) as {{ name }},
        {%- endfor %}
        {{- late_data.stored_columns(aggregates) }},
        {%- if pipeline.dimensions %}
        coalesce(changes.changed_by_dimension, false) as changed_by_dimension,
        {%- endif %}
        -- A window changed, or it becomes final now.
        changes.{{ key_columns[0] }} is not null
        or (not stored.is_final and stored.final_at <= {{ late_data.run_time() }}) as is_moved
    from {{ stored_windows }} as stored
    full outer join {{ window_changes }} as changes
        on {{ late_data.same_keys(key_columns, 'changes') }}
    {%- if aggregates.recomputed %}
    left join recomputed_windows as recomputed
        on {% for key in key_columns %}changes.{{ key }} = recomputed.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
    {%- endif %}
{%- endmacro %}


{% macro recomputed_windows(window_changes, pipeline, aggregates, plan) %}
    {#- A select, per window in the CTE `window_changes` (the windows whose versions changed in a
        scheduled run), of its recomputed measures (late_data.aggregates: min, max, percentiles)
        over every version of the window that counts now: the versions of every event with a
        version in one of those windows, looked up and chained (late_data.version_counts with
        `matching`). Only the windows that changed are read, not the late window. -#}
    {%- set key_columns = late_data.key_columns(pipeline) %}
    with

    touched_versions as (

        {{ late_data.version_counts(pipeline, plan, matching={'relation': window_changes, 'columns': key_columns}) }}

    )

    select
        {{ key_columns | join(', ') }}
        {%- for name, spec in aggregates.recomputed.items() %},
        {{ late_data.recomputed_aggregate(spec, 'if(counts_now, ' ~ spec.column ~ ', null)') }} as {{ name }}
        {%- endfor %}
    from touched_versions
    left semi join {{ window_changes }} using ({{ key_columns | join(', ') }})
    group by {{ key_columns | join(', ') }}
{%- endmacro %}


{% macro compared_windows(window_checksums, pipeline, aggregates, plan) %}
    {#- The recomputing path of late_data.windows_to_write for fixed windows (sessions:
        late_data.compared_sessions): the checked range recomputed and compared
        with what is stored; on a reconciliation, also with what the arrival-driven path would
        have stored, to count the windows repaired. -#}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- set key_columns = late_data.key_columns(pipeline) -%}
    {%- set repairs = plan.counted_run_time is not none -%}
    {%- set checked = late_data.checked_range_after(pipeline, late_data.last_run_time(result)) -%}
    {%- do late_data.record_write(result, {'checked_from': checked.lower}) %}
    with

    fresh_windows as (

        select *
        from {{ window_checksums }}
        where {{ late_data.range_predicate(checked) }}

    ),

    stored_windows as (

        select *
        from {{ result }}
        where {{ late_data.range_predicate(checked) }}

    ),

    compared_windows as (

        select
            {{- late_data.window_identity(key_columns, 'fresh') }}
            {{- late_data.fresh_columns(aggregates, repairs) }}
            {{- late_data.stored_columns(aggregates) }}
        from stored_windows as stored
        full outer join fresh_windows as fresh
            on {{ late_data.same_keys(key_columns, 'fresh') }}
        where stored.{{ key_columns[0] }} is not null or fresh.{{ pipeline.count_column }} > 0

    ),

    compared_partitions as (

        select
            *,
            max(not {{ late_data.same_aggregates(aggregates) }})
                over (partition by partition_start, series_bucket) as is_partition_changed
        from compared_windows

    )

    {{ late_data.written_windows('(select * from compared_partitions where is_partition_changed)', pipeline, aggregates, repaired=repairs) }}
{%- endmacro %}
