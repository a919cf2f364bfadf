{% macro upstream_sources(node, skip=[]) %}
    {#- The names of the source tables `node` reads, directly or through other models, sorted;
        not those read only through a node or source table named in `skip`. -#}
    {%- set found, seen, queue = [], [], node.depends_on.nodes | list -%}
    {%- for unique_id in queue if unique_id not in seen -%}
        {%- do seen.append(unique_id) -%}
        {%- set upstream = graph.sources.get(unique_id) or graph.nodes.get(unique_id) -%}
        {%- if upstream is not none and upstream.name in skip -%}
        {%- elif unique_id in graph.sources -%}
            {%- do found.append(graph.sources[unique_id].name) -%}
        {%- elif unique_id in graph.nodes -%}
            {%- do queue.extend(graph.nodes[unique_id].depends_on.nodes) -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(found | unique | sort | list) -}}
{% endmacro %}


{% macro pipeline_format(node) %}
    {#- The table format of a pipeline's tables: its model's file_format, delta or iceberg (the
        writes replace partitions and the history merges, which need one of them). -#}
    {%- set file_format = node.config.get('file_format') -%}
    {%- if file_format not in ('iceberg', 'delta') -%}
        {%- do exceptions.raise_compiler_error(
            "late-data: model " ~ node.name ~ " has file_format=" ~ file_format ~ ": a late-data pipeline needs"
            ~ " iceberg or delta (set +file_format for the model or its folder)"
        ) -%}
    {%- endif -%}
    {{- return(file_format) -}}
{% endmacro %}


{% macro companion_names(node, meta) %}
    {#- The names of the relations a pipeline keeps beside its result table: {versions, too_late,
        quarantine, revisions, lateness}, from meta.late_data (versions_table, too_late_table,
        quarantine_view, revisions_view, lateness_view; false: none), else <model>__versions,
        __too_late, __quarantine, __revisions, __lateness. -#}
    {%- set names = {} -%}
    {%- for role, key, suffix in [
        ('versions', 'versions_table', '__versions'), ('too_late', 'too_late_table', '__too_late'),
        ('quarantine', 'quarantine_view', '__quarantine'), ('revisions', 'revisions_view', '__revisions'),
        ('lateness', 'lateness_view', '__lateness')] -%}
        {%- set name = meta.get(key, node.alias ~ suffix) -%}
        {%- if name is false and role == 'versions' -%}
            {%- do exceptions.raise_compiler_error("meta.late_data.versions_table of model " ~ node.name ~ " cannot be false: the pipeline keeps its versions") -%}
        {%- endif -%}
        {%- do names.update({role: late_data.plain_identifier('meta.late_data.' ~ key ~ ' of model ' ~ node.name, name) if name else none}) -%}
    {%- endfor -%}
    {{- return(names) -}}
{% endmacro %}


{% macro pipeline_relation(pipeline, role='result') %}
    {#- The relation of a pipeline's result (`role` result) or of one of its companions (versions,
        too_late, quarantine, revisions, lateness), in the result's schema; none for a companion
        turned off. -#}
    {%- set name = pipeline.alias if role == 'result' else pipeline.companions[role] -%}
    {%- if name is none -%}{{ return(none) }}{%- endif -%}
    {{- return(api.Relation.create(schema=pipeline.schema, identifier=name, type='view' if role in ('quarantine', 'revisions', 'lateness') else 'table')) -}}
{% endmacro %}


{% macro is_pipeline(node) %}
    {{- return(node.resource_type == 'model' and node.config.materialized == 'late_data') -}}
{% endmacro %}


