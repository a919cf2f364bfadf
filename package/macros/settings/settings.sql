{% macro setting_defaults() %}
    {#- The package's defaults of the settings a project may set as dbt vars (project-wide) and a
        pipeline in its meta.late_data (its own): docs/your-own-pipeline.md. -#}
    {{- return({
        'window_size_seconds': 60,
        'late_window_seconds': 3600,
        'late_window_seconds_by_source': {},
        'partition_size_seconds': 600,
        'series_buckets': 1,
        'write_delay_seconds': 300,
        'late_window_target_share': 0.999,
        'late_window_counts_corrections': false,
        'broadcast_arrivals_max': 2000000,
        'share_version_chain': true,
        'reconcile_every_seconds': 0,
    }) -}}
{% endmacro %}


{% macro var_setting(name) %}
    {#- The project-wide value of setting `name`: the dbt var, else the package's default. -#}
    {{- return(var(name, late_data.setting_defaults()[name])) -}}
{% endmacro %}


{% macro whole_number(value, name, minimum=0) %}
    {#- `value` as an integer, or a compile error naming the setting (`name`, e.g. "var
        late_window_seconds" or "meta.late_data.late_window_seconds of model m"). -#}
    {%- if value is none or value is boolean or not modules.re.match('^[0-9]+$', value | string | trim) or (value | int) < minimum -%}
        {%- do exceptions.raise_compiler_error(name ~ "=" ~ value ~ " must be a whole number, at least " ~ minimum) -%}
    {%- endif -%}
    {{- return(value | int) -}}
{% endmacro %}


{% macro plain_identifier(name, value) %}
    {#- `value` (a name from a var or a setting, which reaches SQL unquoted) when it is a plain
        identifier; refused otherwise, with the message the environment's names get. -#}
    {%- if not modules.re.match('^[A-Za-z_][A-Za-z0-9_]*$', value | string) -%}
        {%- do exceptions.raise_compiler_error(
            name ~ "='" ~ value ~ "' is not a plain identifier: use letters, digits and underscores, starting"
            ~ " with a letter or underscore"
        ) -%}
    {%- endif -%}
    {{- return(value) -}}
{% endmacro %}


{% macro write_delay_seconds() %}
    {#- How long after its ingested_at stamp a row may become readable in a raw table and still be
        picked up by the next scheduled run (var `write_delay_seconds`, project-wide). -#}
    {{- return(late_data.whole_number(late_data.var_setting('write_delay_seconds'), 'var write_delay_seconds')) -}}
{% endmacro %}


{% macro broadcast_arrivals_max() %}
    {#- The most versions a run may have loaded and still look their events up by broadcasting
        their keys (var `broadcast_arrivals_max`, project-wide; late_data.broadcasts_arrivals). -#}
    {{- return(late_data.whole_number(late_data.var_setting('broadcast_arrivals_max'), 'var broadcast_arrivals_max')) -}}
{% endmacro %}


{% macro share_version_chain() %}
    {#- Whether a whole run's result stages its version chain for its too-late listing in a global
        temporary view (var `share_version_chain`, project-wide; late_data.shared_chain). Off for
        a Spark without global temporary views in `global_temp` (a cluster that renames
        spark.sql.globalTempDatabase, a platform that has none): the listing then works its chain
        out itself, the same rows at the cost of a second scan of the versions. -#}
    {{- return(late_data.boolean_var('share_version_chain')) -}}
{% endmacro %}


{% macro counts_corrections() %}
    {#- Whether the lateness views and the recommended late windows count every delivery (var
        `late_window_counts_corrections` true) or only each event's first (the default): a
        correction that moves an event days back is not days of lateness in the source's feed. -#}
    {{- return(late_data.boolean_var('late_window_counts_corrections')) -}}
{% endmacro %}


{% macro boolean_var(name) %}
    {#- The project-wide setting `name` as true or false, refused naming it otherwise. -#}
    {%- set raw = late_data.var_setting(name) -%}
    {%- if raw not in [true, false, 'true', 'false', 'True', 'False'] -%}
        {%- do exceptions.raise_compiler_error("var " ~ name ~ " must be true or false, not " ~ raw) -%}
    {%- endif -%}
    {{- return(raw in [true, 'true', 'True']) -}}
{% endmacro %}


{% macro target_share() %}
    {#- var `late_window_target_share`: the share of rows a recommended late window captures, a
        number above 0 and at most 1. -#}
    {%- set raw = late_data.var_setting('late_window_target_share') -%}
    {%- if raw is boolean or not modules.re.match('^(0?[.][0-9]+|1([.]0*)?|0)$', raw | string | trim) or (raw | float) <= 0 -%}
        {%- do exceptions.raise_compiler_error(
            "var late_window_target_share=" ~ raw ~ " must be a number above 0 and at most 1, e.g. 0.999"
        ) -%}
    {%- endif -%}
    {{- return(raw | float) -}}
{% endmacro %}


{% macro sql_string(text) %}
    {#- A Spark SQL string literal for `text`: backslashes and quotes escaped (Spark reads
        backslash escapes in literals), so any text, a path or a name, stays one literal. -#}
    {{- return("'" ~ text | string | replace("\\", "\\\\") | replace("'", "\\'") ~ "'") -}}
{% endmacro %}


{% macro timestamp_literal(moment) %}
    {{- return("timestamp'" ~ moment.strftime('%Y-%m-%d %H:%M:%S') ~ "'") -}}
{% endmacro %}


{% macro time_bucket(timestamp_expression, size_seconds) %}
    {{- return(adapter.dispatch('time_bucket', 'late_data')(timestamp_expression, size_seconds) | trim) -}}
{% endmacro %}

{% macro default__time_bucket(timestamp_expression, size_seconds) %}
    {#- Buckets are aligned to the Unix epoch, so any size (60 s, 3600 s, 86400 s) nests cleanly. -#}
    timestamp_seconds(floor(unix_seconds({{ timestamp_expression }}) / {{ size_seconds }}) * {{ size_seconds }})
{%- endmacro %}


{% macro add_seconds(timestamp_expression, seconds) %}
    {{- return(adapter.dispatch('add_seconds', 'late_data')(timestamp_expression, seconds) | trim) -}}
{% endmacro %}

{% macro default__add_seconds(timestamp_expression, seconds) %}
    {{ timestamp_expression }} + interval {{ seconds }} second
{%- endmacro %}


{% macro floor_to(moment, size_seconds) %}
    {#- The start of the `size_seconds` bucket (epoch-aligned) holding a datetime. -#}
    {%- set epoch = modules.datetime.datetime(1970, 1, 1) -%}
    {%- set seconds = ((moment - epoch).total_seconds() | int) // size_seconds * size_seconds -%}
    {{- return(epoch + modules.datetime.timedelta(seconds=seconds)) -}}
{% endmacro %}


{% macro seconds(count) %}
    {{- return(modules.datetime.timedelta(seconds=count)) -}}
{% endmacro %}
