{% macro fresh_columns(aggregates, repairs) %}
    {#- The recomputed aggregates of a window in a full outer join of `stored` with `fresh` (0 and
        null where fresh has no row), and with `repairs` whether the reconciliation repairs it. -#}
    {%- for name, spec in aggregates.checksums.items() %}
            cast(coalesce(fresh.{{ name }}, 0) as {{ spec.type }}) as {{ name }},
    {%- endfor %}
    {%- for name in aggregates.recomputed %}
            fresh.{{ name }},
    {%- endfor %}
    {%- if repairs %}
            {{ late_data.window_repaired(aggregates) }} as window_repaired,
    {%- endif %}
{%- endmacro %}


{% macro window_repaired(aggregates) %}
    {#- SQL: reconciliation repairs the window: what the arrival-driven path would have stored
        (stored plus what changed) differs from the recomputation `fresh`, or a row written too
        late for that path changed the window. -#}
    not (
        {%- for name, spec in aggregates.checksums.items() %}
        coalesce(fresh.{{ name }}, 0) = {{ late_data.stored_plus_change(name, spec, 'fresh') }} and
        {%- endfor %}
        not coalesce(fresh.changed_by_late_write, false)
    )
{%- endmacro %}


{% macro rebuilt_windows(window_checksums, pipeline, aggregates) %}
    {#- The final select of late_data.windows_to_write on a first build or --full-refresh: every
        window. A window whose published numbers and status the result already holds (a
        --full-refresh that changes nothing about it, its final_at included: a change of the window
        layout or the late window moves it) keeps its computed_at and invocation_id: it was not
        published again, so its history version stays open. -#}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- set run_time = late_data.run_time() -%}
    {%- set stored = execute and not late_data.is_explain() and late_data.relation_exists(result) -%}
    {%- set stored_columns = late_data.known_columns(result) | map(attribute=0) | list if stored else [] -%}
    {%- set compared = [pipeline.count_column, 'is_final', 'computed_at', 'invocation_id'] -%}
    {%- for name, spec in aggregates.checksums.items() if spec.published -%}{%- do compared.append(name) -%}{%- endfor -%}
    {%- do compared.extend(aggregates.recomputed.keys() | list) -%}
    {#- A result built with other measures (the reason for many a --full-refresh) keeps nothing. -#}
    {%- set stored = stored and compared | reject('in', stored_columns) | list | length == 0 -%}
    {%- set kept -%}
        (stored.{{ pipeline.count_column }} is not null
        {%- for name, spec in aggregates.checksums.items() if spec.published %}
        and fresh.{{ name }} <=> stored.{{ name }}
        {%- endfor %}
        {%- for name in aggregates.recomputed %}
        and fresh.{{ name }} <=> stored.{{ name }}
        {%- endfor %}
        and fresh.final_at <= {{ run_time }} <=> stored.is_final
        {%- if 'final_at' in stored_columns %}
        and fresh.final_at <=> stored.final_at
        {%- endif %})
    {%- endset %}
    select
        fresh.*,
        fresh.final_at <= {{ run_time }} as is_final,
        {{ 'if(' ~ kept ~ ', stored.computed_at, ' ~ run_time ~ ')' if stored else run_time }} as computed_at,
        {{ 'if(' ~ kept ~ ', stored.invocation_id, ' if stored }}'{{ invocation_id }}'{{ ')' if stored }} as invocation_id,
        {{ run_time }} as written_at
    from {{ window_checksums }} as fresh
    {%- if stored %}
    left join {{ result }} as stored
        on {% for key in late_data.key_columns(pipeline) %}fresh.{{ key }} = stored.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
    {%- endif %}
    where fresh.{{ pipeline.count_column }} > 0
{%- endmacro %}


{% macro written_windows(updated_windows, pipeline, aggregates, repaired=false, plan_mode='recompute', bounds_changed='') %}
    {#- The final select of an incremental late_data.windows_to_write: `updated_windows` (new
        aggregates next to the stored_* ones) with status, window_change, computed_at and
        invocation_id. A negative count means the stored checksums drifted from the versions:
        the run fails rather than publish it. -#}
    {%- set run_time = late_data.run_time() -%}
    {%- set count_column = pipeline.count_column -%}
    {%- set key_columns = late_data.key_columns(pipeline) -%}
    {%- set published = {'checksums': {}, 'recomputed': aggregates.recomputed} -%}
    {%- for name, spec in aggregates.checksums.items() if spec.published -%}{%- do published.checksums.update({name: spec}) -%}{%- endfor %}
    select
        {%- for column in key_columns + ['final_at', 'partition_start', 'series_bucket'] + pipeline.state_columns %}
        {{ column }},
        {%- endfor %}
        if(
            {{ count_column }} < 0,
            cast(raise_error(concat(
                'late-data: the stored {{ count_column }} of {{ pipeline.alias }} window ',
                concat_ws('|', {% for key in key_columns %}cast({{ key }} as string){{ ', ' if not loop.last }}{% endfor %}),
                ' would become negative: the stored checksums drifted; run late-data reconcile'
            )) as bigint),
            {{ count_column }}
        ) as {{ count_column }},
        {%- for name, spec in aggregates.checksums.items() if name != count_column %}
        cast({{ name }} as {{ spec.type }}) as {{ name }},
        {%- endfor %}
        {%- for name in aggregates.recomputed %}
        {{ name }},
        {%- endfor %}
        final_at <= {{ run_time }} as is_final,
        window_change,
        if(window_change = 'published', {{ run_time }}, stored_computed_at) as computed_at,
        if(window_change = 'published', '{{ invocation_id }}', stored_invocation_id) as invocation_id,
        -- Every row of a rewritten partition: what the next run compares with the audit to find a
        -- run that wrote and was interrupted before it recorded its outcome.
        {{ run_time }} as written_at,
        {{ 'window_repaired' if repaired else 'false' }} as window_repaired
        {%- if pipeline.dimensions %},
        {{ 'changed_by_dimension' if not repaired and plan_mode == 'delta' else 'false' }} as window_dimension_change
        {%- endif %}
    from (
        select
            *,
            case
                when {{ count_column }} = 0 then 'vanished'
                when stored_{{ count_column }} is null then 'published'
                when not {{ late_data.same_aggregates(published) }} then 'published'
                {{- bounds_changed }}
                when not {{ late_data.same_aggregates(aggregates, status=false) }} then 'checksum'
                else 'unchanged'
            end as window_change
        from {{ updated_windows }}
    )
{%- endmacro %}


{% macro check_series_buckets(pipeline) %}
    {#- A result table's partitions are buckets of its series_buckets setting: changing it needs a rebuild. -#}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- set last_buckets = late_data.last_run(result).get('series_buckets') -%}
    {%- if late_data.builds_incrementally(pipeline) and last_buckets is not none and last_buckets != pipeline.series_buckets -%}
        {%- do exceptions.raise_compiler_error(
            "var series_buckets=" ~ pipeline.series_buckets ~ " differs from the " ~ last_buckets ~ " that "
            ~ result.identifier ~ " was built with: rebuild it with --full-refresh"
        ) -%}
    {%- endif -%}
{% endmacro %}


{% macro window_identity(key_columns, other) %}
    {#- The select list's first columns in a full outer join of `stored` windows with `other`:
        each window's keys, final_at and partition (time partition and series bucket), from
        `other` where it has the window (a session's end can move), else from what is stored. -#}
    {%- for column in key_columns + ['final_at', 'partition_start', 'series_bucket'] %}
            coalesce({{ other }}.{{ column }}, stored.{{ column }}) as {{ column }},
    {%- endfor %}
{%- endmacro %}


{% macro stored_columns(aggregates) %}
    {#- What `stored` holds for the window, as stored_<checksum>, stored_<recomputed measure> and
        stored_is_final, stored_computed_at, stored_invocation_id (no trailing comma). -#}
    {%- for name in aggregates.checksums.keys() | list + aggregates.recomputed.keys() | list %}
            stored.{{ name }} as stored_{{ name }},
    {%- endfor %}
            stored.is_final as stored_is_final,
            stored.computed_at as stored_computed_at,
            stored.invocation_id as stored_invocation_id
{%- endmacro %}


{% macro same_keys(key_columns, other) %}
    {#- Join condition: `stored` and `other` hold the same window. -#}
    {%- for key in key_columns -%}
        stored.{{ key }} = {{ other }}.{{ key }}{{ ' and ' if not loop.last }}
    {%- endfor -%}
{%- endmacro %}


{% macro same_aggregates(aggregates, status=true) %}
    {#- SQL, parenthesized: every checksum and recomputed measure of `aggregates` equals its stored_ column
        (null-safe) and, with `status`, the window's final status equals stored_is_final. -#}
    {%- set names = aggregates.checksums.keys() | list + aggregates.recomputed.keys() | list %}
    (
    {%- for name in names %}
        {{ name }} <=> stored_{{ name }}{{ ' and' if not loop.last or status }}
    {%- endfor %}
    {%- if status %}
        final_at <= {{ late_data.run_time() }} <=> stored_is_final
    {%- endif %}
    )
{%- endmacro %}


{% macro stored_plus_change(name, spec, changes) %}
    {#- SQL: the stored checksum `name` plus what `changes` says changed (`name`__change), in the
        spec's addend type, so the sum is exact. -#}
    cast(coalesce(stored.{{ name }}, 0) as {{ spec.addend_type }}) + cast(coalesce({{ changes }}.{{ name }}__change, 0) as {{ spec.addend_type }})
{%- endmacro %}
