{% macro pipeline_dimensions(node, meta) %}
    {#- The dimensions a pipeline's select joins at event time (meta.late_data.dimensions: name ->
        {key, fact_key, valid_from, valid_to}), checked, as [{name, relation, key, fact_key,
        valid_from, valid_to, applied}]: `name` a snapshot, model, seed or source table the model
        reads; `key` its key column; `fact_key` the model's column holding it (default: key);
        `valid_from`, `valid_to` its interval columns (default dbt_valid_from, dbt_valid_to);
        `applied` the companion table of the rows each run applied. A snapshot upstream of the
        model that is not declared is refused (late_data.check_undeclared_dimensions). -#}
    {%- set declared = meta.get('dimensions', {}) or {} -%}
    {%- set named = 'meta.late_data.dimensions of model ' ~ node.name -%}
    {%- if declared is not mapping -%}
        {%- do exceptions.raise_compiler_error(named ~ "=" ~ declared ~ " must map each dimension (a snapshot, model, seed or source table the model joins) to {key: <column>}") -%}
    {%- endif -%}
    {%- set dimensions = [] -%}
    {%- for name, spec in declared.items() -%}
        {%- set where = named ~ '.' ~ name -%}
        {%- if spec is not mapping or 'key' not in spec or spec.keys() | reject('in', ['key', 'fact_key', 'valid_from', 'valid_to']) | list -%}
            {%- do exceptions.raise_compiler_error(where ~ "=" ~ spec ~ " must be {key: <column>} with optional fact_key, valid_from, valid_to") -%}
        {%- endif -%}
        {%- do dimensions.append({
            'name': late_data.plain_identifier(named, name),
            'relation': late_data.upstream_relation(node, name, where),
            'key': late_data.plain_identifier(where ~ '.key', spec.key),
            'fact_key': late_data.plain_identifier(where ~ '.fact_key', spec.get('fact_key', spec.key)),
            'valid_from': late_data.plain_identifier(where ~ '.valid_from', spec.get('valid_from', 'dbt_valid_from')),
            'valid_to': late_data.plain_identifier(where ~ '.valid_to', spec.get('valid_to', 'dbt_valid_to')),
            'applied': late_data.plain_identifier(where, node.alias ~ '__applied_' ~ name),
        }) -%}
    {%- endfor -%}
    {%- do late_data.check_undeclared_dimensions(node, dimensions) -%}
    {{- return(dimensions) -}}
{% endmacro %}


{% macro upstream_relation(node, name, where) %}
    {#- The relation (rendered) of the node or source table called `name` that `node` reads,
        directly or through other models; refused, naming `where`, when it reads none. -#}
    {%- set seen, queue = [], node.depends_on.nodes | list -%}
    {%- for unique_id in queue if unique_id not in seen -%}
        {%- do seen.append(unique_id) -%}
        {%- set upstream = graph.nodes.get(unique_id) or graph.sources.get(unique_id) -%}
        {%- if upstream is not none and upstream.name == name -%}
            {{- return(api.Relation.create(schema=upstream.schema, identifier=upstream.get('alias') or upstream.identifier).render()) -}}
        {%- endif -%}
        {%- if unique_id in graph.nodes -%}
            {%- do queue.extend(graph.nodes[unique_id].depends_on.nodes) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do exceptions.raise_compiler_error(where ~ ": model " ~ node.name ~ " reads no snapshot, model, seed or source table named " ~ name) -%}
{% endmacro %}


{% macro check_undeclared_dimensions(node, dimensions) %}
    {#- A late-data model that reads a dbt snapshot (an SCD2 table: a dimension joined at event
        time) must declare it in meta.late_data.dimensions: otherwise a change of a past interval
        would leave the windows of the facts it reaches silently wrong. -#}
    {%- set declared = dimensions | map(attribute='name') | list -%}
    {%- set seen, queue = [], node.depends_on.nodes | list -%}
    {%- for unique_id in queue if unique_id not in seen -%}
        {%- do seen.append(unique_id) -%}
        {%- set upstream = graph.nodes.get(unique_id) -%}
        {%- if upstream is not none and upstream.resource_type == 'snapshot' and upstream.name not in declared
            and not late_data.is_history(upstream) -%}
            {%- do exceptions.raise_compiler_error(
                "late-data model " ~ node.name ~ " reads snapshot " ~ upstream.name ~ ", which it does not declare in"
                ~ " meta.late_data.dimensions: declare it ({" ~ upstream.name ~ ": {key: <its key column>}}) so a change"
                ~ " of one of its intervals re-versions the facts it reaches (docs/your-own-pipeline.md, Dimensions)"
            ) -%}
        {%- endif -%}
        {%- if upstream is not none -%}
            {%- do queue.extend(upstream.depends_on.nodes) -%}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}


