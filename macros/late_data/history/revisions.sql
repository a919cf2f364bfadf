{% macro late_data_window_revisions(history, key_columns, count_column, value_column) %}
    {#- A select of every version in a late-data snapshot `history`, per window key, with its
        number, the change from the previous version and a reason: `initial`, `backfill` (written
        by a backfill run), `late_data` (more rows), `correction` (fewer rows, or another value at
        the same count: a correction replaced or moved a row) or `finalized` (status only). -#}
    with

    run_kinds as (

        select distinct
            invocation_id,
            run_kind
        from {{ ref('stg_late_data__run_audit') }}
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
