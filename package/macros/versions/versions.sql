{% macro new_versions(pipeline, delivered, version_columns, incremental) %}
    {#- A select of the versions in `delivered` (the pipeline's model's rows, with their quarantine
        reason) that its versions table does not hold yet, compared on every one of
        `version_columns`: what arrived since its previous run, copies delivered together (equal in
        every column, the stamp included) once. Everything when the table is built from scratch
        (`incremental` false). A scheduled run looks at versions stamped from its previous run minus var `write_delay_seconds` on (so a row written a little after its
        ingested_at stamp is still found); a reconcile run at every version whose event time or
        arrival lies in the checked range, so it also finds rows written later than that. Both
        sides of the comparison are read with the same predicate on the stamps, which lets the
        table format skip older files. A backfill loads nothing: it recomputes old partitions
        from the versions loaded so far (refused while rows of its range are not loaded:
        late_data.require_loaded), and the next scheduled run loads what arrived since. A
        pipeline with dimensions loads no version stamped after the run time: the run that loads
        it joins it with the dimension as that run applies it (late_data.apply_dimensions). -#}
    {%- set versions = late_data.pipeline_relation(pipeline, 'versions') -%}
    {%- set arrived = ('(delivered.ingested_at <= ' ~ late_data.run_time() ~ ' or delivered.ingested_at is null)') if pipeline.dimensions else none -%}
    {%- if not incremental %}
    -- Written in arrival order, so every file covers a narrow range of stamps and later runs,
    -- which read by stamp, skip the files they do not need. Copies delivered together are one version.
    select distinct * from {{ delivered }}
    {%- if arrived %} as delivered
    where {{ arrived }}
    {%- endif %}
    order by ingested_at
    {%- else %}
    select distinct delivered.*
    from {{ delivered }} as delivered
    left anti join (
        select {{ version_columns | join(', ') }}
        from {{ versions }}
        where {{ late_data.load_candidates(pipeline) }}
    ) as loaded
        on
        {%- for column in version_columns %}
            delivered.{{ column }} <=> loaded.{{ column }}{{ ' and' if not loop.last }}
        {%- endfor %}
    where {{ late_data.load_candidates(pipeline, relation_alias='delivered') }}{{ ' and ' ~ arrived if arrived }}
    {%- endif %}
{%- endmacro %}


