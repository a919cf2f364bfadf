{% macro parse_measures(node, measures) %}
    {#- The `measures` setting (name -> a measure, late_data.parse_measure) as a list of {name, kind,
        column, p, expression}, in the order given; exactly one count. -#}
    {%- set named = 'meta.late_data.measures of model ' ~ node.name -%}
    {%- if measures is not mapping or not measures -%}
        {%- do exceptions.raise_compiler_error(
            named ~ " is missing: map each result column to a measure (" ~ late_data.measure_kinds_help()
            ~ "), e.g. {reading_count: count, kwh_sum: {sum: kwh}}"
        ) -%}
    {%- endif -%}
    {%- set parsed = [] -%}
    {%- for name, spec in measures.items() -%}
        {%- do late_data.plain_identifier(named, name) -%}
        {%- do parsed.append(late_data.parse_measure(named ~ '.' ~ name, name, spec)) -%}
    {%- endfor -%}
    {%- set counts = parsed | selectattr('kind', 'equalto', 'count') | list -%}
    {%- if counts | length != 1 -%}
        {%- do exceptions.raise_compiler_error(
            named ~ " needs exactly one count (e.g. reading_count: count): a window whose count falls to 0 has vanished;"
            ~ " found " ~ counts | length
        ) -%}
    {%- endif -%}
    {{- return(parsed) -}}
{% endmacro %}


{% macro measure_kinds_help() %}
    {{- return('count, {sum: column}, {mean: column}, {min: column}, {max: column}, {count_distinct: column},'
        ~ ' {percentile: {column: column, p: 0.95}}, {median: column} or {expression: SQL}') -}}
{% endmacro %}


{% macro parse_measure(named, name, spec) %}
    {#- One measure of the `measures` setting (`named` names it in errors) as {name, kind, column, p,
        expression}: count; {sum|mean|min|max|count_distinct|median: column}; {percentile: {column,
        p}} with 0 < p < 1 (median is p 0.5); {expression: SQL over the other measures}. -#}
    {%- set kind = 'count' if spec == 'count' else ((spec.keys() | first) if spec is mapping and spec | length == 1 else none) -%}
    {%- if kind not in ('count', 'sum', 'mean', 'min', 'max', 'count_distinct', 'percentile', 'median', 'expression') -%}
        {%- do exceptions.raise_compiler_error(
            named ~ "=" ~ spec ~ " is not a measure: use " ~ late_data.measure_kinds_help()
        ) -%}
    {%- endif -%}
    {%- set argument = spec[kind] if spec is mapping else none -%}
    {%- set p = 0.5 if kind == 'median' else none -%}
    {%- if kind == 'percentile' -%}
        {%- if argument is not mapping or argument.keys() | sort | list != ['column', 'p'] -%}
            {%- do exceptions.raise_compiler_error(named ~ ".percentile=" ~ argument ~ " must be {column: <column>, p: <number between 0 and 1>}") -%}
        {%- endif -%}
        {%- set p = argument.p -%}
        {%- if p is boolean or p is not number or p <= 0 or p >= 1 -%}
            {%- do exceptions.raise_compiler_error(named ~ ".percentile.p=" ~ p ~ " must be a number above 0 and below 1, e.g. 0.95") -%}
        {%- endif -%}
        {%- set argument = argument.column -%}
    {%- endif -%}
    {{- return({
        'name': name,
        'kind': kind,
        'column': late_data.plain_identifier(named, argument) if kind not in ('count', 'expression') else none,
        'p': p,
        'expression': argument if kind == 'expression' else none,
    }) -}}
{% endmacro %}
