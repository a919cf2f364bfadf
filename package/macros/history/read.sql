{% macro as_of(history, moment=none) %}
    {#- A select of the versions of a late-data history (a relation, e.g. ref('my_history')) valid
        at `moment` ('YYYY-MM-DD HH:MM:SS' UTC, or a datetime): the result table as it stood right
        after the last run at or before that moment, each version with the definition that computed
        it and the commit of the code its run ran (definition_id and code_commit, as the revisions
        give them). Without `moment`: the current versions.
        E.g. dbt show --inline with late_data.as_of(ref('my_history'), '2026-01-01 01:00:10'). -#}
    {%- set at = none if moment is none else late_data.timestamp_literal(
        moment if moment is not string else late_data.parse_time(moment, 'as_of')) %}
    select
        versions.*,
        run_definitions.definition_id,
        run_definitions.code_commit
    from {{ history }} as versions
    left join (

        {{- late_data.run_definitions(late_data.recorded_pipeline(history)) }}

    ) as run_definitions on versions.invocation_id = run_definitions.invocation_id
    where
    {%- if at is none %}
        versions.dbt_valid_to is null
    {%- else %}
        versions.dbt_valid_from <= {{ at }}
        and (versions.dbt_valid_to > {{ at }} or versions.dbt_valid_to is null)
    {%- endif %}
{%- endmacro %}


{% macro recorded_pipeline(history) %}
    {#- The late-data pipeline whose history snapshot is the relation `history`; refused, naming it,
        when no late-data history is (none while dbt parses). -#}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- for node in late_data.filter_nodes('history')
        if (node.schema ~ '.' ~ (node.alias or node.name)) | lower == (history.schema ~ '.' ~ history.identifier) | lower -%}
        {{- return(late_data.history_pipeline(node)) -}}
    {%- endfor -%}
    {%- do exceptions.raise_compiler_error(
        "late_data.as_of reads a late-data history (a snapshot of strategy late_data.history); " ~ history ~ " is none"
    ) -%}
{% endmacro %}


{% macro run_definitions(pipeline) %}
    {#- A select of each successful run of `pipeline` that recorded its definition: the run
        (invocation_id), the digest of the definition (definition_id: the first 12 hex digits of its
        md5), the code's commit (code_commit) and whether it rebuilt the pipeline under another
        definition than the previous such run recorded (definition_changed: only a rebuild can; a
        package upgrade that records the same definition in another form changes nothing). -#}
    select
        invocation_id,
        substr(md5(definition), 1, 12) as definition_id,
        code_commit,
        coalesce(run_kind = 'full_refresh' and definition != lag(definition) over (order by recorded_at), false)
            as definition_changed
    from (
        select
            invocation_id,
            max(definition) as definition,
            max(code_commit) as code_commit,
            max(run_kind) as run_kind,
            max(recorded_at) as recorded_at
        from {{ late_data.run_audit_relation() }}
        where
            {{ 'model = ' ~ late_data.sql_string(pipeline.alias) if pipeline is not none else 'false' }}
            and outcome = 'success' and definition is not null
        group by invocation_id
    )
{%- endmacro %}


{% macro window_revisions(history, pipeline, count_column=none, value_column=none) %}
    {#- Every version in a late-data `history`, per window, numbered, with the change from the previous
        version, a reason and the definition that computed it (definition_id: the digest of the
        pipeline's definition its run recorded, late_data.pipeline_definition; null for runs that
        recorded none) with the commit of the code its run ran (code_commit, late_data.code_commit).
        The reasons: initial, definition_change (the first run under another definition than the
        pipeline's previous run wrote it: a full refresh that applied a change of the model or its
        settings), backfill (a backfill run wrote it), dimension_change (a change of a dimension
        the pipeline joins at event time moved versions in or out), late_data
        (more rows), correction (fewer rows, or another value at the same count) or finalized
        (status only);
        `value_column` (default: the first measure but the count) is the number whose change it shows. -#}
    {%- set key_columns = late_data.key_columns(pipeline) -%}
    {%- set count_column = count_column or pipeline.count_column -%}
    {%- set value_column = value_column or (pipeline.measures | rejectattr('kind', 'equalto', 'count') | map(attribute='name') | first) or count_column %}
    {%- if pipeline.session_gap -%}
        {{- return(late_data.session_revisions(history, pipeline, count_column, value_column)) -}}
    {%- endif %}
    with

    {{ late_data.revision_runs(pipeline) }}

    numbered as (

        select
            versions.*,
            run_definitions.definition_id,
            run_definitions.code_commit,
            run_definitions.definition_changed,
            row_number() over window_versions as version_number,
            lag(versions.{{ count_column }}) over window_versions as previous_count,
            lag(versions.{{ value_column }}) over window_versions as previous_value
        from {{ history }} as versions
        left join run_definitions on versions.invocation_id = run_definitions.invocation_id
        window window_versions as (
            partition by {% for key in key_columns %}versions.{{ key }}{{ ', ' if not loop.last }}{% endfor %}
            order by versions.dbt_valid_from
        )

    )

    select
        {{- late_data.revision_columns(key_columns, count_column, value_column, 'numbered') }}
        {{ late_data.revision_reason(pipeline, count_column, value_column) }} as revision_reason,
        numbered.definition_id,
        numbered.code_commit
    from numbered
    left join run_kinds on numbered.invocation_id = run_kinds.invocation_id
    {%- if pipeline.dimensions %}
    left join dimension_changes
        on numbered.invocation_id = dimension_changes.invocation_id and numbered.window_key = dimension_changes.window_key
    {%- endif %}
{%- endmacro %}


{% macro revision_columns(key_columns, count_column, value_column, previous) %}
    {#- The select list of a revisions view up to its reason (each column followed by a comma): a
        numbered version (CTE numbered) with its change from the previous_value and previous_count
        that the relation `previous` holds; a pipeline whose only measure is its count shows it once. #}
        {%- for key in key_columns %}
        numbered.{{ key }},
        {%- endfor %}
        numbered.version_number,
        numbered.{{ value_column }},
        {%- if count_column != value_column %}
        numbered.{{ count_column }},
        {%- endif %}
        numbered.is_final,
        numbered.dbt_valid_from as valid_from,
        numbered.dbt_valid_to as valid_to,
        numbered.{{ value_column }} - {{ previous }}.previous_value as value_change,
        100 * (numbered.{{ value_column }} - {{ previous }}.previous_value)
        / nullif(abs({{ previous }}.previous_value), 0) as value_change_percent,
        numbered.{{ count_column }} - {{ previous }}.previous_count as count_change,
{%- endmacro %}


{% macro revision_runs(pipeline) %}
    {#- The CTEs (each followed by a comma) a pipeline's revisions read from the run audit: each
        run's kind (run_kinds), the definition each successful run of the pipeline recorded
        (run_definitions, late_data.run_definitions), and, for a
        pipeline with dimensions, the windows a dimension change changed in each run
        (dimension_changes). -#}
    run_kinds as (

        select distinct
            invocation_id,
            run_kind
        from {{ late_data.run_audit_relation() }}
        where model_role = 'windows'

    ),

    run_definitions as (

        {{- late_data.run_definitions(pipeline) }}

    ),

    {%- if pipeline.dimensions %}

    dimension_changes as (

        select distinct invocation_id, changed_window as window_key
        from {{ late_data.run_audit_relation() }}
        lateral view explode(dimension_windows) changed_windows as changed_window
        where model = {{ late_data.sql_string(pipeline.alias) }} and outcome = 'success'

    ),
    {%- endif %}
{%- endmacro %}


{% macro revision_reason(pipeline, count_column, value_column) %}
    {#- SQL: why a numbered history version (CTE numbered, with run_kinds and dimension_changes
        joined) differs from the window's previous one. -#}
    case
        when numbered.version_number = 1 then 'initial'
        when numbered.definition_changed then 'definition_change'
        when run_kinds.run_kind = 'backfill' then 'backfill'
        {%- if pipeline.dimensions %}
        when dimension_changes.window_key is not null then 'dimension_change'
        {%- endif %}
        when numbered.{{ count_column }} < numbered.previous_count then 'correction'
        when numbered.{{ count_column }} > numbered.previous_count then 'late_data'
        when not numbered.{{ value_column }} <=> numbered.previous_value then 'correction'
        else 'finalized'
    end
{%- endmacro %}