{% macro is_history(node) %}
    {#- A snapshot that keeps a late-data pipeline's history: strategy late_data.history. -#}
    {{- return(node.resource_type == 'snapshot' and node.config.get('strategy') == 'late_data.history') -}}
{% endmacro %}


{% macro filter_nodes(kind, selected_only=false) %}
    {#- The graph's late-data pipelines (`kind` pipeline) or histories (`kind` history), optionally
        only those selected in this invocation. -#}
    {%- set found = [] -%}
    {%- for node in graph.nodes.values()
        if (late_data.is_pipeline(node) if kind == 'pipeline' else late_data.is_history(node))
        and (not selected_only or node.unique_id in selected_resources) -%}
        {%- do found.append(node) -%}
    {%- endfor -%}
    {{- return(found) -}}
{% endmacro %}


{% macro history_pipeline(node) %}
    {#- The pipeline a late-data history snapshot records: the late-data model it selects from. -#}
    {%- for unique_id in node.depends_on.nodes if unique_id in graph.nodes and late_data.is_pipeline(graph.nodes[unique_id]) -%}
        {{- return(late_data.pipeline(graph.nodes[unique_id])) -}}
    {%- endfor -%}
    {%- do exceptions.raise_compiler_error(
        "late-data history " ~ node.name ~ " (strategy late_data.history) must take its relation from a late-data model"
        ~ " (relation: ref('<model>')), not from " ~ node.depends_on.nodes | join(', ')
    ) -%}
{% endmacro %}


{% macro pipeline_histories(pipeline, selected_only=false) %}
    {#- The late-data history snapshots of `pipeline`. -#}
    {%- set found = [] -%}
    {%- for node in late_data.filter_nodes('history', selected_only) if pipeline.unique_id in node.depends_on.nodes -%}
        {%- do found.append(node) -%}
    {%- endfor -%}
    {{- return(found) -}}
{% endmacro %}


{% macro pipeline_named(name, stand_in={}) %}
    {#- The settings of the project's late-data pipeline whose result model is `name`, for models
        that read its versions or history (a revisions or lateness view). While dbt parses, and in
        a unit test (no graph), the settings late_data.pipeline_settings gives a stand-in model of
        that name: a count and the project's vars, with `stand_in` as its meta.late_data over them
        (e.g. {'series_key': ['location']}), no companion but its versions, no dimension, no source. -#}
    {%- if not execute or 'nodes' not in graph -%}
        {%- set meta = {
            'series_key': 'series_key', 'measures': {'row_count': 'count'}, 'too_late_table': false,
            'quarantine_view': false, 'revisions_view': false, 'lateness_view': false,
        } -%}
        {%- do meta.update(stand_in) -%}
        {{- return(late_data.pipeline_settings({
            'name': name, 'unique_id': 'model.' ~ name, 'schema': target.schema, 'alias': name,
            'config': {'file_format': 'iceberg', 'meta': {'late_data': meta}}, 'depends_on': {'nodes': []},
        })) -}}
    {%- endif -%}
    {%- for node in late_data.filter_nodes('pipeline') if node.name == name -%}
        {{- return(late_data.pipeline(node)) -}}
    {%- endfor -%}
    {%- do exceptions.raise_compiler_error("late-data: no late-data model named " ~ name ~ " (materialized='late_data')") -%}
{% endmacro %}


{% macro describe_pipelines() %}
    {#- For `dbt run-operation late_data.describe_pipelines` (what `late-data` reads): one log line
        per late-data pipeline of the project, `late-data pipeline {...}`, its settings as
        late_data.pipeline works them out, its relations, its histories, the source tables it
        reads and its definition (late_data.pipeline_definition); and first `late-data target
        {...}`: the target schema, which holds the run audit. -#}
    {%- do log('late-data target ' ~ tojson({'schema': target.schema, 'audit': late_data.run_audit_relation().render()}), info=true) -%}
    {%- for node in late_data.filter_nodes('pipeline') -%}
        {%- set pipeline = late_data.pipeline(node) -%}
        {%- set described = dict(pipeline) -%}
        {%- set relations = {} -%}
        {%- for role in ['result', 'versions', 'too_late', 'quarantine', 'revisions', 'lateness'] -%}
            {%- set relation = late_data.pipeline_relation(pipeline, role) -%}
            {%- do relations.update({role: relation.render() if relation is not none else none}) -%}
        {%- endfor -%}
        {%- set histories = [] -%}
        {%- for history in late_data.pipeline_histories(pipeline) -%}
            {%- do histories.append({'name': history.name, 'relation': history.schema ~ '.' ~ history.alias}) -%}
        {%- endfor -%}
        {%- set sources = [] -%}
        {%- for source_node in graph.sources.values() if source_node.name in pipeline.source_tables -%}
            {%- do sources.append({'name': source_node.name, 'relation': source_node.schema ~ '.' ~ source_node.identifier}) -%}
        {%- endfor -%}
        {%- do described.update({
            'relations': relations, 'histories': histories, 'sources': sources, 'tags': node.tags,
            'definition': late_data.pipeline_definition(pipeline),
            'legacy_select': late_data.legacy_select_digest(node.raw_code or ''),
        }) -%}
        {%- do log('late-data pipeline ' ~ tojson(described), info=true) -%}
    {%- endfor -%}
{% endmacro %}
