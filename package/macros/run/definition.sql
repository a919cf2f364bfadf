{% macro pipeline_definition(pipeline) %}
    {#- What computes a pipeline's numbers, as {part: value}: its select (a digest of the model's
        code as late_data.code_digest normalizes it: formatting, comments and its config block left
        out), each setting that changes a window's value or its place, and `upstream`: every node
        and setting the select depends on (late_data.upstream_definition). A run records it in the
        audit (column `definition`); a run whose definition differs from the one its tables were
        built with is refused (late_data.check_definitions). Not in it: series_buckets (its own
        check), the companions' names, publish thresholds, relation names and the package's own
        macros. Worked out once per invocation. -#}
    {%- set cache = late_data.invocation_state().setdefault('definitions', {}) -%}
    {%- if pipeline.unique_id in cache -%}{{ return(cache[pipeline.unique_id]) }}{%- endif -%}
    {%- set node = graph.nodes.get(pipeline.unique_id) if execute else none -%}
    {%- set code = node.raw_code if node is not none and node.raw_code is defined else '' -%}
    {%- set dimensions = [] -%}
    {%- for dimension in pipeline.dimensions -%}
        {%- do dimensions.append([dimension.name, dimension.key, dimension.fact_key, dimension.valid_from, dimension.valid_to]) -%}
    {%- endfor -%}
    {%- set definition = {
        'select': late_data.code_digest(code) if code else none,
        'measures': tojson(pipeline.measures, sort_keys=true),
        'window': tojson([pipeline.window_size, pipeline.window_slide, pipeline.session_gap, pipeline.max_session, pipeline.partition_size]),
        'series_key': pipeline.series_key | join(', '),
        'event_key': pipeline.event_key | join(', '),
        'late_windows': tojson(pipeline.late_window_by_source, sort_keys=true),
        'dimensions': tojson(dimensions),
        'tie_breaker': pipeline.tie_breaker | join(', '),
        'source_column': pipeline.source_column,
        'upstream': late_data.upstream_definition(node) if node is not none else {},
    } -%}
    {%- do cache.update({pipeline.unique_id: definition}) -%}
    {{- return(definition) -}}
{% endmacro %}


