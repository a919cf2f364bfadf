{% macro check_source_contracts() %}
    {#- For on-run-start of commands that build: every source table a selected late-data pipeline
        reads, directly or through other models, whose yml declares its columns' data_type must
        exist with those columns and types (other columns are read by nothing and allowed), or the
        run stops before it writes anything, naming the table, the column, the type found and the
        type expected. Nothing is cast leniently afterwards: a string column would turn 'abc' into
        a null that is still counted. Columns are read once per process (late_data.known_columns). -#}
    {%- set read = late_data.selected_ancestors() -%}
    {%- set problems = [] -%}
    {%- for source_node in graph.sources.values() if source_node.unique_id in read -%}
        {%- set declared = source_node.columns.values() | selectattr('data_type') | list -%}
        {%- if declared -%}
            {%- set relation = api.Relation.create(schema=source_node.schema, identifier=source_node.identifier, type='table') -%}
            {%- set found = dict(late_data.known_columns(relation)) -%}
            {%- if not found -%}
                {%- do problems.append(relation ~ ' does not exist (source ' ~ source_node.source_name ~ '.' ~ source_node.name ~ ')') -%}
            {%- endif -%}
            {%- for column in declared if found -%}
                {%- set expected = column.data_type | lower -%}
                {%- if column.name | lower not in found -%}
                    {%- do problems.append(relation ~ ' has no column ' ~ column.name ~ ' (expected ' ~ expected ~ ')') -%}
                {%- elif found[column.name | lower] != expected -%}
                    {%- do problems.append(relation ~ ' column ' ~ column.name ~ ' has type ' ~ found[column.name | lower] ~ ', expected ' ~ expected) -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if problems -%}
        {%- do exceptions.raise_compiler_error(
            'raw tables break their contract (column types declared in the sources), nothing was written: '
            ~ problems | join('; ')
        ) -%}
    {%- endif -%}
{% endmacro %}


{% macro selected_ancestors() %}
    {#- The unique ids of every node and source the late-data nodes selected in this invocation
        read, directly or through other nodes (the selected ones included). -#}
    {%- set seen = [] -%}
    {%- set queue = [] -%}
    {%- for node in late_data.filter_nodes('pipeline', true) + late_data.filter_nodes('history', true) -%}
        {%- do queue.append(node.unique_id) -%}
    {%- endfor -%}
    {%- for unique_id in queue if unique_id not in seen -%}
        {%- do seen.append(unique_id) -%}
        {%- set node = graph.nodes.get(unique_id) -%}
        {%- if node is not none -%}
            {%- do queue.extend(node.depends_on.nodes) -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(seen) -}}
{% endmacro %}


{% macro check_parents_built() %}
    {#- For on-run-start of commands that build: a view or table a selected late-data node reads but
        this invocation does not build must exist (dbt's relation cache, no statement), or the run
        stops saying what to build first, instead of failing deep in a model with
        TABLE_OR_VIEW_NOT_FOUND (e.g. `dbt build --select my_pipeline` on a warehouse its staging
        views were never built in). -#}
    {%- set missing = [] -%}
    {%- for unique_id in late_data.selected_ancestors() if unique_id not in selected_resources -%}
        {%- set node = graph.nodes.get(unique_id) -%}
        {%- if node is not none and node.resource_type in ('model', 'seed', 'snapshot') and node.config.materialized != 'ephemeral'
            and not late_data.relation_exists(api.Relation.create(schema=node.schema, identifier=node.alias)) -%}
            {%- do missing.append(node.schema ~ '.' ~ node.alias) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if missing -%}
        {%- do exceptions.raise_compiler_error(
            "late-data: this run reads " ~ missing | sort | join(', ') ~ ", which " ~ ('does' if missing | length == 1 else 'do')
            ~ " not exist yet and " ~ ('is' if missing | length == 1 else 'are') ~ " not selected: build the project"
            ~ " first (dbt build, or late-data schedule, whose first run builds everything), or select the"
            ~ " parents too (--select +<model>)"
        ) -%}
    {%- endif -%}
{% endmacro %}


{% macro check_settings() %}
    {#- For on-run-start: every setting of every late-data pipeline and selected history checked
        before any SQL runs, each error naming the setting and its value, so a bad setting never
        surfaces halfway through a run as a Spark error. -#}
    {#- Every source's schema reaches SQL as a name, whatever var or setting it comes from. -#}
    {%- for source_node in graph.sources.values() -%}
        {%- do late_data.plain_identifier('the schema of source ' ~ source_node.source_name, source_node.schema) -%}
    {%- endfor -%}
    {%- set source_tables = graph.sources.values() | map(attribute='name') | list -%}
    {%- set by_source = late_data.var_setting('late_window_seconds_by_source') or {} -%}
    {%- for source_table, seconds in (by_source.items() if by_source is mapping else []) -%}
        {%- if source_table not in source_tables -%}
            {%- do exceptions.raise_compiler_error(
                "var late_window_seconds_by_source." ~ source_table ~ ": no source table of that name (known: "
                ~ source_tables | sort | join(', ') ~ ")"
            ) -%}
        {%- endif -%}
        {%- do late_data.whole_number(seconds, 'var late_window_seconds_by_source.' ~ source_table, 1) -%}
    {%- endfor -%}
    {#- Every pipeline of the project, selected or not: a bad project-wide var is refused whatever runs. -#}
    {%- for node in late_data.filter_nodes('pipeline') -%}
        {%- do late_data.pipeline(node) -%}
    {%- endfor -%}
    {%- for node in late_data.filter_nodes('history', true) -%}
        {%- do late_data.check_history_config(node) -%}
        {%- do late_data.history_pipeline(node) -%}
    {%- endfor -%}
    {%- do late_data.write_delay_seconds() -%}
    {%- do late_data.reconcile_every_seconds() -%}
    {%- do late_data.broadcast_arrivals_max() -%}
    {%- do late_data.share_version_chain() -%}
    {%- do late_data.target_share() -%}
    {%- do late_data.run_time_value() -%}
    {%- do late_data.backfill() -%}
    {%- do late_data.is_reconciliation() -%}
    {%- if var('as_of', none) -%}
        {%- do late_data.parse_time(var('as_of'), 'as_of') -%}
    {%- endif -%}
{% endmacro %}
