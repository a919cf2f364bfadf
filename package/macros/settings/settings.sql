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


{% macro run_time_value() %}
    {#- The run's moment as a naive UTC datetime: var('run_time'), else the environment's
        LATE_DATA_RUN_TIME, else the invocation start. The environment variable is for a scheduler
        that starts plain dbt with its own clock (a replay, the benchmark): unlike a var, it leaves
        dbt's partial parse usable from one run to the next. -#}
    {%- set raw = var('run_time', none) -%}
    {%- if raw is not none and raw != '' -%}
        {%- do return(late_data.parse_time(raw, 'run_time')) -%}
    {%- endif -%}
    {%- set raw = env_var('LATE_DATA_RUN_TIME', '') -%}
    {%- if raw != '' -%}
        {%- do return(late_data.parse_time(raw, 'LATE_DATA_RUN_TIME', kind='environment variable')) -%}
    {%- endif -%}
    {%- do return(run_started_at.replace(tzinfo=none, microsecond=0)) -%}
{% endmacro %}


{% macro run_time() %}
    {{- return(late_data.timestamp_literal(late_data.run_time_value())) -}}
{% endmacro %}


{% macro parse_time(raw, name, kind='var') %}
    {#- A naive UTC datetime from 'YYYY-MM-DD[ HH:MM[:SS[.ffffff]]][+HH:MM|Z]'; a compile error naming
        the `kind` of setting (var, environment variable) and its `name` otherwise. -#}
    {%- set text = raw | string | trim -%}
    {%- if text.endswith('Z') -%}{%- set text = text[:-1] -%}{%- endif -%}
    {%- set parts = modules.re.match('^([0-9]{4})-([0-9]{2})-([0-9]{2})([ T]([0-9]{2}):([0-9]{2})(:([0-9]{2})([.][0-9]+)?)?)?([+-]([0-9]{2}):([0-9]{2}))?$', text) -%}
    {%- set problem = none if parts else "is not a timestamp" -%}
    {%- if parts -%}
        {%- set year, month, day = parts.group(1) | int, parts.group(2) | int, parts.group(3) | int -%}
        {%- if month < 1 or month > 12 -%}
            {%- set problem = "has month " ~ month ~ " (1 to 12)" -%}
        {%- elif day < 1 or day > (modules.datetime.date(year + month // 12, month % 12 + 1, 1) - modules.datetime.timedelta(days=1)).day -%}
            {%- set problem = "has day " ~ day ~ ", not a day of " ~ year ~ "-" ~ parts.group(2) -%}
        {%- elif (parts.group(5) or '0') | int > 23 or (parts.group(6) or '0') | int > 59 or (parts.group(8) or '0') | int > 59 -%}
            {%- set problem = "has a time of day outside 00:00:00 to 23:59:59" -%}
        {%- elif (parts.group(11) or '0') | int > 23 or (parts.group(12) or '0') | int > 59 -%}
            {%- set problem = "has a UTC offset outside -23:59 to +23:59" -%}
        {%- endif -%}
    {%- endif -%}
    {%- if problem -%}
        {%- do exceptions.raise_compiler_error(
            kind ~ " " ~ name ~ "='" ~ raw ~ "' " ~ problem ~ ": pass it as 'YYYY-MM-DD HH:MM:SS' (UTC)."
        ) -%}
    {%- endif -%}
    {%- set parsed = modules.datetime.datetime.fromisoformat(text) -%}
    {%- if parsed.tzinfo is not none -%}
        {%- set parsed = parsed.astimezone(modules.datetime.timezone.utc).replace(tzinfo=none) -%}
    {%- endif -%}
    {{- return(parsed) -}}
{% endmacro %}


{% macro backfill() %}
    {#- The var `backfill` ({from, to, include_too_late}) as a dict of datetimes, or none. -#}
    {%- set raw = var('backfill', none) -%}
    {%- if raw is none -%}{{ return(none) }}{%- endif -%}
    {%- if raw is not mapping or 'from' not in raw or 'to' not in raw -%}
        {%- do exceptions.raise_compiler_error(
            "var backfill must be {from: 'YYYY-MM-DD HH:MM:SS', to: '...', include_too_late: true|false}, not " ~ raw
        ) -%}
    {%- endif -%}
    {%- set backfill = {
        'from': late_data.parse_time(raw['from'], 'backfill.from'),
        'to': late_data.parse_time(raw['to'], 'backfill.to'),
        'include_too_late': raw.get('include_too_late', false) in [true, 'true', 'True', 1],
    } -%}
    {%- if backfill['to'] <= backfill['from'] -%}
        {%- do exceptions.raise_compiler_error("var backfill: 'to' must be after 'from'") -%}
    {%- endif -%}
    {{- return(backfill) -}}
{% endmacro %}


{% macro reconcile() %}
    {#- Whether this run recomputes its checked windows from the versions and repairs any the
        arrival-driven path got wrong: var `reconcile`, a reconciliation that is due
        (late_data.reconciliation_due), or a previous run that was interrupted
        (late_data.interrupted_run): its tables may hold part of what it wrote without an audit
        row saying so, and adding the arrivals since the last audited run on top would count some
        twice. -#}
    {%- set raw = var('reconcile', false) -%}
    {%- if raw not in [true, false, 'true', 'false', 'True', 'False', 1, 0, none] -%}
        {%- do exceptions.raise_compiler_error("var reconcile must be true or false, not " ~ raw) -%}
    {%- endif -%}
    {{- return(raw in [true, 'true', 'True', 1] or late_data.reconciliation_due() or late_data.interrupted_run() is not none) -}}
{% endmacro %}


{% macro reconcile_every_seconds() %}
    {#- How often a scheduled run turns itself into a reconciliation (var `reconcile_every_seconds`,
        project-wide; 0, the default: only when asked). -#}
    {{- return(late_data.whole_number(late_data.var_setting('reconcile_every_seconds'), 'var reconcile_every_seconds')) -}}
{% endmacro %}


{% macro reconciliation_due() %}
    {#- With var reconcile_every_seconds above 0, whether a scheduled run of the pipelines selected
        now is a reconciliation by itself: the run time is at least that long after the last
        reconciliation (or full refresh, or first build) of one of their results, from the audit
        (late_data.last_runs, no query of its own). So plain dbt on cron reconciles as the warm
        scheduler does, with no second cron line. Never in a backfill, a full refresh or
        `late-data explain`. -#}
    {%- set every = late_data.reconcile_every_seconds() -%}
    {%- if every == 0 or not execute or flags.WHICH not in ('run', 'build') or flags.FULL_REFRESH
        or late_data.backfill() or late_data.explain() -%}
        {{- return(false) -}}
    {%- endif -%}
    {%- set run_time = late_data.run_time_value() -%}
    {%- for node in late_data.filter_nodes('pipeline', true) -%}
        {%- set last = late_data.last_runs().get(node.alias, {}) -%}
        {%- set since = last.get('reconciled_run_time') or last.get('first_run_time') -%}
        {%- if since is not none and (run_time - since).total_seconds() >= every -%}
            {{- return(true) -}}
        {%- endif -%}
    {%- endfor -%}
    {{- return(false) -}}
{% endmacro %}


{% macro explain() %}
    {#- Whether this invocation only shows the SQL its late-data nodes would run (var
        `late_data_explain`, `late-data explain`): they log it and write nothing. -#}
    {{- return(var('late_data_explain', false) in [true, 'true', 'True', 1]) -}}
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
