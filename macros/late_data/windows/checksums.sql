{% macro late_data_count() %}
    {#- Checksum spec: the number of counted versions. Every checksum dict has exactly one: a window
        whose count falls to 0 has vanished, and a negative count means the stored state drifted. -#}
    {{- return({'expression': '1', 'type': 'bigint', 'addend_type': 'bigint', 'published': true, 'is_count': true}) -}}
{% endmacro %}


{% macro late_data_count_column(checksums) %}
    {#- The name of the late_data_count() checksum in `checksums`; refused unless there is exactly one. -#}
    {%- set names = [] -%}
    {%- for name, spec in checksums.items() if spec.get('is_count') -%}{%- do names.append(name) -%}{%- endfor -%}
    {%- if names | length != 1 -%}
        {%- do exceptions.raise_compiler_error(
            'late-data checksums need exactly one late_data_count(), found ' ~ names | length ~ ': ' ~ checksums.keys() | list | join(', ')
        ) -%}
    {%- endif -%}
    {{- return(names[0]) -}}
{% endmacro %}


{% macro late_data_exact_sum(column) %}
    {#- Checksum spec: the sum of a column in fixed precision, so a recomputation from the same rows,
        or a stored sum plus the sum of what changed, gives the same bits in any order (a double
        sum depends on the order of its partial sums). -#}
    {{- return({
        'expression': 'cast(' ~ column ~ ' as decimal(28, 9))',
        'type': 'decimal(38, 9)',
        'addend_type': 'decimal(37, 9)',
        'published': true,
    }) -}}
{% endmacro %}


{% macro late_data_exact_sum_bound() %}
    {#- The magnitude a value summed by late_data_exact_sum must stay below: decimal(28, 9) holds
        19 integer digits. A value rounds to 9 decimal places; larger ones are quarantined
        (late_data_quarantine_reason), never cast to a null that would still be counted. -#}
    {{- return('1e19') -}}
{% endmacro %}


{% macro late_data_integer_sum(column) %}
    {#- Checksum spec: the sum of an integer column. -#}
    {{- return({'expression': column, 'type': 'bigint', 'addend_type': 'bigint', 'published': true}) -}}
{% endmacro %}


{% macro late_data_digest(columns) %}
    {#- Checksum spec: an order-independent digest of the counted versions, a sum of 64-bit row
        hashes kept exact as a decimal, so it neither overflows nor rounds and can be updated by
        adding and subtracting. A correction that keeps the count and the sum still changes it.
        Not published: a change of the digest alone rewrites the row, not its history. -#}
    {{- return({
        'expression': late_data_row_hash(columns),
        'type': 'decimal(38, 0)',
        'addend_type': 'decimal(37, 0)',
        'published': false,
    }) -}}
{% endmacro %}


{% macro late_data_row_hash(columns) %}
    {{- return(adapter.dispatch('late_data_row_hash', 'late_data')(columns)) -}}
{% endmacro %}

{% macro default__late_data_row_hash(columns) %}
    cast(xxhash64({{ columns | join(', ') }}) as decimal(20, 0))
{%- endmacro %}


{% macro late_data_window_checksums(version_counts, result, key_columns, checksums) %}
    {#- A select, per window (key_columns) with its final_at, partition_start and series_bucket, of
        the `checksums` (name -> spec from late_data_count, late_data_exact_sum, late_data_digest...)
        over `version_counts` (a late_data_version_counts select for the result model stored in
        `result`):
        - `<name>`: over the versions that count now (on a first build, --full-refresh, reconcile or
          backfill: a recomputation);
        - `<name>__change`: what changed since the model's previous run, the versions that count now
          but did not then minus those that counted then but no longer do (on scheduled and
          reconcile runs), and `changed_by_late_write`: a version written later than
          write_delay_seconds changed the window (see late_data_version_counts). -#}
    {%- set run_mode = late_data_run_mode(result) if execute else {'mode': 'rebuild', 'previous_run_time': none} -%}
    {%- set fresh = run_mode.mode != 'delta' -%}
    {%- set change = run_mode.previous_run_time is not none -%}
    {%- set group_columns = key_columns + ['final_at', 'partition_start', 'series_bucket'] %}
    select
        {{ group_columns | join(',\n        ') }},
        {%- for name, spec in checksums.items() %}
        {%- if fresh %}
        sum(if(counts_now, {{ spec.expression }}, 0)) as {{ name }}{{ ',' if not loop.last or change }}
        {%- endif %}
        {%- if change %}
        sum(case
            when counts_now and not counted_before then {{ spec.expression }}
            when counted_before and not counts_now then -({{ spec.expression }})
            else 0
        end) as {{ name }}__change,
        {%- endif %}
        {%- endfor %}
        {%- if change %}
        max(written_late and counts_now != counted_before) as changed_by_late_write
        {%- endif %}
    from {{ version_counts }}
    where counts_now or counted_before
    group by {{ group_columns | join(', ') }}
{%- endmacro %}
