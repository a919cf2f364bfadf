{% macro history_seen(history, pipeline) %}
    {#- The temporal clause reading a pipeline's result as `history` last saw it: its version when
        the history last recorded, the later of its last successful run in the audit and the last
        commit to its closed versions (a run that appended and was killed before the audit
        recorded it). Refused when the result keeps no version that old. -#}
    {%- set closed = late_data.closed_versions_relation(history) -%}
    {%- set recorded = run_query(
        'select ' ~ late_data.exact_time('max(recorded_at)') ~ ' from ' ~ late_data.run_audit_relation()
        ~ ' where model = ' ~ late_data.sql_string(history.identifier) ~ " and outcome = 'success'"
    ).rows[0][0] -%}
    {%- set seen = [recorded | string] if recorded else [] -%}
    {%- do seen.append(late_data.table_version_at(closed, pipeline.file_format).moment) -%}
    {%- set result = late_data.pipeline_relation(pipeline) -%}
    {%- set version = late_data.table_version_at(result, pipeline.file_format, seen | select | max) -%}
    {%- if version.id is none -%}
        {%- do exceptions.raise_compiler_error(
            "late-data history " ~ history.identifier ~ " last recorded at " ~ (seen | select | max) ~ ", and " ~ result.identifier
            ~ " keeps no version that old (late_data.maintain_tables expires them after keep_hours): the versions it published"
            ~ " since cannot be closed. Keep the history selected with its result, or start it again (drop "
            ~ late_data.closed_versions_relation(history) ~ " and the view " ~ history ~ "), losing its past versions"
        ) -%}
    {%- endif -%}
    {{- return('version as of ' ~ version.id) -}}
{% endmacro %}


{% macro table_version_at(relation, file_format, moment=none) %}
    {#- {id, moment}: the version of an Iceberg or Delta table current at `moment` (a string
        'YYYY-MM-DD HH:MM:SS[.ffffff]', UTC; default: now) and when it became current as such a
        string; both none when the table had no version then. -#}
    {%- if file_format == 'iceberg' -%}
        {%- set rows = run_query(
            'select snapshot_id, ' ~ late_data.exact_time('made_current_at') ~ ' from ' ~ relation ~ '.history'
            ~ (' where made_current_at <= ' ~ late_data.exact_timestamp_literal(moment) if moment else '')
            ~ ' order by made_current_at desc limit 1'
        ).rows -%}
    {%- else -%}
        {%- set rows = [] -%}
        {%- for row in run_query('describe history ' ~ relation) -%}
            {%- set made_current = row['timestamp'].strftime('%Y-%m-%d %H:%M:%S.%f') -%}
            {%- if not moment or made_current <= moment -%}{%- do rows.append([row['version'], made_current]) -%}{%- endif -%}
        {%- endfor -%}
        {%- set rows = rows | sort(attribute='0', reverse=true) -%}
    {%- endif -%}
    {{- return({'id': rows[0][0] | int if rows else none, 'moment': rows[0][1] | string if rows else none}) -}}
{% endmacro %}


{% macro exact_time(expression) %}
    {#- SQL: the timestamp `expression` as a string 'YYYY-MM-DD HH:MM:SS.ffffff' (such strings sort as their moments do). -#}
    {{- return("date_format(" ~ expression ~ ", 'yyyy-MM-dd HH:mm:ss.SSSSSS')") -}}
{% endmacro %}


{% macro exact_timestamp_literal(moment) %}
    {#- A timestamp literal to the microsecond, of a datetime or a string 'YYYY-MM-DD HH:MM:SS[.ffffff]'. -#}
    {{- return("timestamp'" ~ (moment if moment is string else moment.strftime('%Y-%m-%d %H:%M:%S.%f')) ~ "'") -}}
{% endmacro %}


{% macro histories_behind(pipeline) %}
    {#- The late-data history snapshots of `pipeline` selected in this invocation that missed a run
        of its result (the history's last successful run is older than the result's): the result
        holds its run so they can record what it published, exactly, before it moves on. -#}
    {%- set behind = [] -%}
    {%- set result_last = late_data.last_run(late_data.pipeline_relation(pipeline)).get('any_run_time') -%}
    {%- for node in late_data.pipeline_histories(pipeline, selected_only=true) -%}
        {%- set history_last = late_data.last_run(api.Relation.create(identifier=node.alias)).get('any_run_time') -%}
        {%- if result_last is not none and history_last is not none and history_last < result_last -%}
            {%- do behind.append(node.name) -%}
        {%- endif -%}
    {%- endfor -%}
    {{- return(behind) -}}
{% endmacro %}


{% macro history_table_properties(file_format) %}
    {#- Table properties of a late-data history's closed versions: runs only append to it;
        maintenance compacts it (copy-on-write, so no delete files are left behind). -#}
    {%- if file_format == 'iceberg' -%}
        {{- return({
            'format-version': '2',
            'write.merge.mode': 'copy-on-write',
            'write.update.mode': 'copy-on-write',
            'write.delete.mode': 'copy-on-write',
        }) -}}
    {%- endif -%}
    {{- return({'delta.enableDeletionVectors': 'false'}) -}}
{% endmacro %}


{% macro history_partitioning() %}
    {#- How a late-data history's closed versions are partitioned: time partition and series
        bucket, as its result is, so a version closed is read with the pairs it belongs to. -#}
    {{- return(['partition_start', 'series_bucket']) -}}
{% endmacro %}
