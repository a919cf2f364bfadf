{% macro session_revisions(history, pipeline, count_column, value_column) %}
    {#- late_data.window_revisions of a session pipeline: a session's identity (its start) can change
        from one run to the next, so a version is compared with its predecessors: the versions of
        its series that the run publishing it closed and whose events overlap its own (first to
        last event). Two or more predecessors: `merged` (a late event joined sessions; the others
        are gone from that run on). A predecessor that the run replaced by two or more sessions:
        `split` (a correction moved the event that joined them). One predecessor: the reasons of
        fixed windows against it (late_data, correction, finalized), a session extended backwards
        included; none: initial. -#}
    {%- set key_columns = late_data.key_columns(pipeline) %}
    with

    {{ late_data.revision_runs(pipeline) }}

    numbered as (

        select
            versions.*,
            run_definitions.definition_id,
            run_definitions.code_commit,
            run_definitions.definition_changed,
            row_number() over (partition by versions.window_key order by versions.dbt_valid_from) as version_number
        from {{ history }} as versions
        left join run_definitions on versions.invocation_id = run_definitions.invocation_id

    ),

    {{ late_data.session_predecessors(pipeline, count_column, value_column) }}

    select
        {{- late_data.revision_columns(key_columns, count_column, value_column, 'predecessors') }}
        numbered.window_end,
        case
            when predecessors.dbt_scd_id is null then 'initial'
            when numbered.definition_changed then 'definition_change'
            when run_kinds.run_kind = 'backfill' then 'backfill'
            when predecessors.predecessor_versions > 1 then 'merged'
            when predecessors.most_successors > 1 then 'split'
            when numbered.{{ count_column }} < predecessors.previous_count then 'correction'
            when numbered.{{ count_column }} > predecessors.previous_count then 'late_data'
            when not numbered.{{ value_column }} <=> predecessors.previous_value then 'correction'
            else 'finalized'
        end as revision_reason,
        numbered.definition_id,
        numbered.code_commit
    from numbered
    left join predecessors on numbered.dbt_scd_id = predecessors.dbt_scd_id
    left join run_kinds on numbered.invocation_id = run_kinds.invocation_id
{%- endmacro %}


{% macro session_predecessors(pipeline, count_column, value_column) %}
    {#- The CTEs successions (each numbered version with each of its predecessors: the versions of
        its series the run publishing it closed whose events overlap its own) and predecessors (per
        version: how many, their count, the value of a single one, and the most successors one of
        them has), for late_data.session_revisions. -#}
    {%- set series = pipeline.series_key %}
    successions as (

        select
            now.dbt_scd_id,
            then.dbt_scd_id as predecessor_id,
            then.{{ count_column }} as predecessor_count,
            then.{{ value_column }} as predecessor_value
        from numbered as now
        inner join numbered as then
            on then.dbt_valid_to = now.dbt_valid_from
            {%- for column in series %}
            and then.{{ column }} = now.{{ column }}
            {%- endfor %}
            and then.window_start <= {{ late_data.add_seconds('now.window_end', -pipeline.session_gap) }}
            and now.window_start <= {{ late_data.add_seconds('then.window_end', -pipeline.session_gap) }}

    ),

    predecessors as (

        select
            dbt_scd_id,
            count(*) as predecessor_versions,
            sum(predecessor_count) as previous_count,
            if(count(*) = 1, first(predecessor_value), null) as previous_value,
            max(successor_versions) as most_successors
        from successions
        inner join (
            select predecessor_id, count(*) as successor_versions from successions group by predecessor_id
        ) as successors using (predecessor_id)
        group by dbt_scd_id

    )
{%- endmacro %}
