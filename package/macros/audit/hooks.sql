{% macro on_run_start() %}
    {#- The project's on-run-start hook (dbt_project.yml: on-run-start calls late_data.on_run_start()).
        Before anything runs: every late-data setting checked; for commands that build, the
        sources' contracts, the parents that must exist, the run audit (created or given the
        columns it lacks), the run time (only forward) and each pipeline's definition (a change
        since its tables were built, upstream too, is refused before anything is built). Renders
        no SQL; a project or an invocation without late-data nodes gets nothing done. -#}
    {%- if not execute or not late_data.filter_nodes('pipeline') -%}{{ return('') }}{%- endif -%}
    {%- do late_data.invocation_state().update({'started': true}) -%}
    {%- do late_data.check_settings() -%}
    {%- set building = flags.WHICH in ('run', 'build', 'snapshot') -%}
    {%- set nodes = late_data.selected_late_data_nodes() -%}
    {%- if building and nodes -%}
        {%- do late_data.check_source_contracts() -%}
        {%- do late_data.check_parents_built() -%}
    {%- endif -%}
    {#- Any build may record one: a model upstream of a pipeline records what it was built with. -#}
    {%- if nodes or building or flags.WHICH == 'test' -%}
        {%- do late_data.prepare_run_audit() -%}
    {%- endif -%}
    {%- if building and nodes and not late_data.is_explain() -%}
        {%- do late_data.check_run_time_moves_forward(nodes) -%}
        {%- do late_data.check_definitions(nodes) -%}
    {%- endif -%}
    {{- return('') -}}
{% endmacro %}


{% macro on_run_end(results) %}
    {#- The project's on-run-end hook (dbt_project.yml: on-run-end calls late_data.on_run_end(results)):
        one audit row per table of every late-data node that ran (late_data.record_runs), and
        what a warm process keeps of the warehouse brought up to date. Renders no SQL. -#}
    {%- if not execute or not late_data.filter_nodes('pipeline') -%}{{ return('') }}{%- endif -%}
    {%- do late_data.record_runs(results) -%}
    {#- A chain staged for a listing that did not run (its history failed, or was not reached). -#}
    {%- for unique_id in late_data.invocation_state().get('chains', {}).keys() | list -%}
        {%- do late_data.drop_chain(unique_id) -%}
    {%- endfor -%}
    {{- return('') -}}
{% endmacro %}


{% macro selected_late_data_nodes() %}
    {#- The late-data pipelines and histories this invocation builds. -#}
    {{- return(late_data.filter_nodes('pipeline', true) + late_data.filter_nodes('history', true)) -}}
{% endmacro %}


{% macro node_tables(node) %}
    {#- The tables a late-data node writes, as [(relation, role, pipeline)]: a pipeline its versions
        table ('versions') and result ('windows'); a history itself ('history') and its pipeline's
        too-late listing ('too_late_rows', none in a backfill). -#}
    {%- if late_data.is_pipeline(node) -%}
        {%- set pipeline = late_data.pipeline(node) -%}
        {{- return([
            (late_data.pipeline_relation(pipeline, 'versions'), 'versions', pipeline),
            (late_data.pipeline_relation(pipeline), 'windows', pipeline),
        ]) -}}
    {%- endif -%}
    {%- set pipeline = late_data.history_pipeline(node) -%}
    {%- set tables = [(api.Relation.create(schema=node.schema, identifier=node.alias, type='table'), 'history', pipeline)] -%}
    {%- set listing = late_data.pipeline_relation(pipeline, 'too_late') -%}
    {%- if listing is not none and not late_data.backfill() -%}
        {%- do tables.append((listing, 'too_late_rows', pipeline)) -%}
    {%- endif -%}
    {{- return(tables) -}}
{% endmacro %}
