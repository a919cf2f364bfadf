{% macro migrate_history() %}
    {#- For `dbt run-operation late_data.migrate_history`: brings every late-data history built by
        an earlier version to the partitioning it now has (time partition, series bucket,
        is_current_version) and to its write modes, keeping every version. Iceberg evolves the
        partition spec in place (metadata only: files written before keep their layout and are
        still read correctly); Delta cannot change partition columns in place, so the table is
        replaced by a copy of itself in one commit (REPLACE TABLE ... AS SELECT: readers see the
        old or the new table). -#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set wanted = late_data.history_partitioning() -%}
    {%- for node in late_data.filter_nodes('history') -%}
        {%- set file_format = late_data.history_pipeline(node).file_format -%}
        {%- set history = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
        {%- set current = late_data.partition_columns(history) if history is not none else wanted -%}
        {%- if history is not none -%}
            {#- The write modes too: a history built by an earlier version used merge-on-read. -#}
            {%- set modes = {} -%}
            {%- for key, value in late_data.history_table_properties(file_format).items() if key != 'format-version' -%}
                {%- do modes.update({key: value}) -%}
            {%- endfor -%}
            {%- do adapter.execute('alter table ' ~ history ~ ' set tblproperties (' ~ late_data.property_assignments(modes) ~ ')') -%}
        {%- endif -%}
        {%- if current == wanted -%}
            {%- do log('late_data.migrate_history: ' ~ node.alias ~ ' is partitioned as it should be', info=true) -%}
        {%- elif file_format == 'iceberg' -%}
            {#- Keep the common leading fields; drop the rest and add the wanted ones in order. -#}
            {%- set kept = [] -%}
            {%- for column in current -%}
                {%- if kept | length == loop.index0 and wanted[loop.index0:loop.index] == [column] -%}
                    {%- do kept.append(column) -%}
                {%- endif -%}
            {%- endfor -%}
            {%- for column in current[kept | length:] -%}
                {%- do adapter.execute('alter table ' ~ history ~ ' drop partition field ' ~ column) -%}
            {%- endfor -%}
            {%- for column in wanted[kept | length:] -%}
                {%- do adapter.execute('alter table ' ~ history ~ ' add partition field ' ~ column) -%}
            {%- endfor -%}
            {%- do log('late_data.migrate_history: ' ~ history ~ ' partitioned by ' ~ wanted | join(', ') ~ ' from now on (Iceberg partition evolution)', info=true) -%}
        {%- else -%}
            {%- do adapter.execute(
                'replace table ' ~ history ~ ' using delta partitioned by (' ~ wanted | join(', ') ~ ') '
                ~ late_data.tblproperties(file_format, late_data.history_table_properties(file_format))
                ~ ' as select * from ' ~ history
            ) -%}
            {%- do log('late_data.migrate_history: ' ~ history ~ ' rewritten, partitioned by ' ~ wanted | join(', '), info=true) -%}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}
