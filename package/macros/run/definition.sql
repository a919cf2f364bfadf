{% macro pipeline_definition(pipeline) %}
    {#- What computes a pipeline's numbers, as {part: value}: its select (a digest of the model's
        code, comments, its config block and layout left out) and each setting that changes a
        window's value or its place. A run records it in the audit (column `definition`); a run
        whose definition differs from the one its tables were built with is refused
        (late_data.check_definition). Not in it: series_buckets (its own check), the companions'
        names, publish thresholds, and the models upstream of the pipeline's own. -#}
    {%- set node = graph.nodes.get(pipeline.unique_id) if execute else none -%}
    {%- set code = node.raw_code if node is not none and node.raw_code is defined else '' -%}
    {%- set re = modules.re -%}
    {%- set code = re.sub('(?s)\\{#.*?#\\}', ' ', code) -%}
    {%- set code = re.sub('(?s)\\{\\{\\s*config\\(.*?\\)\\s*\\}\\}', ' ', code) -%}
    {%- set code = re.sub('--[^\\n]*', ' ', code) -%}
    {%- set code = re.sub('\\s+', ' ', code) | trim -%}
    {%- set dimensions = [] -%}
    {%- for dimension in pipeline.dimensions -%}
        {%- do dimensions.append([dimension.name, dimension.key, dimension.fact_key, dimension.valid_from, dimension.valid_to]) -%}
    {%- endfor -%}
    {{- return({
        'select': local_md5(code) if code else none,
        'measures': tojson(pipeline.measures, sort_keys=true),
        'window': tojson([pipeline.window_size, pipeline.window_slide, pipeline.session_gap, pipeline.max_session, pipeline.partition_size]),
        'series_key': pipeline.series_key | join(', '),
        'event_key': pipeline.event_key | join(', '),
        'late_windows': tojson(pipeline.late_window_by_source, sort_keys=true),
        'dimensions': tojson(dimensions),
        'tie_breaker': pipeline.tie_breaker | join(', '),
        'source_column': pipeline.source_column,
    }) -}}
{% endmacro %}


{% macro definition_json(pipeline) %}
    {#- late_data.pipeline_definition as the audit stores it: JSON, keys sorted. -#}
    {{- return(tojson(late_data.pipeline_definition(pipeline), sort_keys=true)) -}}
{% endmacro %}


{% macro check_definition(pipeline) %}
    {#- No silent mix: a run that adds to a pipeline's tables (scheduled, reconcile, backfill) with a
        definition other than the one its last scheduled, reconcile or full-refresh run recorded is
        refused before it writes, naming each part that changed and the rebuilds that apply it.
        Tables whose runs recorded no definition (built before the audit had one) are taken as
        they are; their next run records it. -#}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- set stored = late_data.last_run(result).get('definition') -%}
    {%- if stored is none or not late_data.builds_incrementally(pipeline) -%}{{ return('') }}{%- endif -%}
    {%- set recorded = fromjson(stored) -%}
    {%- set current = late_data.pipeline_definition(pipeline) -%}
    {%- set changed = [] -%}
    {%- for part in current | sort if recorded.get(part) != current[part] -%}
        {%- do changed.append(part) -%}
    {%- endfor -%}
    {%- if changed -%}
        {%- do exceptions.raise_compiler_error(
            "late-data: the definition of " ~ result.identifier ~ " changed since its tables were built ("
            ~ changed | join(', ') ~ "): a run would mix two definitions in one table, so nothing was written."
            ~ " Rebuild it from its raw sources in a stage (late-data plan, then late-data apply), or in place:"
            ~ " dbt build --full-refresh --select " ~ pipeline.name ~ "+"
        ) -%}
    {%- endif -%}
    {{- return('') -}}
{% endmacro %}
