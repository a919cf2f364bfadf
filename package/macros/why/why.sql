{% macro why(model_name, series, window_start, as_of=none) %}
    {#- A select of one window's story (`late-data why` prints it; `dbt show --inline` of
        late_data.why('meter_readings', 'm1', '2026-06-01 00:05:00') in double braces reads it): the window of
        the pipeline whose result is `model_name`, of series `series` (its series key's value; with
        several key columns, their values joined by '|'), starting at `window_start`, as it stood
        at `as_of` (default: now). One row per published version (kind 'published': version_number,
        its measures as JSON, is_final, valid_from (the run that published it), revision_reason,
        definition_id, code_commit, made_by (the staged backfill or apply that published it) and
        restored_by (the rollbacks that returned it)) and one per delivery of an event in the window (kind
        'delivery': event_key, event_time, ingested_at, loaded_at (the run that loaded it),
        seconds_late (ingested_at - event_time), its measure columns as JSON, quarantine_reason,
        replaced_ingested_at (the version it corrects) and delivery_status: counted, superseded (a
        later version of its event counts instead, here or in another window or series), too_late
        (it arrived after the window was final), quarantined, or not_yet (loaded after `as_of`'s
        run)), and one per dimension row that applied to a counted delivery (kind 'dimension').
        Whether a delivery counts is the package's own rule (late_data.chained_versions,
        late_data.counts_as_of, judged at the earlier of `as_of` and the window's final moment, or
        as a backfill that included too-late rows judged it): the counted deliveries recompute the
        last published version. Fixed and sliding windows. -#}
    {%- if not execute -%}{{ return('select 1') }}{%- endif -%}
    {%- set pipeline = late_data.pipeline_named(model_name) -%}
    {%- if pipeline.session_gap -%}
        {%- do exceptions.raise_compiler_error("late-data why: " ~ model_name ~ " has session windows, which why does not tell yet") -%}
    {%- endif -%}
    {%- set histories = late_data.pipeline_histories(pipeline) -%}
    {%- if not histories -%}
        {%- do exceptions.raise_compiler_error("late-data why: " ~ model_name ~ " has no history snapshot (strategy late_data.history)") -%}
    {%- endif -%}
    {%- set history = api.Relation.create(schema=histories[0].schema, identifier=histories[0].alias, type='table') -%}
    {%- set at = late_data.timestamp_literal(late_data.parse_time(as_of, 'as_of')) if as_of else 'current_timestamp()' -%}
    {%- set start = late_data.timestamp_literal(late_data.parse_time(window_start, 'window_start')) -%}
    {%- set final_column = 'version_final_at' if pipeline.source_column else 'final_at' %}
    {%- set versions = late_data._why_versions_read(pipeline, at if as_of else none) %}
    {#- A window's deliveries are judged as the run that published its last version judged them:
        at the earlier of `at` and the window's final moment, but a backfill that included
        too-late rows (late_data.backfill) judged every one at its own run time. -#}
    {%- set registry = api.Relation.create(schema=target.schema, identifier='late_data_named_versions', type='table') -%}
    {%- set registry = registry if late_data.relation_exists(registry) else none -%}
    {%- set judged_at = 'greatest(least(' ~ at ~ ', ' ~ final_column ~ '), coalesce(' ~ late_data._why_too_late_backfill(pipeline, registry) ~ ", timestamp'1970-01-01 00:00:00'))" %}
    with

    {{ late_data.why_published(pipeline, history, registry, series, start, at) }},

    {{ late_data.why_deliveries(pipeline, versions, series, start, at, judged_at, final_column) }}

    {{ late_data.why_rows(pipeline, series, start, at) }}
{%- endmacro %}


{% macro _why_versions_read(pipeline, at) %}
    {#- Private to late_data.why: where it reads a window's deliveries as of `at` (a SQL timestamp;
        none: now). The versions table; but as of a moment before the table was last rebuilt (a
        --full-refresh or a published apply that no rollback undid), which loads every delivery
        again in its own run, the table as it stood after the last run at or before `at` (time
        travel to the moment the audit recorded that run), so each delivery keeps the run that
        first loaded it and the values the definition of then selected. -#}
    {%- set versions = late_data.pipeline_relation(pipeline, 'versions') -%}
    {%- if at is none -%}{{ return(versions | string) }}{%- endif -%}
    {%- set moments -%}
        select
            max(if(run_time <= {{ at }}, recorded_at, null)) as read_at,
            max(if(run_kind = 'full_refresh', recorded_at, null)) as rebuilt_at
        from {{ late_data.run_audit_relation() }}
        where model = {{ late_data.sql_string(versions.identifier) }} and outcome = 'success'
            and run_kind in ('scheduled', 'reconcile', 'full_refresh')
    {%- endset -%}
    {%- set read_at, rebuilt_at = run_query(moments).rows[0] -%}
    {%- if read_at is none or rebuilt_at is none or rebuilt_at <= read_at -%}{{ return(versions | string) }}{%- endif -%}
    {{- return(versions ~ ' timestamp as of ' ~ late_data.exact_timestamp_literal(read_at)) -}}
{% endmacro %}


{% macro _why_too_late_backfill(pipeline, registry) %}
    {#- Private to late_data.why: SQL of the run time of the window's last published version (CTE
        published) when a backfill that included too-late rows published it (the named versions'
        registry, none when there is none yet, says so), else null. -#}
    {%- if registry is none -%}{{ return('cast(null as timestamp)') }}{%- endif -%}
    {%- set backfills -%}
        select distinct run_time from {{ registry }}
        where kind = 'backfill' and get_json_object(detail, '$.include_too_late') = 'true'
            and array_contains(pipelines, {{ late_data.sql_string(pipeline.name) }})
    {%- endset -%}
    {%- set literals = [] -%}
    {%- for run_time in run_query(backfills).columns[0].values() -%}
        {%- do literals.append(late_data.exact_timestamp_literal(run_time)) -%}
    {%- endfor -%}
    {%- if not literals -%}{{ return('cast(null as timestamp)') }}{%- endif -%}
    {{- return(
        '(select max(valid_from) from published where valid_from in (' ~ literals | join(', ') ~ ')'
        ~ ' and version_number = (select max(version_number) from published))'
    ) -}}
{% endmacro %}


{% macro why_deliveries(pipeline, versions, series, start, at, judged_at, final_column) %}
    {#- The CTEs of late_data.why's deliveries (the last, `delivered`, not followed by a comma): the
        versions of `series` (read from `versions`: late_data._why_versions_read) in the window
        starting at `start` (a SQL timestamp), each with its delivery_status as of `at` (counted
        as of `judged_at`, SQL of each delivery's columns) and the ingested_at of the version it
        corrects. Chained by the package's own rules over every version of their events, so a
        correction that moved an event to another window or series (or a dimension change that
        did) supersedes the version here. -#}
    window_versions as (

        select *
        from {{ versions }}
        where {{ late_data.text_key(pipeline.series_key) }} = {{ late_data.sql_string(series) }}
            and event_time >= {{ late_data.add_seconds(start, -pipeline.window_size) }}
            and event_time < {{ late_data.add_seconds(start, pipeline.window_size) }}

    ),

    versions_of_events as (

        -- A later version of an event arrived after its first: the events' versions from then on.
        select
            events.*,
            lag(events.ingested_at) over (
                partition by {{ late_data.text_key(pipeline.event_key, 'events') }}
                order by events.ingested_at, events.event_time
            ) as replaced_ingested_at
        from {{ versions }} as events
        left semi join window_versions
            on {% for column in pipeline.event_key %}events.{{ column }} <=> window_versions.{{ column }}{{ ' and ' if not loop.last }}{% endfor %}
        where events.ingested_at >= (select min(ingested_at) from window_versions)

    ),

    windowed_events as (

        select * from ({{ late_data.windowed('versions_of_events', pipeline) }}) as windowed

    ),

    chained as (

        select
            *,
            {{ late_data.counts_as_of(judged_at) }} as counts
        from ({{ late_data.chained_versions(
            '(select * from windowed_events where quarantine_reason is null and loaded_at <= ' ~ at ~ ')',
            pipeline, none, final_column) }}) as chained_versions

    ),

    {{ late_data._why_delivered(pipeline, series, start, at, final_column) }}
{%- endmacro %}


{% macro why_rows(pipeline, series, start, at) %}
    {#- The select of late_data.why: a row per published version, delivery and applied dimension
        row (late_data._why_dimension_rows), in the columns the kinds share. -#}
    select
        'published' as kind,
        {{ late_data.sql_string(series) }} as series,
        window_start,
        version_number,
        measures,
        is_final,
        valid_from,
        revision_reason,
        definition_id,
        code_commit,
        made_by,
        restored_by,
        cast(null as string) as event_key,
        cast(null as timestamp) as event_time,
        cast(null as timestamp) as ingested_at,
        cast(null as timestamp) as loaded_at,
        cast(null as double) as seconds_late,
        cast(null as string) as quarantine_reason,
        cast(null as timestamp) as replaced_ingested_at,
        cast(null as string) as delivery_status,
        cast(null as string) as dimension, cast(null as timestamp) as valid_to
    from published
    union all
    select
        'delivery' as kind,
        {{ late_data.sql_string(series) }} as series,
        window_start,
        cast(null as int) as version_number,
        to_json(named_struct(
            {%- for column in pipeline.input_columns %}
            '{{ column }}', {{ column }}{{ ',' if not loop.last }}
            {%- endfor %}
        )) as measures,
        cast(null as boolean) as is_final,
        cast(null as timestamp) as valid_from,
        cast(null as string) as revision_reason,
        cast(null as string) as definition_id,
        cast(null as string) as code_commit,
        cast(null as string) as made_by,
        cast(null as string) as restored_by,
        {{ late_data.text_key(pipeline.event_key) }} as event_key,
        event_time,
        ingested_at,
        loaded_at,
        (unix_micros(ingested_at) - unix_micros(event_time)) / 1e6 as seconds_late,
        quarantine_reason,
        replaced_ingested_at,
        delivery_status,
        cast(null as string) as dimension, cast(null as timestamp) as valid_to
    from delivered
    {%- for dimension in pipeline.dimensions %}
    union all
    {{ late_data._why_dimension_rows(pipeline, dimension, series, start, at) }}
    {%- endfor %}
{%- endmacro %}



{% macro why_published(pipeline, history, registry, series, start, at) %}
    {#- The CTEs of late_data.why's published versions (the last, `published`, not followed by a
        comma): each version of the window the history holds, published at or before `at`, with
        its measures as JSON, the reason and definition of late_data.window_revisions (which reads
        that window's versions only), made_by and restored_by (late_data._why_named_versions). -#}
    window_history as (

        select *
        from {{ history }}
        where window_start = {{ start }}
            and {{ late_data.text_key(pipeline.series_key) }} = {{ late_data.sql_string(series) }}
            and dbt_valid_from <= {{ at }}

    ),

    published_versions as (

        select
            history.window_start,
            revisions.version_number,
            to_json(named_struct(
                {%- for measure in pipeline.measures %}
                '{{ measure.name }}', history.{{ measure.name }}{{ ',' if not loop.last }}
                {%- endfor %}
            )) as measures,
            history.is_final,
            history.dbt_valid_from as valid_from,
            revisions.revision_reason,
            revisions.definition_id,
            revisions.code_commit
        from window_history as history
        inner join ({{ late_data.window_revisions('window_history', pipeline) }}) as revisions
            on history.dbt_valid_from = revisions.valid_from

    ),

    {%- if registry is not none %}
    {{ late_data._why_named_versions(pipeline, registry, at) }}
    {%- endif %}

    published as (

        select
            versions.*,
            {%- if registry is not none %}
            made.made_by,
            restored.restored_by
            {%- else %}
            cast(null as string) as made_by,
            cast(null as string) as restored_by
            {%- endif %}
        from published_versions as versions
        {%- if registry is not none %}
        left join made_by_versions as made on made.run_time = versions.valid_from
        left join restored_by_versions as restored on restored.valid_from = versions.valid_from
        {%- endif %}

    )
{%- endmacro %}


{% macro _why_named_versions(pipeline, registry, at) %}
    {#- Private to late_data.why_published: the CTEs (each followed by a comma) of the pipeline's
        named versions in the `registry` (each name's last row; published, or a rollback done),
        the staged backfills and applies by the run time they published at (made_by_versions),
        and the rollbacks to a run at or before `at` by the window's version they returned
        (restored_by_versions, over CTE published_versions). -#}
    named_versions as (

        select name, kind, run_time
        from (
            select *, row_number() over (partition by name order by recorded_at desc) as newest
            from {{ registry }}
        )
        where newest = 1 and status in ('published', 'rolled_back')
            and array_contains(pipelines, {{ late_data.sql_string(pipeline.name) }})

    ),

    made_by_versions as (

        select run_time, concat_ws(', ', sort_array(collect_list(name))) as made_by
        from named_versions
        where kind in ('backfill', 'apply')
        group by run_time

    ),

    restored_by_versions as (

        select spans.valid_from, concat_ws(', ', sort_array(collect_list(named.name))) as restored_by
        from (
            select valid_from, lead(valid_from) over (order by version_number) as next_valid_from
            from published_versions
        ) as spans
        inner join named_versions as named
            on named.kind = 'rollback'
            and named.run_time >= spans.valid_from
            and named.run_time <= {{ at }}
            and (spans.next_valid_from is null or named.run_time < spans.next_valid_from)
        group by spans.valid_from

    ),
{%- endmacro %}


{% macro _why_delivered(pipeline, series, start, at, final_column) %}
    {#- Private to late_data.why_deliveries: its last CTE, `delivered`: the versions of `series` in
        the window starting at `start` (CTE windowed_events), each with its delivery_status as of
        `at` from its place in its event's chain (CTE chained). -#}
    delivered as (

        select
            windowed.*,
            case
                when windowed.quarantine_reason is not null then 'quarantined'
                when windowed.loaded_at > {{ at }} then 'not_yet'
                when chained.counts then 'counted'
                when windowed.ingested_at > windowed.{{ final_column }} then 'too_late'
                else 'superseded'
            end as delivery_status
        from windowed_events as windowed
        left join chained
            on {{ late_data.text_key(pipeline.event_key, 'windowed') }} = {{ late_data.text_key(pipeline.event_key, 'chained') }}
            and windowed.window_start <=> chained.window_start
            and windowed.ingested_at <=> chained.ingested_at
            and windowed.event_time <=> chained.event_time
            {%- for column in pipeline.input_columns %}
            and windowed.{{ column }} <=> chained.{{ column }}
            {%- endfor %}
        where windowed.window_start = {{ start }}
            and {{ late_data.text_key(pipeline.series_key, 'windowed') }} = {{ late_data.sql_string(series) }}

    )
{%- endmacro %}


{% macro _why_dimension_rows(pipeline, dimension, series, start, at) %}
    {#- Private to late_data.why_rows: a select, in its columns, of the rows of `dimension` (its
        applied companion: the rows each run applied) that applied as of `at` to a delivery counted
        in the window: its key, its interval (valid_from, valid_to) holding the delivery's event
        time, the row as JSON, and the run that applied it (loaded_at). -#}
    select distinct
        'dimension' as kind,
        {{ late_data.sql_string(series) }} as series,
        {{ start }} as window_start,
        cast(null as int) as version_number,
        applied.row_json as measures,
        cast(null as boolean) as is_final,
        applied.valid_from,
        cast(null as string) as revision_reason,
        cast(null as string) as definition_id,
        cast(null as string) as code_commit,
        cast(null as string) as made_by,
        cast(null as string) as restored_by,
        applied.dimension_key as event_key,
        cast(null as timestamp) as event_time,
        cast(null as timestamp) as ingested_at,
        applied.applied_from as loaded_at,
        cast(null as double) as seconds_late,
        cast(null as string) as quarantine_reason,
        cast(null as timestamp) as replaced_ingested_at,
        cast(null as string) as delivery_status,
        {{ late_data.sql_string(dimension.name) }} as dimension,
        applied.valid_to
    from {{ late_data.applied_relation(pipeline, dimension) }} as applied
    left semi join (select * from delivered where delivery_status = 'counted') as counted
        on cast(counted.{{ dimension.fact_key }} as string) = applied.dimension_key
        and counted.event_time >= applied.valid_from
        and (applied.valid_to is null or counted.event_time < applied.valid_to)
    where applied.applied_from <= {{ at }} and (applied.applied_to is null or applied.applied_to > {{ at }})
{%- endmacro %}
