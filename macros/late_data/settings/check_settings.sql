{% macro late_data_check_settings() %}
    {#- For on-run-start: every setting checked before any SQL runs, each error naming the var and
        its value. The same macros check them where they are used; this runs them all up front so
        a bad setting never surfaces halfway through a run as a Spark error. -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- do late_data_plain_identifier('var raw_schema', var('raw_schema')) -%}
    {#- Every source's schema reaches SQL as a name, whatever var or setting it comes from. -#}
    {%- for source_node in graph.sources.values() -%}
        {%- do late_data_plain_identifier('the schema of source ' ~ source_node.source_name, source_node.schema) -%}
    {%- endfor -%}
    {%- do late_data_partition_size_seconds() -%}
    {%- do late_data_series_buckets() -%}
    {%- do late_data_write_delay_seconds() -%}
    {%- do late_data_late_window_seconds() -%}
    {%- set by_source = var('late_window_seconds_by_source', {}) or {} -%}
    {%- if by_source is not mapping -%}
        {%- do exceptions.raise_compiler_error(
            "var late_window_seconds_by_source=" ~ by_source ~ " must map source tables to seconds, e.g. {page_views: 7200}"
        ) -%}
    {%- endif -%}
    {#- The raw tables: the sources that declare their columns' types (the audit declares none). -#}
    {%- set source_tables = [] -%}
    {%- for source_node in graph.sources.values()
        if source_node.columns.values() | selectattr('data_type') | list | length -%}
        {%- do source_tables.append(source_node.name) -%}
    {%- endfor -%}
    {%- for source_table in by_source -%}
        {%- if source_table not in source_tables -%}
            {%- do exceptions.raise_compiler_error(
                "var late_window_seconds_by_source." ~ source_table ~ ": no source table of that name (known: "
                ~ source_tables | sort | join(', ') ~ ")"
            ) -%}
        {%- endif -%}
        {%- do late_data_late_window_seconds([source_table]) -%}
    {%- endfor -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'snapshot' and 'late_data_history' in node.tags and node.unique_id in selected_resources -%}
        {%- set renamed = (node.config.get('snapshot_meta_column_names') or {}).values() | select | list -%}
        {%- do late_data_check_history_config(node.name, node.config.get, renamed | length > 0) -%}
    {%- endfor -%}
    {%- do late_data_target_share() -%}
    {%- do late_data_run_time_value() -%}
    {%- do late_data_backfill() -%}
    {%- do late_data_reconcile() -%}
    {%- if var('as_of', none) -%}
        {%- do late_data_parse_time(var('as_of'), 'as_of') -%}
    {%- endif -%}
    {{- return('') -}}
{% endmacro %}


{% macro late_data_target_share() %}
    {#- var `late_window_target_share`: the share of rows a recommended late window captures, a
        number above 0 and at most 1. -#}
    {%- set raw = var('late_window_target_share') -%}
    {%- if raw is boolean or not modules.re.match('^(0?[.][0-9]+|1([.]0*)?|0)$', raw | string | trim) or (raw | float) <= 0 -%}
        {%- do exceptions.raise_compiler_error(
            "var late_window_target_share=" ~ raw ~ " must be a number above 0 and at most 1, e.g. 0.999"
        ) -%}
    {%- endif -%}
    {{- return(raw | float) -}}
{% endmacro %}


{% macro late_data_plain_identifier(name, value) %}
    {#- `value` (a schema name from a var or a setting, which reaches SQL unquoted) when it is a plain
        identifier; refused otherwise, with the message the environment's names get. -#}
    {%- if not modules.re.match('^[A-Za-z_][A-Za-z0-9_]*$', value | string) -%}
        {%- do exceptions.raise_compiler_error(
            name ~ "='" ~ value ~ "' is not a plain identifier: use letters, digits and underscores, starting"
            ~ " with a letter or underscore"
        ) -%}
    {%- endif -%}
    {{- return(value) -}}
{% endmacro %}
