{% test late_data_quarantine_is_empty(model) %}
    {#- One result per source table and reason of a quarantine model (water_level_quarantine,
        page_error_rates_quarantine): configured to warn, and the warning's log line names them. -#}
    {%- if execute and flags.WHICH in ('test', 'build') %}
        {%- set summary = run_query(
            'select source_table, quarantine_reason, count(*) from ' ~ model
            ~ ' group by source_table, quarantine_reason order by source_table, quarantine_reason'
        ) %}
        {%- set reasons = [] %}
        {%- for row in summary.rows %}
            {%- do reasons.append(row[0] ~ ': ' ~ row[2] ~ ' ' ~ row[1]) %}
        {%- endfor %}
        {%- if reasons %}
            {%- do log('late-data quarantine: ' ~ reasons | join(', ') ~ ' (select * from ' ~ model ~ ')', info=true) %}
        {%- endif %}
    {%- endif %}
    select
        source_table,
        quarantine_reason,
        count(*) as versions,
        max(quarantined_at) as last_quarantined_at
    from {{ model }}
    group by source_table, quarantine_reason
{% endtest %}