{% macro load_candidates(pipeline, relation_alias=none) %}
    {#- SQL predicate over ingested_at and event_time (of `relation_alias`, if given): the versions a
        run of the pipeline's versions table compares with those it holds (late_data.new_versions),
        and every version without an ingested_at stamp. 'true' when its last run is unknown. -#}
    {%- set prefix = relation_alias ~ '.' if relation_alias else '' -%}
    {#- A version without a stamp is never counted but is loaded, so the quarantine shows it. -#}
    {%- set unstamped = prefix ~ 'ingested_at is null' -%}
    {%- if late_data.backfill() -%}
        {{- return('false') -}}
    {%- endif -%}
    {#- Not a backfill's: it loads nothing, so a row stamped before it may still be waiting. -#}
    {%- set last_run_time = late_data.last_run(late_data.pipeline_relation(pipeline, 'versions')).get('loaded_run_time') -%}
    {%- if last_run_time is none -%}
        {{- return('true') -}}
    {%- endif -%}
    {%- set delay = late_data.seconds(late_data.write_delay_seconds()) -%}
    {%- if late_data.is_reconciliation() -%}
        {%- set lower = late_data.checked_range_after(pipeline, last_run_time).lower - delay -%}
        {{- return('(' ~ prefix ~ 'event_time >= ' ~ late_data.timestamp_literal(lower) ~ ' or ' ~ prefix ~ 'ingested_at >= '
            ~ late_data.timestamp_literal(lower) ~ ' or ' ~ unstamped ~ ')') -}}
    {%- endif -%}
    {{- return('(' ~ prefix ~ 'ingested_at >= ' ~ late_data.timestamp_literal([last_run_time, late_data.run_time_value()] | min - delay)
        ~ ' or ' ~ unstamped ~ ')') -}}
{% endmacro %}


{% macro windowed(relation, pipeline) %}
    {#- A select of the versions of `relation` with their window (window_start, window_end),
        final_at = window end + the pipeline's late window (the moment after which the window no
        longer accepts rows), the result partition holding the window (the time partition of its
        start and the bucket of its series key) and, with a source_column, version_final_at: when
        the window stops accepting rows of the version's own source. Sliding windows
        (window_slide_seconds below the size): a row per window that holds the version's event
        time, window_offset 0 (the latest) to size / slide - 1. -#}
    {%- set sliding = pipeline.window_slide < pipeline.window_size %}
    {%- if pipeline.session_gap %}
        {{- return(late_data.session_versions(relation, pipeline)) -}}
    {%- endif %}
    select
        *,
        {{ late_data.add_seconds('window_start', pipeline.window_size) }} as window_end,
        {{ late_data.add_seconds('window_start', pipeline.window_size + pipeline.late_window) }} as final_at,
        {%- if pipeline.source_column %}
        timestamp_seconds(unix_seconds(window_start) + {{ pipeline.window_size }} + {{ late_data.source_late_window(pipeline) }}) as version_final_at,
        {%- endif %}
        {{ late_data.time_bucket('window_start' if sliding else 'event_time', pipeline.partition_size) }} as partition_start,
        {{ late_data.series_bucket(pipeline) }} as series_bucket
    from (
        select
            *,
            {%- if sliding %}
            timestamp_seconds(
                floor(unix_seconds(event_time) / {{ pipeline.window_slide }}) * {{ pipeline.window_slide }}
                - window_offset * {{ pipeline.window_slide }}
            ) as window_start
        from {{ relation }}
        lateral view explode(sequence(0, {{ (pipeline.window_size // pipeline.window_slide) - 1 }})) window_offsets as window_offset
            {%- else %}
            {{ late_data.time_bucket('event_time', pipeline.window_size) }} as window_start
        from {{ relation }}
            {%- endif %}
    )
{%- endmacro %}


{% macro source_late_window(pipeline) %}
    {#- SQL: the late window, in seconds, of each version's source, named by its source_column
        value (a source the pipeline does not read takes the pipeline's own late window). -#}
    case {{ pipeline.source_column }}
    {%- for source_table, seconds in pipeline.late_window_by_source.items() if source_table %}
        when {{ late_data.sql_string(source_table) }} then {{ seconds }}
    {%- endfor %}
        else {{ pipeline.late_window }}
    end
{%- endmacro %}


{% macro series_bucket(pipeline) %}
    {{- return(adapter.dispatch('series_bucket', 'late_data')(pipeline) | trim) -}}
{% endmacro %}

{% macro default__series_bucket(pipeline) %}
    {#- An explicit bucket column (not a table-format transform), so Iceberg and Delta partition
        the same way and a query can name the bucket it needs. -#}
    cast(pmod(xxhash64({{ pipeline.series_key | join(', ') }}), {{ pipeline.series_buckets }}) as int)
{%- endmacro %}


{% macro counts_as_of(judged_at, superseded_at='superseded_at') %}
    {#- True for a version that counts toward its window when judged at `judged_at` (a SQL
        timestamp expression): it has arrived and no newer version of its event has. Expects
        ingested_at and the arrival of the next version, `superseded_at` (null while newest). -#}
    (ingested_at <= {{ judged_at }} and coalesce({{ superseded_at }} > {{ judged_at }}, true))
{%- endmacro %}


{% macro judged_at(run_time, final_at='final_at') %}
    {#- When a window is judged as of `run_time`: at the earlier of run_time and its `final_at`, so a
        final window is frozen and later arrivals never change it. A backfill with
        include_too_late judges every window at run_time: the deliberate way to revise final windows. -#}
    {%- set backfill = late_data.backfill() -%}
    {{- return(run_time if backfill and backfill.include_too_late else 'least(' ~ run_time ~ ', ' ~ final_at ~ ')') -}}
{% endmacro %}


{% macro require_loaded(pipeline, sql) %}
    {#- A backfill recomputes its range from the versions loaded so far: it is refused, naming how
        many, when rows of its range that the pipeline's model (`sql`) delivers by the run time are
        not loaded yet (no run has run since they arrived, e.g. a partner's resend), with how to
        load them. A delivery is loaded when the versions table holds its event with its stamp,
        compared null-safely: a quarantined row with a null event key is loaded like any other. -#}
    {%- set checked = late_data.checked_range_after(pipeline, late_data.last_run_time(late_data.pipeline_relation(pipeline))) -%}
    {%- set upper = checked.upper + late_data.seconds(pipeline.window_size - pipeline.window_slide) -%}
    {%- set in_range = 'between ' ~ late_data.timestamp_literal(checked.lower) ~ ' and ' ~ late_data.exact_timestamp_literal(upper - modules.datetime.timedelta(microseconds=1)) -%}
    {%- set stamp = 'source_ingested_at' if pipeline.dimensions else 'ingested_at' -%}
    {%- set query -%}
        select count(*)
        from ({{ sql }}) as delivered
        left anti join (
            select {{ (pipeline.event_key + [stamp]) | join(', ') }}
            from {{ late_data.pipeline_relation(pipeline, 'versions') }}
            where event_time {{ in_range }}
        ) as loaded
            on {% for key in pipeline.event_key %}delivered.{{ key }} <=> loaded.{{ key }} and {% endfor %}delivered.ingested_at = loaded.{{ stamp }}
        where delivered.event_time {{ in_range }}
            and delivered.ingested_at <= {{ late_data.run_time() }}
    {%- endset -%}
    {%- set unloaded = run_query(query).columns[0].values()[0] | int -%}
    {%- if unloaded > 0 -%}
        {%- do exceptions.raise_compiler_error(
            "backfill of " ~ pipeline.alias ~ ": " ~ unloaded ~ " rows delivered by run_time " ~ late_data.run_time_value()
            ~ " with event times in [" ~ checked.lower ~ ", " ~ upper ~ ") are not loaded yet (no run has run since they"
            ~ " arrived), and a backfill recomputes from the loaded versions only: load them with a scheduled run first"
            ~ " (`late-data reconcile`, or `LATE_DATA_RUN_TIME=... dbt build` at a time after they arrived), then run"
            ~ " the backfill at a later run time"
        ) -%}
    {%- endif -%}
{% endmacro %}
