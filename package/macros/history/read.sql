{% macro as_of(history, moment=none) %}
    {#- A select of the versions of a late-data history (a relation, e.g. ref('my_history')) valid
        at `moment` ('YYYY-MM-DD HH:MM:SS' UTC, or a datetime): the result table as it stood right
        after the last run at or before that moment. Without `moment`: the current versions.
        E.g. dbt show --inline with late_data.as_of(ref('my_history'), '2026-01-01 01:00:10'). -#}
    {%- set at = none if moment is none else late_data.timestamp_literal(
        moment if moment is not string else late_data.parse_time(moment, 'as_of')) %}
    select *
    from {{ history }}
    where
    {%- if at is none %}
        dbt_valid_to is null
    {%- else %}
        dbt_valid_from <= {{ at }}
        and (dbt_valid_to > {{ at }} or dbt_valid_to is null)
    {%- endif %}
{%- endmacro %}


{% macro window_revisions(history, pipeline, count_column=none, value_column=none) %}
    {#- Every version in a late-data `history`, per window, numbered, with the change from the previous
        version and a reason: initial, backfill (a backfill run wrote it), late_data (more rows),
        correction (fewer rows, or another value at the same count) or finalized (status only);
        `value_column` (default: the first measure but the count) is the number whose change it shows. -#}
    {%- set key_columns = late_data.key_columns(pipeline) -%}
    {%- set count_column = count_column or pipeline.count_column -%}
    {%- set value_column = value_column or (pipeline.measures | rejectattr('kind', 'equalto', 'count') | map(attribute='name') | first) or count_column %}
    with

    run_kinds as (

        select distinct
            invocation_id,
            run_kind
        from {{ late_data.run_audit_relation() }}
        where model_role = 'windows'

    ),

    numbered as (

        select
            versions.*,
            row_number() over window_versions as version_number,
            lag(versions.{{ count_column }}) over window_versions as previous_count,
            lag(versions.{{ value_column }}) over window_versions as previous_value
        from {{ history }} as versions
        window window_versions as (
            partition by {% for key in key_columns %}versions.{{ key }}{{ ', ' if not loop.last }}{% endfor %}
            order by versions.dbt_valid_from
        )

    )

    select
        {%- for key in key_columns %}
        numbered.{{ key }},
        {%- endfor %}
        numbered.version_number,
        numbered.{{ value_column }},
        numbered.{{ count_column }},
        numbered.is_final,
        numbered.dbt_valid_from as valid_from,
        numbered.dbt_valid_to as valid_to,
        numbered.{{ value_column }} - numbered.previous_value as value_change,
        100 * (numbered.{{ value_column }} - numbered.previous_value)
        / nullif(abs(numbered.previous_value), 0) as value_change_percent,
        numbered.{{ count_column }} - numbered.previous_count as count_change,
        case
            when numbered.version_number = 1 then 'initial'
            when run_kinds.run_kind = 'backfill' then 'backfill'
            when numbered.{{ count_column }} < numbered.previous_count then 'correction'
            when numbered.{{ count_column }} > numbered.previous_count then 'late_data'
            when not numbered.{{ value_column }} <=> numbered.previous_value then 'correction'
            else 'finalized'
        end as revision_reason
    from numbered
    left join run_kinds on numbered.invocation_id = run_kinds.invocation_id
{%- endmacro %}
