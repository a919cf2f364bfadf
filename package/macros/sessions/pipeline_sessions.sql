{% macro pipeline_sessions(node, meta) %}
    {#- (session gap, maximum session length) of a pipeline, both none unless it sets
        session_gap_seconds: then its windows are sessions (docs/your-own-pipeline.md, "Sessions"),
        which window_size_seconds and window_slide_seconds cannot be set beside. -#}
    {%- if 'session_gap_seconds' not in meta -%}
        {%- if 'max_session_seconds' in meta -%}
            {%- do exceptions.raise_compiler_error(
                "meta.late_data.max_session_seconds of model " ~ node.name ~ " needs session_gap_seconds: it cuts session windows"
            ) -%}
        {%- endif -%}
        {{- return((none, none)) -}}
    {%- endif -%}
    {%- set clashing = ['window_size_seconds', 'window_slide_seconds'] | select('in', meta) | list -%}
    {%- if clashing -%}
        {%- do exceptions.raise_compiler_error(
            "meta.late_data of model " ~ node.name ~ ": session_gap_seconds and " ~ clashing | join(' and ')
            ~ " cannot be set together: a session's bounds come from its events, not from a window size"
        ) -%}
    {%- endif -%}
    {%- set gap = late_data.whole_number(meta['session_gap_seconds'], 'meta.late_data.session_gap_seconds of model ' ~ node.name, 1) -%}
    {%- set longest = none -%}
    {%- if meta.get('max_session_seconds') is not none -%}
        {%- set longest = late_data.whole_number(meta['max_session_seconds'], 'meta.late_data.max_session_seconds of model ' ~ node.name, 1) -%}
    {%- endif -%}
    {{- return((gap, longest)) -}}
{% endmacro %}