{% macro applied_relation(pipeline, dimension) %}
    {{- return(api.Relation.create(schema=pipeline.schema, identifier=dimension.applied, type='table')) -}}
{% endmacro %}


{% macro dimension_changes(pipeline, dimension) %}
    {#- A select of a dimension's rows that changed since the pipeline last applied it: `new` rows
        (inserted, or a closed or corrected interval as it is now) and `gone` rows (as they were
        applied), compared on the whole row, each with its key (as text), valid_from, valid_to
        and row_json. -#}
    {%- set applied = late_data.applied_relation(pipeline, dimension) %}
    with

    current_rows as (

        select distinct
            cast({{ dimension.key }} as string) as dimension_key,
            {{ dimension.valid_from }} as valid_from,
            {{ dimension.valid_to }} as valid_to,
            to_json(struct(*)) as row_json
        from {{ dimension.relation }}

    ),

    applied_rows as (

        select dimension_key, valid_from, valid_to, row_json
        from {{ applied }}
        where applied_to is null

    )

    select 'new' as change, * from current_rows
    left anti join applied_rows on current_rows.row_json = applied_rows.row_json
    union all
    select 'gone' as change, * from applied_rows
    left anti join current_rows on applied_rows.row_json = current_rows.row_json
{%- endmacro %}


{% macro apply_dimensions(pipeline, sql, columns) %}
    {#- Before a run of a pipeline loads its arrivals: for each of its dimensions, the rows that
        changed since its last run (late_data.dimension_changes; one query when none did)
        re-version the facts they reach (late_data.dimension_versions, appended to the versions
        table, stamped with the run time) and are recorded as applied. A first build or
        --full-refresh loads every fact with the dimension as it is and only records it. -#}
    {%- set versions = late_data.pipeline_relation(pipeline, 'versions') -%}
    {%- set incremental = late_data.builds_incrementally(pipeline) -%}
    {%- for dimension in pipeline.dimensions -%}
        {%- set applied = late_data.applied_relation(pipeline, dimension) -%}
        {%- if not late_data.relation_exists(applied) -%}
            {%- do adapter.execute('create table ' ~ applied ~ ' (dimension_key string, valid_from timestamp, valid_to timestamp,'
                ~ ' row_json string, applied_from timestamp, applied_to timestamp) using ' ~ pipeline.file_format
                ~ ' ' ~ late_data.tblproperties(pipeline.file_format)) -%}
            {%- do late_data.forget_relation(applied) -%}
        {%- endif -%}
        {%- set changes = late_data.dimension_changes(pipeline, dimension) -%}
        {%- set found = run_query('select count(*), to_json(collect_set(dimension_key)), min(valid_from) from (' ~ changes ~ ')').rows[0] -%}
        {%- if found[0] > 0 -%}
            {%- if incremental -%}
                {%- set reversions = late_data.dimension_versions(pipeline, dimension, sql, columns, fromjson(found[1]), found[2]) -%}
                {%- do late_data.append_dimension_versions(versions, reversions) -%}
            {%- endif -%}
            {%- call statement('apply_' ~ dimension.name) -%}{{ late_data.merge_applied(applied, changes) }}{%- endcall -%}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}


{% macro merge_applied(applied, changes) %}
    {#- The rows a run applied (`changes`, late_data.dimension_changes): a gone row's applied
        version closed at the run time, a new row opened from it. -#}
    merge into {{ applied }} as applied
    using (
        {{ changes }}
    ) as changed
    on applied.row_json = changed.row_json and applied.applied_to is null and changed.change = 'gone'
    when matched then update set applied_to = {{ late_data.run_time() }}
    when not matched and changed.change = 'new' then insert (dimension_key, valid_from, valid_to, row_json, applied_from, applied_to)
        values (changed.dimension_key, changed.valid_from, changed.valid_to, changed.row_json, {{ late_data.run_time() }}, null)
{%- endmacro %}


{% macro dimension_versions(pipeline, dimension, sql, columns, keys, lower) %}
    {#- A select of the new versions a dimension change makes: the model's rows (`sql`, its
        `columns`) of the facts whose key is among `keys` (the changed rows', as text) and whose
        event time is at or after `lower` (the earliest changed interval's start), for the fact
        delivery that each event's newest version comes from, where they now differ from that
        version (another series key or measure value, or quarantine reason); stamped with the
        run time as their arrival. Only the facts of the changed keys are read. -#}
    {%- set versions = late_data.pipeline_relation(pipeline, 'versions') -%}
    {%- set key_list = keys | map('string') | map('replace', "\\", "\\\\") | map('replace', "'", "\\'") | list -%}
    {%- set reached -%}
        cast({{ dimension.fact_key }} as string) in ('{{ key_list | join("', '") }}')
        {%- if lower is not none %} and event_time >= {{ late_data.timestamp_literal(lower) }}{% endif %}
    {%- endset -%}
    {%- set compared = [] -%}
    {%- for name, type in columns if name not in ('ingested_at', 'quarantine_reason') -%}{%- do compared.append(name) -%}{%- endfor -%}
    {%- set chain_order = ['ingested_at', 'event_time'] + pipeline.tie_breaker %}
    with

    reached_versions as (

        {{ late_data.delivered_versions(pipeline, 'select * from (' ~ sql ~ ') as model_rows where ' ~ reached, columns) }}

    ),

    newest_versions as (

        select * from (
            select
                *,
                row_number() over (
                    partition by {{ pipeline.event_key | join(', ') }}
                    order by {{ chain_order | join(' desc, ') }} desc
                ) as newness
            from {{ versions }}
            where {{ reached }}
        )
        where newness = 1

    )

    -- Copies of one delivery (an older versions table may hold them) make one version.
    select distinct
        {%- for name in compared + ['quarantine_reason', 'loaded_at', 'source_ingested_at'] %}
        reached_versions.{{ name }},
        {%- endfor %}
        {{ late_data.run_time() }} as ingested_at
    from reached_versions
    inner join newest_versions
        on {% for key in pipeline.event_key %}reached_versions.{{ key }} = newest_versions.{{ key }} and {% endfor -%}
        reached_versions.source_ingested_at = newest_versions.source_ingested_at
    where not (
        {%- for name in compared + ['quarantine_reason'] %}
        reached_versions.{{ name }} <=> newest_versions.{{ name }}{{ ' and' if not loop.last }}
        {%- endfor %}
    )
{%- endmacro %}


{% macro append_dimension_versions(versions, sql) %}
    {#- The versions a dimension change made, appended to the versions table (recorded as
        dimension_versions, which the run's rows_written includes). -#}
    {%- set staged = late_data.stage(versions, sql) -%}
    {%- set rows = run_query('select count(*) from ' ~ staged).columns[0].values()[0] | int -%}
    {%- do late_data.record_write(versions, {'dimension_versions': rows}) -%}
    {%- if rows > 0 -%}
        {%- call statement('dimension_versions') -%}
            insert into {{ versions }} select {{ late_data.column_list(versions) }} from {{ staged }}
        {%- endcall -%}
    {%- endif -%}
    {%- do late_data.unstage(staged) -%}
{% endmacro %}
