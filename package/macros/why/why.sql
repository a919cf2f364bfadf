{% macro why(model_name, series, window_start, as_of=none) %}
    {#- A select of one window's story (`late-data why` prints it; `dbt show --inline` of
        late_data.why('meter_readings', 'm1', '2026-06-01 00:05:00') in double braces reads it): the window of
        the pipeline whose result is `model_name`, of series `series` (its series key's value; with
        several key columns, their values joined by '|'), starting at `window_start`, as it stood
        at `as_of` (default: now). One row per published version (kind 'published': version_number,
        its measures as JSON, is_final, valid_from (the run that published it), revision_reason,
        definition_id, code_commit) and one per delivery of an event in the window (kind
        'delivery': event_key, event_time, ingested_at, loaded_at (the run that loaded it),
        seconds_late (ingested_at - event_time), its measure columns as JSON, quarantine_reason,
        replaced_ingested_at (the version it corrects) and delivery_status: counted, superseded (a
        later version of its event counts instead), too_late (it arrived after the window was
        final), quarantined, or not_yet (loaded after `as_of`'s run)). Whether a delivery counts
        is the package's own rule (late_data.chained_versions, late_data.counts_as_of, judged at
        the earlier of `as_of` and the window's final moment): the counted deliveries recompute the
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
    {%- set judged_at = 'greatest(least(' ~ at ~ ', ' ~ final_column ~ '), coalesce(' ~ late_data._why_too_late_backfill(model_name) ~ ", timestamp'1970-01-01 00:00:00'))" %}
    with

    {{ late_data.why_published(pipeline, history, series, start, at) }},

    {{ late_data.why_deliveries(pipeline, versions, series, start, at, judged_at, final_column) }}

    {{ late_data.why_rows(pipeline, series) }}
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
    {{- return(versions ~ " timestamp as of timestamp'" ~ read_at.strftime('%Y-%m-%d %H:%M:%S.%f') ~ "'") -}}
{% endmacro %}


{% macro _why_too_late_backfill(model_name) %}
    {#- Private to late_data.why: SQL of the run time of the window's last published version (CTE
        published) when a backfill that included too-late rows published it (the named versions'
        registry says so), else null. -#}
    {%- set registry = api.Relation.create(schema=target.schema, identifier='late_data_named_versions', type='table') -%}
    {%- if not run_query('show tables in ' ~ target.schema ~ " like 'late_data_named_versions'").rows -%}
        {{- return('cast(null as timestamp)') -}}
    {%- endif -%}
    {%- set backfills -%}
        select distinct run_time from {{ registry }}
        where kind = 'backfill' and get_json_object(detail, '$.include_too_late') = 'true'
            and array_contains(pipelines, {{ late_data.sql_string(model_name) }})
    {%- endset -%}
    {%- set literals = [] -%}
    {%- for run_time in run_query(backfills).columns[0].values() -%}
        {%- do literals.append("timestamp'" ~ run_time.strftime('%Y-%m-%d %H:%M:%S.%f') ~ "'") -%}
    {%- endfor -%}
    {%- if not literals -%}{{ return('cast(null as timestamp)') }}{%- endif -%}
    {{- return(
        '(select max(valid_from) from published where valid_from in (' ~ literals | join(', ') ~ ')'
        ~ ' and version_number = (select max(version_number) from published))'
    ) -}}
{% endmacro %}


{% macro why_deliveries(pipeline, versions, series, start, at, judged_at, final_column) %}
    {#- The CTEs of late_data.why's deliveries (the last, `delivered`, not followed by a comma): the
        versions of `series` (read from `versions`: late_data._why_versions_read) with an event
        time in the window starting at `start` (a SQL timestamp), windowed and chained by the
        package's own rules, each with its delivery_status as of `at` (counted as of `judged_at`,
        SQL of each delivery's columns) and the ingested_at of the version it corrects. -#}
    deliveries as (

        select *
        from {{ versions }}
        where {{ late_data.text_key(pipeline.series_key) }} = {{ late_data.sql_string(series) }}
            and event_time >= {{ late_data.add_seconds(start, -pipeline.window_size) }}
            and event_time < {{ late_data.add_seconds(start, pipeline.window_size) }}

    ),

    windowed_deliveries as (

        select * from ({{ late_data.windowed('deliveries', pipeline) }}) as windowed
        where window_start = {{ start }}

    ),

    chained as (

        select
            *,
            {{ late_data.counts_as_of(judged_at) }} as counts
        from ({{ late_data.chained_versions(
            '(select * from windowed_deliveries where quarantine_reason is null and loaded_at <= ' ~ at ~ ')',
            pipeline, none, final_column) }}) as chained_versions

    ),

    delivered as (

        select
            windowed.*,
            lag(windowed.ingested_at) over (
                partition by {{ late_data.text_key(pipeline.event_key, 'windowed') }}
                order by windowed.ingested_at, windowed.event_time
            ) as replaced_ingested_at,
            case
                when windowed.quarantine_reason is not null then 'quarantined'
                when windowed.loaded_at > {{ at }} then 'not_yet'
                when chained.counts then 'counted'
                when windowed.ingested_at > windowed.{{ final_column }} then 'too_late'
                else 'superseded'
            end as delivery_status
        from windowed_deliveries as windowed
        left join chained
            on {{ late_data.text_key(pipeline.event_key, 'windowed') }} = {{ late_data.text_key(pipeline.event_key, 'chained') }}
            and windowed.ingested_at <=> chained.ingested_at
            and windowed.event_time <=> chained.event_time
            {%- for column in pipeline.input_columns %}
            and windowed.{{ column }} <=> chained.{{ column }}
            {%- endfor %}

    )
{%- endmacro %}


{% macro why_rows(pipeline, series) %}
    {#- The select of late_data.why: a row per published version (CTE published) and one per
        delivery (CTE delivered), in the columns both kinds share. -#}
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
        cast(null as string) as event_key,
        cast(null as timestamp) as event_time,
        cast(null as timestamp) as ingested_at,
        cast(null as timestamp) as loaded_at,
        cast(null as double) as seconds_late,
        cast(null as string) as quarantine_reason,
        cast(null as timestamp) as replaced_ingested_at,
        cast(null as string) as delivery_status
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
        {{ late_data.text_key(pipeline.event_key) }} as event_key,
        event_time,
        ingested_at,
        loaded_at,
        (unix_micros(ingested_at) - unix_micros(event_time)) / 1e6 as seconds_late,
        quarantine_reason,
        replaced_ingested_at,
        delivery_status
    from delivered
{%- endmacro %}



{% macro why_published(pipeline, history, series, start, at) %}
    {#- The CTEs window_history and published of late_data.why: each version of the window (of
        `series`, starting at `start`) the history holds, published at or before `at`, numbered,
        with its measures as JSON and the reason and definition of late_data.window_revisions,
        which reads that window's versions only (a history of a day of runs is not scanned). -#}
    window_history as (

        select *
        from {{ history }}
        where window_start = {{ start }}
            and {{ late_data.text_key(pipeline.series_key) }} = {{ late_data.sql_string(series) }}
            and dbt_valid_from <= {{ at }}

    ),

    published as (

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

    )
{%- endmacro %}
