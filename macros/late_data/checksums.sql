{% macro late_data_digest(columns) %}
    {{- return(adapter.dispatch('late_data_digest', 'late_data')(columns)) -}}
{% endmacro %}

{% macro default__late_data_digest(columns) %}
    {#- An aggregate, independent of row order: a sum of 64-bit row hashes, kept exact as a
        decimal so it neither overflows nor rounds. A correction that keeps the count still
        changes the digest. -#}
    sum(cast(xxhash64({{ columns | join(', ') }}) as decimal(38, 0)))
{%- endmacro %}


{% macro late_data_exact_sum(column) %}
    {#- Sums in fixed precision, so a recomputation from the same rows gives the same bits in
        any order (a double sum depends on the order of its partial sums). -#}
    sum(cast({{ column }} as decimal(28, 9)))
{%- endmacro %}


{% macro late_data_counts_as_of(run_time) %}
    {#- True for a row version that counts toward its window as of run_time. A version counts
        once it has arrived, and until a newer version of the same event arrives, judged at the
        earlier of run_time and the window's final_at. So a final window is frozen: later
        arrivals (new rows or corrections) never change it. Expects the late-data columns
        ingested_at, superseded_at and final_at. A backfill with include_too_late judges every
        window at run_time instead: the deliberate way to revise final windows. -#}
    {%- set backfill = late_data_backfill() -%}
    {%- set judged_at = run_time if backfill and backfill.include_too_late else 'least(' ~ run_time ~ ', final_at)' -%}
    (
        ingested_at <= {{ judged_at }}
        and coalesce(superseded_at > {{ judged_at }}, true)
    )
{%- endmacro %}
