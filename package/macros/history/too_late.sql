{% macro too_late_versions(version_counts, pipeline, since) %}
    {#- A select of the too-late entries of the versions in `version_counts` that arrived after
        `since` (the listing's previous run; every version when it is built from scratch): one per
        version and window it could not change, that window's start (missed_window_start) and
        final moment (missed_final_at), and why (too_late_reason): `replaces_final_version` (it
        replaces a version whose window was final when it arrived: that window keeps the old
        version), `arrived_after_final` (its own window was final when it arrived: a new event, or
        a correction that moved an event into a final window) or `dimension_change_after_final`
        (either, for a version a dimension change made). A correction that moved an event out of
        one final window into another misses both. On sliding windows each window offset is
        chained apart. version_id hashes what identifies a version and the window it missed. -#}
    {%- set identity = [] -%}
    {%- for column in pipeline.event_key + ['ingested_at', 'event_time'] + pipeline.input_columns + pipeline.series_key
        if column not in identity -%}
        {%- do identity.append(column) -%}
    {%- endfor -%}
    {#- Null-safe: the first version of an event replaces none. -#}
    {%- set replaces = 'coalesce(ingested_at > replaced_final_at, false)' -%}
    {%- set arrives = 'ingested_at > version_final_at and not (' ~ replaces ~ ' and replaced_window_start = window_start)' %}
    with

    late_versions as (

        select * from {{ version_counts }}
        where {{ late_data.late_version(since) }}

    ),

    replaced_versions as (

        {{ late_data.replaced_versions('late_versions', pipeline) }}

    )

    select
        sha2(concat_ws('|', {% for column in identity %}cast({{ column }} as string), {% endfor %}cast(missed.window_start as string)), 256)
            as version_id,
        *,
        missed.window_start as missed_window_start,
        missed.final_at as missed_final_at,
        {%- if pipeline.dimensions %}
        if(ingested_at != source_ingested_at, 'dimension_change_after_final', missed.reason) as too_late_reason,
        {%- else %}
        missed.reason as too_late_reason,
        {%- endif %}
        -- Whole seconds, rounded up, of the exact (microsecond) difference: at least 1 for every entry.
        cast(ceil((unix_micros(ingested_at) - unix_micros(missed.final_at)) / 1000000.0) as bigint) as seconds_after_final
    from replaced_versions
    lateral view explode(array(
        if({{ replaces }}, named_struct(
            'window_start', replaced_window_start, 'final_at', replaced_final_at, 'reason', 'replaces_final_version'
        ), null),
        if({{ arrives }}, named_struct('window_start', window_start, 'final_at', version_final_at, 'reason', 'arrived_after_final'), null)
    )) missed_windows as missed
    where missed is not null
{%- endmacro %}


{% macro has_late_versions(pipeline) %}
    {#- Whether the version chain the pipeline's result staged in this invocation
        (late_data.staged_chain) holds a version its too-late listing would look at
        (late_data.late_version): without one, the listing has nothing to list. One count over the
        cached chain. -#}
    {%- set found = run_query(
        'select count(*) from ' ~ late_data.staged_chain(pipeline) ~ ' where ' ~ late_data.late_version(late_data.listing_since(pipeline))
    ).columns[0].values()[0] | int -%}
    {{- return(found > 0) -}}
{% endmacro %}


{% macro late_version(since) %}
    {#- SQL predicate over chained versions: the ones a too-late listing looks at, which arrived after
        their own window's final moment or their predecessor's, and (with `since`, the listing's
        previous run) were loaded or stamped after it. -#}
    {%- set late = '(ingested_at > version_final_at or coalesce(ingested_at > previous_version_final_at, false))' -%}
    {%- if since is none -%}{{ return(late) }}{%- endif -%}
    {{- return(late ~ ' and (loaded_at > ' ~ late_data.timestamp_literal(since) ~ ' or ingested_at > ' ~ late_data.timestamp_literal(since) ~ ')') -}}
{% endmacro %}


{% macro replaced_versions(late_versions, pipeline) %}
    {#- A select of `late_versions` (chained versions) with the window (replaced_window_start) and
        final moment (replaced_final_at) of the version each replaces: its predecessor in the
        chain, or, when the chain does not reach back to it (it arrived before the run's horizon),
        the latest earlier version of its event in the versions table, looked up by the event keys
        of those late versions only. Null for the first version of an event. -#}
    {%- set chain_keys = pipeline.event_key + (['window_offset'] if pipeline.window_slide < pipeline.window_size else []) -%}
    {%- set chain_order = ['ingested_at', 'event_time'] + pipeline.tie_breaker -%}
    {%- set matched = (chain_keys + chain_order) | unique | list -%}
    {%- set unreached -%}
        (
            select earlier.* from {{ late_data.pipeline_relation(pipeline, 'versions') }} as earlier
            left semi join (select * from {{ late_versions }} where previous_version_final_at is null) as late
                on {% for key in pipeline.event_key %}earlier.{{ key }} = late.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
            where earlier.quarantine_reason is null and earlier.ingested_at <= {{ late_data.run_time() }}
        ) as unreached_versions
    {%- endset %}
    select
        late.*,
        coalesce(late.previous_window_start, beyond_chain.replaced.window_start) as replaced_window_start,
        coalesce(late.previous_version_final_at, beyond_chain.replaced.final_at) as replaced_final_at
    from {{ late_versions }} as late
    left join (
        select
            {%- for column in matched %}
            late.{{ column }},
            {%- endfor %}
            max(named_struct(
                'chain', struct({% for column in chain_order %}earlier.{{ column }}{{ ', ' if not loop.last }}{% endfor %}),
                'window_start', earlier.window_start,
                'final_at', earlier.{{ 'version_final_at' if pipeline.source_column else 'final_at' }}
            )) as replaced
        from {{ late_versions }} as late
        inner join ({{ late_data.windowed(unreached, pipeline) }}) as earlier
            on {% for key in chain_keys %}late.{{ key }} = earlier.{{ key }} and {% endfor -%}
            struct({% for column in chain_order %}earlier.{{ column }}{{ ', ' if not loop.last }}{% endfor %})
                < struct({% for column in chain_order %}late.{{ column }}{{ ', ' if not loop.last }}{% endfor %})
        where late.previous_version_final_at is null
        group by {% for column in matched %}late.{{ column }}{{ ', ' if not loop.last }}{% endfor %}
    ) as beyond_chain
        on {% for column in matched %}late.{{ column }} <=> beyond_chain.{{ column }}{{ ' and ' if not loop.last }}{% endfor %}
{%- endmacro %}