{% macro upstream_definition(node) %}
    {#- What a pipeline's model (`node`, a graph node) reads and calls, down to its sources, as
        {label: digest}: what each model, snapshot and seed upstream of it contributes
        (late_data.node_parts), and the macros and vars the model's own code calls and reads.
        Sources count through the code that reads them; their relations do not. From the parsed
        project only: nothing is compiled or queried. -#}
    {%- set parts = late_data.node_parts(node, own=false) -%}
    {%- for unique_id in late_data.upstream_nodes(node) -%}
        {%- do parts.update(late_data.node_parts(graph.nodes[unique_id])) -%}
    {%- endfor -%}
    {{- return(parts) -}}
{% endmacro %}


{% macro upstream_nodes(node) %}
    {#- The unique ids of the models, snapshots and seeds `node` reads, directly or through others. -#}
    {%- set found, seen, queue = [], {}, node.depends_on.nodes | list -%}
    {%- for unique_id in queue if unique_id not in seen -%}
        {%- do seen.update({unique_id: true}) -%}
        {%- set upstream = graph.nodes.get(unique_id) -%}
        {%- if upstream is not none and upstream.resource_type in ('model', 'snapshot', 'seed') -%}
            {%- do found.append(unique_id) -%}
            {%- do queue.extend(upstream.depends_on.nodes) -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(found) -}}
{% endmacro %}


{% macro node_parts(node, own=true) %}
    {#- What one node contributes to the definitions of the pipelines downstream of it, as {label:
        digest}: with `own`, `model <name>` (or `snapshot <name>`) and the digest of its code
        (late_data.code_digest), or `seed <name>` and its file's checksum and column types; then
        `macro <name>` for each macro its code calls, directly or through other macros, but dbt's,
        its adapters' and this package's (machinery: an upgrade that computes the same numbers
        must not count), and `var <name>` for each var their code reads (the per-run vars left
        out), its value. What a deployed upstream model was built with is recorded the same way
        (late_data.upstream_audit_row). -#}
    {%- set parts = {} -%}
    {%- if node.resource_type == 'seed' -%}
        {%- if own -%}
            {%- do parts.update({'seed ' ~ node.name: local_md5(tojson([node.checksum.checksum, node.config.get('column_types') or {}], sort_keys=true))[:12]}) -%}
        {%- endif -%}
        {{- return(parts) -}}
    {%- endif -%}
    {%- if own -%}
        {%- do parts.update({node.resource_type ~ ' ' ~ node.name: late_data.code_digest(node.raw_code or '')}) -%}
    {%- endif -%}
    {%- set code_read, macros, seen = [node.raw_code or ''], node.depends_on.macros | list, {} -%}
    {%- for unique_id in macros if unique_id not in seen -%}
        {%- do seen.update({unique_id: true}) -%}
        {%- set package, name = unique_id.split('.')[1], unique_id.split('.')[2:] | join('.') -%}
        {%- set found = late_data._macro_named(package, name) if package not in ('dbt', 'late_data') and not package.startswith('dbt_') else none -%}
        {%- if found is not none -%}
            {%- do parts.update({'macro ' ~ name: late_data.code_digest(found.macro_sql)}) -%}
            {%- do code_read.append(found.macro_sql) -%}
            {%- do macros.extend(found.depends_on.macros) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for code in code_read -%}
        {%- for name in modules.re.findall('\\bvar\\(\\s*[\'"]([^\'"]+)[\'"]', code)
            if name not in ['run_time', 'backfill', 'as_of', 'reconcile', 'late_data_explain'] -%}
            {%- do parts.update({'var ' ~ name: tojson(var(name, none), sort_keys=true)}) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{- return(parts) -}}
{% endmacro %}


{% macro _macro_named(package, name) %}
    {#- The parsed macro `name` of `package` (its macro_sql and depends_on), or none. -#}
    {%- set namespace = context.get(package) if package != project_name else none -%}
    {%- set found = namespace.get(name) if namespace is mapping else context.get(name) -%}
    {{- return(found.macro if found is not none and found.macro is defined else none) -}}
{% endmacro %}


{% macro code_digest(code) %}
    {#- 12 hex digits of a model's or macro's code with what does not change what it computes left
        out: Jinja comments, its config block, SQL comments, letter case and whitespace outside
        string literals (which are kept as they are). So a reformatted model (keywords in upper
        case, lines broken elsewhere, comments added) keeps its digest. -#}
    {%- set re = modules.re -%}
    {%- set code = re.sub('(?s)\\{#.*?#\\}', ' ', code) -%}
    {%- set code = re.sub('(?s)\\{\\{\\s*config\\(.*?\\)\\s*\\}\\}', ' ', code) -%}
    {%- set text, literals = [], [] -%}
    {%- for token in re.findall('--[^\\n]*|/\\*[\\s\\S]*?\\*/|\'(?:[^\'\\\\]|\\\\.)*\'|"(?:[^"\\\\]|\\\\.)*"|[^\'"/-]+|[\\s\\S]', code) -%}
        {%- if token.startswith('--') or token.startswith('/*') -%}
            {%- do text.append(' ') -%}
        {%- elif token.startswith("'") or token.startswith('"') -%}
            {%- do text.append(' \x00 ') -%}
            {%- do literals.append(token) -%}
        {%- else -%}
            {%- do text.append(token.lower()) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set normalized = re.sub('\\s*([(),;=<>+*/|{}%.\x00-])\\s*', '\\1', re.sub('\\s+', ' ', text | join(''))) | trim -%}
    {%- set normalized = normalized ~ '\x01' ~ literals | join('\x01') -%}
    {{- return(local_md5(normalized)[:12]) -}}
{% endmacro %}


{% macro legacy_select_digest(code) %}
    {#- How the package digested a select before the definition covered the upstream (late_data
        0.2.0): runs recorded then are compared through it, so an upgrade forces no rebuild. -#}
    {%- set re = modules.re -%}
    {%- set code = re.sub('(?s)\\{#.*?#\\}', ' ', code) -%}
    {%- set code = re.sub('(?s)\\{\\{\\s*config\\(.*?\\)\\s*\\}\\}', ' ', code) -%}
    {%- set code = re.sub('--[^\\n]*', ' ', code) -%}
    {%- set code = re.sub('\\s+', ' ', code) | trim -%}
    {{- return(local_md5(code) if code else none) -}}
{% endmacro %}


{% macro definition_json(pipeline) %}
    {#- late_data.pipeline_definition as the audit stores it: JSON, keys sorted. -#}
    {{- return(tojson(late_data.pipeline_definition(pipeline), sort_keys=true)) -}}
{% endmacro %}


{% macro definition_changes(recorded, current, legacy_select=none) %}
    {#- Each change between a `recorded` definition and the `current` one, named as `late-data plan`
        names it (late_data.project.definitions holds the same rules for Python): a part of the
        pipeline's own ('select', 'measures', 'window', ...), or an upstream node's: "upstream: the
        select of <model>", "upstream: seed <seed> (contents)", "upstream: macro <macro>",
        "var <var>", "upstream: <node> added" or "... no longer read". A definition recorded before
        the upstream was part of it (no `upstream`) is compared by its parts then, its select
        through `legacy_select` (late_data.legacy_select_digest). -#}
    {%- set changed = [] -%}
    {%- set legacy = 'upstream' not in recorded -%}
    {%- for part in current | sort if part != 'upstream' -%}
        {%- set now = legacy_select if legacy and part == 'select' else current[part] -%}
        {%- if recorded.get(part) != now -%}{%- do changed.append(part) -%}{%- endif -%}
    {%- endfor -%}
    {%- if not legacy -%}
        {%- set before, after = recorded.upstream, current.upstream -%}
        {%- for label in (before.keys() | list + after.keys() | list) | unique | sort if before.get(label) != after.get(label) -%}
            {%- do changed.append(late_data._upstream_change(label, label not in before, label not in after)) -%}
        {%- endfor -%}
    {%- endif -%}
    {{- return(changed) -}}
{% endmacro %}


{% macro _upstream_change(label, added, removed) %}
    {%- set kind, name = label.split(' ', 1) -%}
    {%- if kind == 'var' -%}{{ return('var ' ~ name) }}{%- endif -%}
    {%- if added -%}{{ return('upstream: ' ~ name ~ ' added') }}{%- endif -%}
    {%- if removed -%}{{ return('upstream: ' ~ name ~ ' no longer read') }}{%- endif -%}
    {{- return('upstream: ' ~ {'model': 'the select of ', 'snapshot': 'the select of ', 'seed': 'seed ', 'macro': 'macro '}[kind]
        ~ name ~ (' (contents)' if kind == 'seed' else '')) -}}
{% endmacro %}


{% macro check_definitions(nodes) %}
    {#- For on-run-start of commands that build: no silent mix. A run that adds to a pipeline's
        tables (scheduled, reconcile, backfill) with a definition other than the one its last
        scheduled, reconcile or full-refresh run recorded is refused before anything is written
        (its upstream views included), naming each selected pipeline that changed, each change,
        and the rebuilds that apply it. Tables whose runs recorded no definition (built before the
        audit had one) are taken as they are; their next run records it. -#}
    {%- set refused, deploy = [], [] -%}
    {%- for node in nodes | sort(attribute='name') if late_data.is_pipeline(node) -%}
        {%- set pipeline = late_data.pipeline(node) -%}
        {%- set stored = late_data.last_run(late_data.pipeline_relation(pipeline)).get('definition') -%}
        {%- if stored is not none and late_data.builds_incrementally(pipeline) -%}
            {%- set recorded = fromjson(stored) -%}
            {%- set changed = late_data.definition_changes(recorded, late_data.pipeline_definition(pipeline),
                late_data.legacy_select_digest(node.raw_code or '')) -%}
            {%- for name in late_data.deployed_changes(node, recorded) -%}
                {%- do changed.append('upstream: ' ~ name ~ ' as deployed') -%}
                {%- do deploy.append(name) -%}
            {%- endfor -%}
            {%- if changed -%}{%- do refused.append((pipeline, changed)) -%}{%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if not refused -%}{{ return('') }}{%- endif -%}
    {%- set named = [] -%}
    {%- for pipeline, changed in refused -%}
        {%- do named.append(pipeline.alias ~ ' changed since its tables were built (' ~ changed | join(', ') ~ ')') -%}
    {%- endfor -%}
    {%- set several = refused | length > 1 -%}
    {#- An upstream change is applied through the upstream models too: a rebuild of the pipeline
        alone would read them as last deployed. -#}
    {%- set rebuilt = [] -%}
    {%- for pipeline, changed in refused -%}
        {%- set upstream = [] -%}
        {%- for change in changed if change.startswith('upstream: ') or change.startswith('var ') -%}
            {%- do upstream.append(change) -%}
        {%- endfor -%}
        {%- do rebuilt.append(('+' if upstream else '') ~ pipeline.name ~ '+') -%}
    {%- endfor -%}
    {%- do exceptions.raise_compiler_error(
        "late-data: the definition of " ~ named | join('; the definition of ')
        ~ ": a run would mix two definitions in one table, so nothing was written. Rebuild "
        ~ ('them from their' if several else 'it from its') ~ " raw sources in a stage (late-data plan, then late-data apply),"
        ~ " or in place: dbt build --full-refresh --select " ~ rebuilt | join(' ')
        ~ ('. Upstream models deployed from other code than the tables were built with: build them from the code'
            ~ ' once it is what the tables were built with (dbt build --select ' ~ deploy | unique | join(' ') ~ ')' if deploy else '')
    ) -%}
{% endmacro %}


{% macro deployed_changes(node, recorded) %}
    {#- The names of the models, snapshots and seeds upstream of a pipeline's model (`node`) that a
        run reads as deployed (this invocation does not build them, and they are not ephemeral)
        and whose last build, as the audit recorded it (late_data.upstream_audit_row), used code,
        macros, vars or seed contents other than the `recorded` definition's: reading them would
        mix two definitions as surely as a change of the code. None for a definition recorded
        before the upstream was part of it, or an upstream node no audited build made. -#}
    {%- set found = [] -%}
    {%- if 'upstream' not in recorded -%}{{ return(found) }}{%- endif -%}
    {%- for unique_id in late_data.upstream_nodes(node) if unique_id not in selected_resources -%}
        {%- set upstream = graph.nodes[unique_id] -%}
        {%- set deployed = late_data.last_runs().get(unique_id, {}).get('definition')
            if upstream.config.materialized != 'ephemeral' else none -%}
        {%- for label, digest in (fromjson(deployed).items() if deployed else []) if recorded.upstream.get(label) != digest -%}
            {%- if upstream.name not in found -%}{%- do found.append(upstream.name) -%}{%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {{- return(found) -}}
{% endmacro %}


{% macro package_version() %}
    {#- This package's version (package/dbt_project.yml; a test keeps them equal), recorded with every
        run for lineage: an upgrade changes no definition. -#}
    {{- return('0.2.0') -}}
{% endmacro %}
