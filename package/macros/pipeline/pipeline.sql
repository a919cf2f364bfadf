{% macro pipeline(node=none) %}
    {#- A late-data pipeline's settings, from its result model `node` (a graph node; default the
        model being built): its meta.late_data, with the project's vars and the package's
        defaults under them, checked (each error names the setting), worked out once per
        invocation. Keys: docs/your-own-pipeline.md; late_data.pipeline_relations adds the
        relations of the result and its companions. -#}
    {%- set node = node if node is not none else model -%}
    {%- set cache = late_data.invocation_state().setdefault('pipelines', {}) -%}
    {%- if node.unique_id in cache -%}{{ return(cache[node.unique_id]) }}{%- endif -%}
    {%- set meta = (node.config.meta or {}).get('late_data') -%}
    {%- set named = 'meta.late_data of model ' ~ node.name -%}
    {%- if meta is not mapping -%}
        {%- do exceptions.raise_compiler_error(
            "late-data: model " ~ node.name ~ " is materialized as late_data but has no meta.late_data settings"
            ~ " (at least series_key and measures; docs/your-own-pipeline.md)"
        ) -%}
    {%- endif -%}
    {%- set window_size, window_slide, partition_size = late_data.pipeline_sizes(node, meta) -%}
    {%- set session_gap, max_session = late_data.pipeline_sessions(node, meta) -%}
    {%- set measures = late_data.parse_measures(node, meta.get('measures')) -%}
    {%- set series_key = late_data.identifier_list(meta.get('series_key'), named ~ ': series_key') -%}
    {%- set inputs = [] -%}
    {%- for measure in measures if measure.column and measure.column not in inputs -%}
        {%- do inputs.append(measure.column) -%}
    {%- endfor -%}
    {%- set source_column = meta.get('source_column') -%}
    {%- set dimensions = late_data.pipeline_dimensions(node, meta) -%}
    {#- The tables the facts come from: what a dimension reads is no source of versions. -#}
    {%- set source_tables = late_data.upstream_sources(node, skip=dimensions | map(attribute='name') | list) -%}
    {%- set late_windows = late_data.pipeline_late_windows(node, meta, source_tables) -%}
    {%- set pipeline = {
        'name': node.name,
        'unique_id': node.unique_id,
        'schema': node.schema,
        'alias': node.alias,
        'file_format': late_data.pipeline_format(node),
        'series_key': series_key,
        'event_key': late_data.identifier_list(meta.get('event_key', 'event_id'), named ~ ': event_key'),
        'source_column': late_data.plain_identifier(named ~ ': source_column', source_column) if source_column else none,
        'window_size': session_gap or window_size,
        'window_slide': session_gap or window_slide,
        'session_gap': session_gap,
        'max_session': max_session,
        'partition_size': partition_size,
        'series_buckets': late_data.pipeline_number(node, meta, 'series_buckets', 1),
        'late_window': late_windows.values() | max,
        'late_window_by_source': late_windows,
        'measures': measures,
        'count_column': (measures | selectattr('kind', 'equalto', 'count') | first).name,
        'input_columns': inputs,
        'digest': late_data.plain_identifier(named ~ ': digest', meta.get('digest', 'versions_digest')),
        'tie_breaker': late_data.identifier_list(meta.get('tie_breaker', inputs + series_key), named ~ ': tie_breaker'),
        'companions': late_data.companion_names(node, meta),
        'dimensions': dimensions,
        'source_tables': source_tables,
        'publish_thresholds': late_data.publish_thresholds(node, meta),
    } -%}
    {%- do cache.update({node.unique_id: pipeline}) -%}
    {{- return(pipeline) -}}
{% endmacro %}


{% macro pipeline_sizes(node, meta) %}
    {#- (window size, window slide, partition size) of a pipeline, checked: windows slide by a
        divisor of their size (the default, the size itself, makes them tumbling), and a window
        lies in exactly one partition (by its start: a multiple of the slide); and its
        meta.late_data must hold no setting the package does not know. -#}
    {%- for key in meta if key not in late_data.pipeline_keys() -%}
        {%- do exceptions.raise_compiler_error(
            "meta.late_data of model " ~ node.name ~ ": unknown setting " ~ key ~ " (known: " ~ late_data.pipeline_keys() | join(', ') ~ ")"
        ) -%}
    {%- endfor -%}
    {%- if 'session_gap_seconds' in meta -%}
        {#- Session windows: their bounds come from the data (late_data.pipeline_sessions). -#}
        {{- return((none, none, late_data.pipeline_number(node, meta, 'partition_size_seconds', 1))) -}}
    {%- endif -%}
    {%- set window_size = late_data.pipeline_number(node, meta, 'window_size_seconds', 1) -%}
    {%- set window_slide = late_data.whole_number(meta.get('window_slide_seconds', window_size), 'meta.late_data.window_slide_seconds of model ' ~ node.name, 1) -%}
    {%- set partition_size = late_data.pipeline_number(node, meta, 'partition_size_seconds', 1) -%}
    {%- if window_size % window_slide != 0 -%}
        {%- do exceptions.raise_compiler_error(
            "meta.late_data.window_slide_seconds of model " ~ node.name ~ "=" ~ window_slide ~ " must divide window_size_seconds="
            ~ window_size ~ ": every window starts at a multiple of the slide"
        ) -%}
    {%- endif -%}
    {%- if partition_size % window_slide != 0 -%}
        {%- do exceptions.raise_compiler_error(
            late_data.setting_name(node, meta, 'partition_size_seconds') ~ "=" ~ partition_size
            ~ " must be a multiple of " ~ ('window_size_seconds=' if window_slide == window_size else 'window_slide_seconds=') ~ window_slide
            ~ ": a window must lie in exactly one partition"
        ) -%}
    {%- endif -%}
    {{- return((window_size, window_slide, partition_size)) -}}
{% endmacro %}


{% macro pipeline_sessions(node, meta) %}
    {#- (session gap, maximum session length) of a pipeline, both none unless it sets
        session_gap_seconds: then its windows are sessions (docs/your-own-pipeline.md, "Sessions"),
        which window_size_seconds and window_slide_seconds cannot be set beside. -#}
    {%- if 'session_gap_seconds' not in meta -%}
        {%- if 'max_session_seconds' in meta -%}
            {%- do exceptions.raise_compiler_error(
                "meta.late_data.max_session_seconds of model " ~ node.name ~ " needs session_gap_seconds: it cuts session windows"
            ) -%}
        {%- endif -%}
        {{- return((none, none)) -}}
    {%- endif -%}
    {%- set clashing = ['window_size_seconds', 'window_slide_seconds'] | select('in', meta) | list -%}
    {%- if clashing -%}
        {%- do exceptions.raise_compiler_error(
            "meta.late_data of model " ~ node.name ~ ": session_gap_seconds and " ~ clashing | join(' and ')
            ~ " cannot be set together: a session's bounds come from its events, not from a window size"
        ) -%}
    {%- endif -%}
    {%- set gap = late_data.whole_number(meta['session_gap_seconds'], 'meta.late_data.session_gap_seconds of model ' ~ node.name, 1) -%}
    {%- set longest = none -%}
    {%- if meta.get('max_session_seconds') is not none -%}
        {%- set longest = late_data.whole_number(meta['max_session_seconds'], 'meta.late_data.max_session_seconds of model ' ~ node.name, 1) -%}
    {%- endif -%}
    {{- return((gap, longest)) -}}
{% endmacro %}


{% macro pipeline_keys() %}
    {{- return([
        'series_key', 'event_key', 'source_column', 'measures', 'digest', 'tie_breaker',
        'window_size_seconds', 'window_slide_seconds', 'session_gap_seconds', 'max_session_seconds', 'late_window_seconds', 'late_window_seconds_by_source', 'partition_size_seconds',
        'series_buckets', 'versions_table', 'too_late_table', 'quarantine_view', 'revisions_view', 'lateness_view', 'dimensions',
        'publish_thresholds',
    ]) -}}
{% endmacro %}


{% macro publish_thresholds(node, meta) %}
    {#- A pipeline's acceptance thresholds for publishing a staged backfill (meta.late_data.publish_thresholds):
        {max_changed_window_share: the most of the windows in the backfill's range it may change (above 0,
        at most 1), max_partition_change: the largest relative change of a partition's total (above 0),
        final_windows: allow or refuse revising final windows}; unset: no limit, allow. -#}
    {%- set given = meta.get('publish_thresholds', {}) -%}
    {%- set named = 'meta.late_data.publish_thresholds of model ' ~ node.name -%}
    {%- set known = ['max_changed_window_share', 'max_partition_change', 'final_windows'] -%}
    {%- if given is not mapping or given.keys() | reject('in', known) | list -%}
        {%- do exceptions.raise_compiler_error(named ~ " must be a mapping of " ~ known | join(', ') ~ ", not " ~ given) -%}
    {%- endif -%}
    {%- for key in ['max_changed_window_share', 'max_partition_change'] if given.get(key) is not none -%}
        {%- set value = given[key] -%}
        {%- if value is boolean or value is not number or value <= 0 or (key == 'max_changed_window_share' and value > 1) -%}
            {%- do exceptions.raise_compiler_error(
                named ~ ": " ~ key ~ "=" ~ value ~ " must be a number above 0" ~ (", at most 1" if key == 'max_changed_window_share' else "")
            ) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if given.get('final_windows', 'allow') not in ['allow', 'refuse'] -%}
        {%- do exceptions.raise_compiler_error(named ~ ": final_windows=" ~ given.final_windows ~ " must be allow or refuse") -%}
    {%- endif -%}
    {{- return({
        'max_changed_window_share': given.get('max_changed_window_share'),
        'max_partition_change': given.get('max_partition_change'),
        'final_windows': given.get('final_windows', 'allow'),
    }) -}}
{% endmacro %}


{% macro setting_name(node, meta, name) %}
    {#- How an error names setting `name` of a pipeline: its meta, or the project var it falls back to. -#}
    {{- return(('meta.late_data.' ~ name ~ ' of model ' ~ node.name) if name in meta else ('var ' ~ name)) -}}
{% endmacro %}


{% macro pipeline_number(node, meta, name, minimum) %}
    {#- A whole-number setting of a pipeline: its meta.late_data, else the project var, else the default. -#}
    {{- return(late_data.whole_number(
        meta[name] if name in meta else late_data.var_setting(name), late_data.setting_name(node, meta, name), minimum
    )) -}}
{% endmacro %}


{% macro identifier_list(value, name) %}
    {#- A setting holding one column name or a list of them, as a non-empty list of plain identifiers. -#}
    {%- set values = [value] if value is string else (value or []) | list -%}
    {%- if not values -%}
        {%- do exceptions.raise_compiler_error(name ~ " is missing: name one column or a list of them") -%}
    {%- endif -%}
    {%- for column in values -%}{%- do late_data.plain_identifier(name, column) -%}{%- endfor -%}
    {{- return(values) -}}
{% endmacro %}


{% macro parse_measures(node, measures) %}
    {#- The `measures` setting (name -> a measure, late_data.parse_measure) as a list of {name, kind,
        column, p, expression}, in the order given; exactly one count. -#}
    {%- set named = 'meta.late_data.measures of model ' ~ node.name -%}
    {%- if measures is not mapping or not measures -%}
        {%- do exceptions.raise_compiler_error(
            named ~ " is missing: map each result column to a measure (" ~ late_data.measure_kinds_help()
            ~ "), e.g. {reading_count: count, kwh_sum: {sum: kwh}}"
        ) -%}
    {%- endif -%}
    {%- set parsed = [] -%}
    {%- for name, spec in measures.items() -%}
        {%- do late_data.plain_identifier(named, name) -%}
        {%- do parsed.append(late_data.parse_measure(named ~ '.' ~ name, name, spec)) -%}
    {%- endfor -%}
    {%- set counts = parsed | selectattr('kind', 'equalto', 'count') | list -%}
    {%- if counts | length != 1 -%}
        {%- do exceptions.raise_compiler_error(
            named ~ " needs exactly one count (e.g. reading_count: count): a window whose count falls to 0 has vanished;"
            ~ " found " ~ counts | length
        ) -%}
    {%- endif -%}
    {{- return(parsed) -}}
{% endmacro %}


{% macro measure_kinds_help() %}
    {{- return('count, {sum: column}, {mean: column}, {min: column}, {max: column}, {count_distinct: column},'
        ~ ' {percentile: {column: column, p: 0.95}}, {median: column} or {expression: SQL}') -}}
{% endmacro %}


{% macro parse_measure(named, name, spec) %}
    {#- One measure of the `measures` setting (`named` names it in errors) as {name, kind, column, p,
        expression}: count; {sum|mean|min|max|count_distinct|median: column}; {percentile: {column,
        p}} with 0 < p < 1 (median is p 0.5); {expression: SQL over the other measures}. -#}
    {%- set kind = 'count' if spec == 'count' else ((spec.keys() | first) if spec is mapping and spec | length == 1 else none) -%}
    {%- if kind not in ('count', 'sum', 'mean', 'min', 'max', 'count_distinct', 'percentile', 'median', 'expression') -%}
        {%- do exceptions.raise_compiler_error(
            named ~ "=" ~ spec ~ " is not a measure: use " ~ late_data.measure_kinds_help()
        ) -%}
    {%- endif -%}
    {%- set argument = spec[kind] if spec is mapping else none -%}
    {%- set p = 0.5 if kind == 'median' else none -%}
    {%- if kind == 'percentile' -%}
        {%- if argument is not mapping or argument.keys() | sort | list != ['column', 'p'] -%}
            {%- do exceptions.raise_compiler_error(named ~ ".percentile=" ~ argument ~ " must be {column: <column>, p: <number between 0 and 1>}") -%}
        {%- endif -%}
        {%- set p = argument.p -%}
        {%- if p is boolean or p is not number or p <= 0 or p >= 1 -%}
            {%- do exceptions.raise_compiler_error(named ~ ".percentile.p=" ~ p ~ " must be a number above 0 and below 1, e.g. 0.95") -%}
        {%- endif -%}
        {%- set argument = argument.column -%}
    {%- endif -%}
    {{- return({
        'name': name,
        'kind': kind,
        'column': late_data.plain_identifier(named, argument) if kind not in ('count', 'expression') else none,
        'p': p,
        'expression': argument if kind == 'expression' else none,
    }) -}}
{% endmacro %}


{% macro pipeline_late_windows(node, meta, source_tables) %}
    {#- The late window of each of `source_tables` (those the pipeline's facts come from), in seconds:
        meta.late_data.late_window_seconds_by_source, then var late_window_seconds_by_source, then
        meta.late_data.late_window_seconds, then var late_window_seconds. A window is final when
        the largest has passed; with a source_column, each version counts within its own source's. -#}
    {%- set named = 'meta.late_data of model ' ~ node.name -%}
    {%- set from_meta = meta.get('late_window_seconds_by_source', {}) or {} -%}
    {%- set from_vars = late_data.var_setting('late_window_seconds_by_source') or {} -%}
    {%- for by_source, name in [(from_meta, named ~ ': late_window_seconds_by_source'), (from_vars, 'var late_window_seconds_by_source')]
        if by_source is not mapping -%}
        {%- do exceptions.raise_compiler_error(
            name ~ "=" ~ by_source ~ " must map source tables to seconds, e.g. {page_views: 7200}"
        ) -%}
    {%- endfor -%}
    {%- set default_name = late_data.setting_name(node, meta, 'late_window_seconds') -%}
    {%- set default = meta['late_window_seconds'] if 'late_window_seconds' in meta else late_data.var_setting('late_window_seconds') -%}
    {%- set windows = {} -%}
    {%- for source_table in source_tables or [none] -%}
        {%- if source_table in from_meta -%}
            {%- set seconds = late_data.whole_number(from_meta[source_table], 'meta.late_data.late_window_seconds_by_source.' ~ source_table ~ ' of model ' ~ node.name, 1) -%}
        {%- elif source_table in from_vars -%}
            {%- set seconds = late_data.whole_number(from_vars[source_table], 'var late_window_seconds_by_source.' ~ source_table, 1) -%}
        {%- else -%}
            {#- At least 1 s: with 0 a window would be final the moment it ends, before most of its rows land. -#}
            {%- set seconds = late_data.whole_number(default, default_name, 1) -%}
        {%- endif -%}
        {%- do windows.update({source_table or '': seconds}) -%}
    {%- endfor -%}
    {{- return(windows) -}}
{% endmacro %}


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
        a unit test (no graph), stand-in settings of the same shape from the project's vars, with
        `stand_in` over them (e.g. {'series_key': ['location']}). -#}
    {%- if not execute or 'nodes' not in graph -%}
        {%- set number = late_data.var_setting -%}
        {%- set settings = {
            'name': name, 'unique_id': 'model.' ~ name, 'schema': target.schema, 'alias': name, 'file_format': 'iceberg',
            'series_key': ['series_key'], 'event_key': ['event_id'], 'source_column': none,
            'window_size': number('window_size_seconds') | int, 'window_slide': number('window_size_seconds') | int,
            'partition_size': number('partition_size_seconds') | int,
            'series_buckets': number('series_buckets') | int, 'late_window': number('late_window_seconds') | int,
            'late_window_by_source': number('late_window_seconds_by_source') or {},
            'measures': [{'name': 'row_count', 'kind': 'count', 'column': none, 'p': none, 'expression': none}],
            'count_column': 'row_count', 'input_columns': [], 'digest': 'versions_digest', 'tie_breaker': ['series_key'],
            'companions': {'versions': name ~ '__versions', 'too_late': none, 'quarantine': none, 'revisions': none, 'lateness': none},
            'dimensions': [], 'source_tables': [],
        } -%}
        {%- do settings.update(stand_in) -%}
        {{- return(settings) -}}
    {%- endif -%}
    {%- for node in late_data.filter_nodes('pipeline') if node.name == name -%}
        {{- return(late_data.pipeline(node)) -}}
    {%- endfor -%}
    {%- do exceptions.raise_compiler_error("late-data: no late-data model named " ~ name ~ " (materialized='late_data')") -%}
{% endmacro %}


{% macro describe_pipelines() %}
    {#- For `dbt run-operation late_data.describe_pipelines` (what `late-data` reads): one log line
        per late-data pipeline of the project, `late-data pipeline {...}`, its settings as
        late_data.pipeline works them out, its relations, its histories and the source tables it
        reads; and first `late-data target {...}`: the target schema, which holds the run audit. -#}
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
        {%- do described.update({'relations': relations, 'histories': histories, 'sources': sources, 'tags': node.tags}) -%}
        {%- do log('late-data pipeline ' ~ tojson(described), info=true) -%}
    {%- endfor -%}
{% endmacro %}
