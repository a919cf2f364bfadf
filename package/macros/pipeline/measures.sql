{% macro aggregates(pipeline, columns) %}
    {#- What a pipeline keeps per window to compute its measures, given its model's columns
        [(name, type)]: {checksums: name -> spec (late_data.count_checksum, exact_sum, integer_sum,
        distinct_count, digest), each updated as stored plus what changed; means: mean measure ->
        the sum checksum it divides (a sum measure of the same column, else a stored <mean>__sum);
        recomputed: min, max, percentile and median measure -> {kind, column, p}, which no
        checksum can update (a correction may retract the value they return), so the windows
        whose versions changed are recomputed from their versions}. -#}
    {%- set types = dict(columns) -%}
    {%- set checksums, means, recomputed, sums = {}, {}, {}, {} -%}
    {%- for measure in pipeline.measures -%}
        {%- if measure.kind == 'count' -%}
            {%- do checksums.update({measure.name: late_data.count_checksum()}) -%}
        {%- elif measure.kind == 'sum' -%}
            {%- do checksums.update({measure.name: late_data.sum_checksum(pipeline, measure, types)}) -%}
            {%- do sums.setdefault(measure.column, measure.name) -%}
        {%- elif measure.kind == 'count_distinct' -%}
            {%- do late_data.input_kind(pipeline, measure, types) -%}
            {%- do checksums.update({measure.name: late_data.distinct_count(measure.column)}) -%}
        {%- elif measure.kind in ('min', 'max', 'percentile', 'median') -%}
            {%- do late_data.input_kind(pipeline, measure, types) -%}
            {%- do recomputed.update({measure.name: {'kind': measure.kind, 'column': measure.column, 'p': measure.p}}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for measure in pipeline.measures if measure.kind == 'mean' -%}
        {%- set sum_name = sums.get(measure.column) or measure.name ~ '__sum' -%}
        {%- if sum_name not in checksums -%}
            {%- do checksums.update({sum_name: late_data.sum_checksum(pipeline, measure, types)}) -%}
        {%- endif -%}
        {%- do means.update({measure.name: sum_name}) -%}
    {%- endfor -%}
    {%- do checksums.update({pipeline.digest: late_data.digest(pipeline.event_key + ['event_time'] + pipeline.input_columns)}) -%}
    {{- return({'checksums': checksums, 'means': means, 'recomputed': recomputed}) -}}
{% endmacro %}


{% macro recomputed_aggregate(spec, value) %}
    {#- SQL: the aggregate of a recomputed measure (late_data.aggregates) over `value`, a SQL
        expression that is null for versions that do not count. Percentiles and the median are
        Spark's exact `percentile`: linear interpolation between the two closest ranks. -#}
    {%- if spec.kind in ('min', 'max') -%}
        {{- return(spec.kind ~ '(' ~ value ~ ')') -}}
    {%- endif -%}
    {{- return('percentile(' ~ value ~ ', ' ~ spec.p ~ ')') -}}
{% endmacro %}


{% macro distinct_count(column) %}
    {#- Checksum spec: the number of distinct values of a column among the counted versions. Its
        change is no sum over the versions that changed: late_data.distinct_changes works it out
        from the versions that share a changed window and value. -#}
    {{- return({'distinct': column, 'type': 'bigint', 'addend_type': 'bigint', 'published': true}) -}}
{% endmacro %}


{% macro hidden_sums(pipeline) %}
    {#- The sums a pipeline stores only to divide for a mean (no sum measure of the same column):
        <mean>__sum, kept in the result table, left out of its history. -#}
    {%- set summed = pipeline.measures | selectattr('kind', 'equalto', 'sum') | map(attribute='column') | list -%}
    {%- set hidden = [] -%}
    {%- for measure in pipeline.measures if measure.kind == 'mean' and measure.column not in summed -%}
        {%- do hidden.append(measure.name ~ '__sum') -%}
    {%- endfor -%}
    {{- return(hidden) -}}
{% endmacro %}


{% macro sum_checksum(pipeline, measure, types) %}
    {#- The checksum of a sum of `measure`'s column: bigint for an integer column, exact otherwise. -#}
    {{- return(late_data.integer_sum(measure.column) if late_data.input_kind(pipeline, measure, types) == 'integer'
        else late_data.exact_sum(measure.column)) -}}
{% endmacro %}


{% macro input_kind(pipeline, measure, types) %}
    {#- 'integer' or 'fractional' for a measure's column (its type in the model's select, `types`:
        name -> type), or 'other' for a count_distinct over a column of another simple type (a
        string, a date). A column that is missing, not a number where the measure needs one, or
        an array, map or struct, is refused, naming the measure. -#}
    {%- set type = types.get(measure.column | lower) -%}
    {%- if type in ('tinyint', 'smallint', 'int', 'bigint') -%}{{ return('integer') }}{%- endif -%}
    {%- if type in ('float', 'double') or (type or '').startswith('decimal') -%}{{ return('fractional') }}{%- endif -%}
    {%- set complex = (type or '').startswith(('array', 'map', 'struct')) -%}
    {%- if measure.kind == 'count_distinct' and type and not complex -%}{{ return('other') }}{%- endif -%}
    {%- do exceptions.raise_compiler_error(
        "meta.late_data.measures." ~ measure.name ~ " of model " ~ pipeline.name ~ ": column " ~ measure.column
        ~ ((" is " ~ type ~ ", which " ~ measure.kind ~ " cannot take (it needs "
            ~ ('a column of a simple type' if measure.kind == 'count_distinct' else 'a number') ~ ")") if type
            else " is not a column of the model's select (" ~ types.keys() | join(', ') ~ ")")
    ) -%}
{% endmacro %}


{% macro count_checksum() %}
    {#- Checksum spec: the number of counted versions. Every pipeline has exactly one: a window whose
        count falls to 0 has vanished, and a negative count means the stored state drifted. -#}
    {{- return({'expression': '1', 'type': 'bigint', 'addend_type': 'bigint', 'published': true, 'is_count': true}) -}}
{% endmacro %}


{% macro exact_sum(column) %}
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


{% macro exact_sum_bound() %}
    {#- The magnitude a value summed by late_data.exact_sum must stay below: decimal(28, 9) holds
        19 integer digits. A value rounds to 9 decimal places; larger ones are quarantined
        (late_data.quarantine_reason), never cast to a null that would still be counted. -#}
    {{- return('1e19') -}}
{% endmacro %}


{% macro count_bound() %}
    {#- The largest magnitude of an integer a version may carry: 2^31 - 1, so the bigint sum of a
        window cannot overflow below 4 billion rows (Spark's bigint sum wraps around silently). -#}
    {{- return(2147483647) -}}
{% endmacro %}


{% macro integer_sum(column) %}
    {#- Checksum spec: the sum of an integer column. -#}
    {{- return({'expression': column, 'type': 'bigint', 'addend_type': 'bigint', 'published': true}) -}}
{% endmacro %}


{% macro digest(columns) %}
    {#- Checksum spec: an order-independent digest of the counted versions, a sum of 64-bit row
        hashes kept exact as a decimal, so it neither overflows nor rounds and can be updated by
        adding and subtracting. A correction that keeps the count and the sum still changes it.
        Not published: a change of the digest alone rewrites the row, not its history. -#}
    {{- return({
        'expression': late_data.row_hash(columns),
        'type': 'decimal(38, 0)',
        'addend_type': 'decimal(37, 0)',
        'published': false,
    }) -}}
{% endmacro %}


{% macro row_hash(columns) %}
    {{- return(adapter.dispatch('row_hash', 'late_data')(columns) | trim) -}}
{% endmacro %}

{% macro default__row_hash(columns) %}
    cast(xxhash64({{ columns | join(', ') }}) as decimal(20, 0))
{%- endmacro %}


{% macro count_column(checksums) %}
    {#- The name of the count checksum in `checksums`. -#}
    {%- for name, spec in checksums.items() if spec.get('is_count') -%}{{ return(name) }}{%- endfor -%}
{% endmacro %}


{% macro quarantine_reason(pipeline, columns) %}
    {#- SQL expression over a version of the pipeline's model (its columns [(name, type)]): why it
        cannot be counted, or null when it can. The first reason that applies: the model's own
        `quarantine_reason` column when it selects one (its own rules, e.g. a count below 0);
        `null_<column>` for a null event key, series key, source column, event_time, measure
        column or ingested_at; for a fractional measure column `not_finite` (NaN, an infinity);
        for a column a sum, mean, min or max reads, `out_of_range` at late_data.exact_sum_bound()
        or beyond (fractional) or beyond late_data.count_bound() (integer). -#}
    {%- set types = dict(columns) -%}
    {%- set required = [] -%}
    {%- for column in pipeline.event_key + pipeline.series_key + ([pipeline.source_column] if pipeline.source_column else [])
        + ['event_time'] + pipeline.input_columns + ['ingested_at'] if column not in required -%}
        {%- do required.append(column) -%}
    {%- endfor -%}
    case
    {%- if 'quarantine_reason' in types %}
        when quarantine_reason is not null then quarantine_reason
    {%- endif %}
    {%- for column in required %}
        when {{ column }} is null then 'null_{{ column }}'
    {%- endfor %}
    {%- for column in pipeline.input_columns %}
        {%- set measures = pipeline.measures | selectattr('column', 'equalto', column) | list %}
        {%- set kind = late_data.input_kind(pipeline, measures[0], types) %}
        {%- set bounded = measures | selectattr('kind', 'in', ['sum', 'mean', 'min', 'max']) | list | length > 0 %}
        {%- if kind == 'fractional' %}
        when isnan({{ column }}) or abs({{ column }}) = double('infinity') then 'not_finite'
        {%- if bounded %}
        when abs({{ column }}) >= {{ late_data.exact_sum_bound() }} then 'out_of_range'
        {%- endif %}
        {%- elif kind == 'integer' and bounded %}
        when abs({{ column }}) > {{ late_data.count_bound() }} then 'out_of_range'
        {%- endif %}
    {%- endfor %}
    end
{%- endmacro %}
