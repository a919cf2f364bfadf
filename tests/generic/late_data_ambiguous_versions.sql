{% test late_data_ambiguous_versions(model, event_key_columns, version_columns) %}
    {#- One result per event and arrival stamp with two or more different countable versions (the
        same `event_key_columns` and ingested_at, different `version_columns`): the version chain
        cannot tell which arrived last and its tie breaker picks one (docs/raw-data-contract.md).
        Configured to warn; the warning's log line names the events. -#}
    {%- set keys = event_key_columns | join(', ') %}
    {%- if execute and flags.WHICH in ('test', 'build') %}
        {%- set found = run_query(
            'select concat_ws(\'|\', ' ~ keys ~ ', cast(ingested_at as string)) from ' ~ model
            ~ ' where quarantine_reason is null group by ' ~ keys ~ ', ingested_at'
            ~ ' having count(distinct struct(' ~ version_columns | join(', ') ~ ')) > 1 order by 1 limit 5'
        ) %}
        {%- if found.rows %}
            {%- do log('late-data ambiguous versions (event|ingested_at, first 5): ' ~ found.columns[0].values() | join(', ')
                ~ ' (select * from ' ~ model ~ ')', info=true) %}
        {%- endif %}
    {%- endif %}
    select
        {{ keys }},
        ingested_at,
        count(*) as versions,
        to_json(collect_set(struct({{ version_columns | join(', ') }}))) as ambiguous_values
    from {{ model }}
    where quarantine_reason is null
    group by {{ keys }}, ingested_at
    having count(distinct struct({{ version_columns | join(', ') }})) > 1
{% endtest %}
