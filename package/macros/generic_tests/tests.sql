{% test quarantine_is_empty(model) %}
    {#- One result per version the last run of the late-data pipeline tested (`model`, its result)
        quarantined, so dbt's "Got N results" counts them: configure it to warn, and the warning's
        log line counts them per source table and reason. Only the last run's: a scheduled run's
        test reads what that run loaded, not every version before it (the quarantine view holds
        them all; `late-data status` counts them). -#}
    {%- set quarantine = late_data.companion_of(model, 'quarantine') %}
    {%- set since = late_data.last_written_at(late_data.companion_of(model, 'versions')) if execute else none %}
    {%- set recent = ' where quarantined_at >= ' ~ late_data.timestamp_literal(since) if since is not none else '' %}
    {%- if execute and flags.WHICH in ('test', 'build') %}
        {%- set summary = run_query(
            'select source_table, quarantine_reason, count(*) from ' ~ quarantine ~ recent
            ~ ' group by source_table, quarantine_reason order by source_table, quarantine_reason'
        ) %}
        {%- set reasons = [] %}
        {%- for row in summary.rows %}
            {%- do reasons.append(row[0] ~ ': ' ~ row[2] ~ ' ' ~ row[1]) %}
        {%- endfor %}
        {%- if reasons %}
            {%- do log('late-data quarantine: ' ~ reasons | join(', ') ~ ' (select * from ' ~ quarantine ~ ')', info=true) %}
        {%- endif %}
    {%- endif %}
    select * from {{ quarantine }}{{ recent }}
{% endtest %}


{% test too_late_rows(model) %}
    {#- The versions of a late-data pipeline its history's last run listed as too late to count in
        full (its too-late listing, which its history's run keeps: test the history snapshot):
        configure it to warn. Only the last run's entries; the listing holds them all. -#}
    {%- set listing = late_data.companion_of(model, 'too_late') %}
    {%- set since = late_data.last_written_at(listing) if execute else none %}
    select * from {{ listing }}
    {%- if since is not none %}
    where detected_at >= {{ late_data.timestamp_literal(since) }}
    {%- endif %}
{% endtest %}


{% test ambiguous_versions(model) %}
    {#- One result per event and arrival stamp of the late-data pipeline tested (`model`, its
        result) with two or more different countable versions (the same event key and
        ingested_at, different values): its version chain cannot tell which arrived last, and its
        tie breaker counts one (the last by event time, then its tie_breaker columns).
        Configure it to warn; the warning's log line names the events. Among the versions stamped
        from the write delay before the pipeline's last run on (what that run could load): each
        run's test reads what it added, not every version before it. -#}
    {%- set versions = late_data.companion_of(model, 'versions') %}
    {%- set pipeline = late_data.relation_pipeline(model) if execute else none %}
    {%- set keys = pipeline.event_key | join(', ') if pipeline else 'event_id' %}
    {%- set values = [] %}
    {%- for name, type in (late_data.known_columns(versions) if execute else [])
        if name not in pipeline.event_key + ['ingested_at', 'quarantine_reason', 'loaded_at'] %}
        {%- do values.append(name) %}
    {%- endfor %}
    {%- set value = 'struct(' ~ (values | join(', ') or 'event_time') ~ ')' %}
    {%- set since = late_data.last_written_at(versions) if execute else none %}
    {%- set recent = ' and ingested_at >= ' ~ late_data.timestamp_literal(since - late_data.seconds(late_data.write_delay_seconds()))
        if since is not none else '' %}
    {%- if execute and flags.WHICH in ('test', 'build') %}
        {%- set found = run_query(
            'select concat_ws(\'|\', ' ~ keys ~ ', cast(ingested_at as string)) from ' ~ versions
            ~ ' where quarantine_reason is null' ~ recent ~ ' group by ' ~ keys ~ ', ingested_at'
            ~ ' having count(distinct ' ~ value ~ ') > 1 order by 1 limit 5'
        ) %}
        {%- if found.rows %}
            {%- do log('late-data ambiguous versions (event|ingested_at, first 5): ' ~ found.columns[0].values() | join(', ')
                ~ ' (select * from ' ~ versions ~ ')', info=true) %}
        {%- endif %}
    {%- endif %}
    select
        {{ keys }},
        ingested_at,
        count(*) as versions,
        to_json(collect_set({{ value }})) as ambiguous_values
    from {{ versions }}
    where quarantine_reason is null{{ recent }}
    group by {{ keys }}, ingested_at
    having count(distinct {{ value }}) > 1
{% endtest %}


{% macro last_written_at(relation) %}
    {#- When a late-data table was last written: this invocation's run time when it wrote it,
        else its last successful run in the audit (none when it never ran). What a package test
        of a scheduled run reads from on. -#}
    {%- if late_data.written(relation) is not none -%}{{ return(late_data.run_time_value()) }}{%- endif -%}
    {{- return(late_data.last_run(relation).get('any_run_time')) -}}
{% endmacro %}


{% macro companion_of(model, role) %}
    {#- In a generic test of a late-data pipeline (`model`, its result or its history snapshot): the
        relation of its companion `role` (versions, too_late, quarantine); `model` itself while dbt
        parses. -#}
    {%- if not execute -%}{{ return(model) }}{%- endif -%}
    {%- set pipeline = late_data.relation_pipeline(model) -%}
    {%- if pipeline is none -%}
        {%- do exceptions.raise_compiler_error("late-data test on " ~ model ~ ": not a late-data pipeline (materialized='late_data') or its history") -%}
    {%- endif -%}
    {%- set companion = late_data.pipeline_relation(pipeline, role) -%}
    {%- if companion is none -%}
        {%- do exceptions.raise_compiler_error("late-data test on " ~ model ~ ": its " ~ role ~ " companion is turned off") -%}
    {%- endif -%}
    {{- return(companion) -}}
{% endmacro %}


{% macro relation_pipeline(relation) %}
    {#- The pipeline whose result or history is stored in `relation`, or none. -#}
    {%- for node in late_data.filter_nodes('pipeline') + late_data.filter_nodes('history')
        if node.alias == relation.identifier and node.schema == relation.schema -%}
        {{- return(late_data.pipeline(node) if late_data.is_pipeline(node) else late_data.history_pipeline(node)) -}}
    {%- endfor -%}
    {{- return(none) -}}
{% endmacro %}


{% test valid_intervals(model, key, valid_from='dbt_valid_from', valid_to='dbt_valid_to') %}
    {#- One result per interval of a dimension (an SCD2 table, e.g. a dbt snapshot) that a late-data
        pipeline cannot join at event time: inverted (valid_to at or before valid_from) or
        overlapping the next interval of the same `key` (a fact there would join two rows).
        The failure's log line names the first keys. -#}
    {%- set problems %}
    with

    ordered_intervals as (

        select
            cast({{ key }} as string) as dimension_key,
            {{ valid_from }} as valid_from,
            {{ valid_to }} as valid_to,
            lead({{ valid_from }}) over (partition by {{ key }} order by {{ valid_from }}, {{ valid_to }}) as next_valid_from
        from {{ model }}

    )

    select
        dimension_key,
        valid_from,
        valid_to,
        if(valid_to <= valid_from, 'inverted', 'overlaps_next') as problem
    from ordered_intervals
    where valid_to <= valid_from or next_valid_from < coalesce(valid_to, timestamp'9999-12-31 00:00:00')
    {%- endset %}
    {%- if execute and flags.WHICH in ('test', 'build') %}
        {%- set found = run_query('select dimension_key, problem from (' ~ problems ~ ') order by 1 limit 5') %}
        {%- if found.rows %}
            {%- do log('late-data intervals that cannot be joined at event time (key: problem, first 5): '
                ~ found.rows | map('join', ': ') | join(', ') ~ ' in ' ~ model, info=true) %}
        {%- endif %}
    {%- endif %}
    {{ problems }}
{% endtest %}


{% test late_window_meets_target(model) %}
    {#- One result per source table of the late-data pipeline tested (`model`, its result) whose
        configured late window captured less than var `late_window_target_share` of its rows
        (its lateness view, late_data.lateness): configure it to warn; the warning's log line
        gives the late window that would have. -#}
    {%- set lateness = late_data.companion_of(model, 'lateness') %}
    {%- if execute and flags.WHICH in ('test', 'build') %}
        {%- set short = run_query(
            'select source_table, configured_late_window_seconds, configured_captured_share, recommended_late_window_seconds from '
            ~ lateness ~ ' where not configured_meets_target order by source_table'
        ) %}
        {%- for row in short.rows %}
            {%- do log('late-data late window of ' ~ row[0] ~ ': ' ~ row[1] ~ ' s captured ' ~ row[2] ~ ' of its rows, under the target '
                ~ late_data.target_share() ~ '; ' ~ row[3] ~ ' s would have (select * from ' ~ lateness ~ ')', info=true) %}
        {%- endfor %}
    {%- endif %}
    select * from {{ lateness }}
    where not configured_meets_target
{% endtest %}
