{% macro pipeline(node=none) %}
    {#- A late-data pipeline's settings (late_data.pipeline_settings) from its result model `node` (a
        graph node; default the model being built), worked out once per invocation. -#}
    {%- set node = node if node is not none else model -%}
    {%- set cache = late_data.invocation_state().setdefault('pipelines', {}) -%}
    {%- if node.unique_id not in cache -%}
        {%- do cache.update({node.unique_id: late_data.pipeline_settings(node)}) -%}
    {%- endif -%}
    {{- return(cache[node.unique_id]) -}}
{% endmacro %}


{% macro pipeline_settings(node) %}
    {#- The one definition of a pipeline's shape: from a result model `node` (a graph node, or a
        stand-in of the same fields, late_data.pipeline_named), its meta.late_data, with the
        project's vars and the package's defaults under them, checked (each error names the
        setting). Keys: docs/your-own-pipeline.md; late_data.pipeline_relations adds the relations
        of the result and its companions. -#}
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
    {%- set inputs = measures | selectattr('column') | map(attribute='column') | unique | list -%}
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
        'state_columns': ['burst_start'] if session_gap else [],
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
