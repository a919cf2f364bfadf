{% macro shared_chain(pipeline, plan) %}
    {#- The name of the view (global_temp.<versions>__chain_<invocation>) in which a pipeline's result
        stages its version chain for its too-late listing in this invocation, or none when the
        listing works its chain out itself. Shared when both read the same versions: a scheduled
        run, the listing last written at the result's previous run, a history snapshot of the
        pipeline selected. A global temporary view, because dbt opens a Thrift session per node
        and a global one is seen by every session of the Spark application (the Thrift Server's,
        or the embedded one). The listing then filters the staged rows instead of scanning and
        chaining the versions a second time. Never with var share_version_chain false. -#}
    {%- if plan.mode != 'delta' or late_data.backfill() or not late_data.share_version_chain()
        or late_data.pipeline_relation(pipeline, 'too_late') is none
        or not late_data.pipeline_histories(pipeline, selected_only=true)
        or late_data.listing_since(pipeline) != plan.arrived_since -%}
        {{- return(none) -}}
    {%- endif -%}
    {{- return('global_temp.' ~ late_data.invocation_view_name(pipeline.companions.versions, 'chain')) -}}
{% endmacro %}


{% macro staged_chain(pipeline) %}
    {#- The view late_data.shared_chain named, once the pipeline's result staged its chain in this
        invocation (or explained doing so); none otherwise. -#}
    {{- return(late_data.invocation_state().get('chains', {}).get(pipeline.unique_id)) -}}
{% endmacro %}


{% macro stage_chain(pipeline, chain, sql) %}
    {#- Stages the version chain `sql` of a pipeline's result as the cached view `chain` for its
        too-late listing (late_data.shared_chain); remembered for the listing and for on-run-end,
        which drops one the listing did not get to. In `late-data explain` its SQL is logged. -#}
    {%- if late_data.is_explain() -%}
        {%- do late_data.explain_step('chain', api.Relation.create(identifier=chain, type='view'), sql) -%}
    {%- else -%}
        {%- do adapter.execute('create global temporary view ' ~ chain.split('.')[-1] ~ ' as ' ~ sql) -%}
        {#- Lazy: the result's query, which reads it next, computes and caches it in the same pass. -#}
        {%- do adapter.execute('cache lazy table ' ~ chain) -%}
    {%- endif -%}
    {%- do late_data.invocation_state().setdefault('chains', {}).update({pipeline.unique_id: chain}) -%}
{% endmacro %}


{% macro drop_chain(unique_id) %}
    {#- Drops the version chain staged for the pipeline whose result is `unique_id`
        (late_data.stage_chain), which frees its cached rows, if there is one. -#}
    {%- set chain = late_data.invocation_state().get('chains', {}).pop(unique_id, none) -%}
    {%- if chain is not none and not late_data.is_explain() -%}
        {%- do late_data.unstage(chain) -%}
    {%- endif -%}
{% endmacro %}
