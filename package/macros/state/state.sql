{#- The one place where state is shared across nodes. dbt gives a macro no memory of its own; the
    parsed graph (`graph`) is the one object every node of an invocation sees, and a warm process
    (late-data schedule) reuses the parsed project across invocations. So:
    - late_data.invocation_state(): facts of this invocation (the audit's last runs, the
      pipelines' settings, what each late-data node wrote), read by later nodes and the
      on-run-end audit;
    - late_data.process_state(): facts about the warehouse that only this process's own runs
      change (relations of the project's schemas, columns of raw and late-data tables, whether
      the audit is ready), read once per process instead of once per invocation. Plain dbt parses
      per invocation, so there they are read once per invocation. `late-data` forgets them after
      a failed invocation and when a caller changes the warehouse behind dbt's back. -#}

{% macro invocation_state() %}
    {#- Only the current invocation's entry is kept. -#}
    {%- set states = graph.setdefault('late_data_invocation_state', {}) -%}
    {%- if invocation_id not in states -%}
        {%- do states.clear() -%}
        {%- do states.update({invocation_id: {'writes': {}}}) -%}
    {%- endif -%}
    {{- return(states[invocation_id]) -}}
{% endmacro %}


{% macro process_state() %}
    {{- return(graph.setdefault('late_data_process_state', {})) -}}
{% endmacro %}


{% macro record_write(relation, facts) %}
    {#- Remember what a late-data table was given in this invocation; `facts` are added to what was
        recorded before. -#}
    {%- do late_data.invocation_state()['writes'].setdefault(relation.identifier, {}).update(facts) -%}
{% endmacro %}


{% macro written(relation) %}
    {#- What `relation` was given in this invocation (late_data.record_write), or none. -#}
    {{- return(late_data.invocation_state()['writes'].get(relation.identifier)) -}}
{% endmacro %}


{% macro known_columns(relation) %}
    {#- The columns of a table as [(name, type)], lower case, once per process: from the listing
        of its schema this invocation made (late_data.listed_columns), else described; [] for a
        table that does not exist (not remembered, so a later run sees it once it is built). -#}
    {%- set known = late_data.process_state().setdefault('columns', {}) -%}
    {%- set key = relation.render() -%}
    {%- if key not in known -%}
        {%- set columns = late_data.listed_columns(relation) or [] -%}
        {%- for column in (adapter.get_columns_in_relation(relation) if not columns else []) -%}
            {%- do columns.append((column.name | lower, column.dtype | lower)) -%}
        {%- endfor -%}
        {%- if not columns -%}{{ return([]) }}{%- endif -%}
        {%- do known.update({key: columns}) -%}
    {%- endif -%}
    {{- return(known[key]) -}}
{% endmacro %}


{% macro listed_columns(relation) %}
    {#- The columns of `relation` as [(name, type)], lower case, read from the listing of its schema
        (SHOW TABLE EXTENDED, late_data's spark__list_relations_without_caching) when this process
        holds one that is still current, with describe's type names; none otherwise, or when a
        column is nested (the listing prints its type over several lines). Each describe it saves
        loads the table's metadata again: in a new process, 0.1 to 0.6 s. -#}
    {%- set rows = late_data.process_state().get('relations', {}).get(relation.schema) -%}
    {%- set names = {'long': 'bigint', 'integer': 'int', 'short': 'smallint', 'byte': 'tinyint'} -%}
    {%- for row in rows or [] if row[1] | lower == relation.identifier | lower and 'Schema: root' in row[3] -%}
        {%- set schema_lines = row[3].split('Schema: root')[-1].strip('\n').split('\n') -%}
        {%- set columns = [] -%}
        {%- for line in schema_lines if line.strip() -%}
            {%- set match = modules.re.match('^ \\|-- (.+): (\\S+) \\(nullable = \\w+\\)$', line) -%}
            {%- if match is none -%}{{ return(none) }}{%- endif -%}
            {%- do columns.append((match.group(1) | lower, names.get(match.group(2) | lower, match.group(2) | lower))) -%}
        {%- endfor -%}
        {{- return(columns) -}}
    {%- endfor -%}
    {{- return(none) -}}
{% endmacro %}


{% macro query_columns(sql) %}
    {#- The columns of a query's result as [(name, type)], lower case (DESCRIBE QUERY), once per
        process for the same SQL text. -#}
    {%- set known = late_data.process_state().setdefault('query_columns', {}) -%}
    {%- set key = local_md5(sql) -%}
    {%- if key not in known -%}
        {%- set columns = [] -%}
        {%- for row in run_query('describe query ' ~ sql) -%}
            {%- do columns.append((row[0] | lower, row[1] | lower)) -%}
        {%- endfor -%}
        {%- do known.update({key: columns}) -%}
    {%- endif -%}
    {{- return(known[key]) -}}
{% endmacro %}


{% macro forget_relation(relation) %}
    {#- This process rebuilt, created or dropped `relation`: what it knew of its columns and of its
        schema's relations is stale. -#}
    {%- set state = late_data.process_state() -%}
    {%- do state.setdefault('columns', {}).pop(relation.render(), none) -%}
    {%- do state.setdefault('relations', {}).pop(relation.schema, none) -%}
    {%- set checked = state.setdefault('checked_columns', []) -%}
    {%- if relation.render() in checked -%}{%- do checked.remove(relation.render()) -%}{%- endif -%}
{% endmacro %}


{% macro open_session() %}
    {#- For `dbt run-operation late_data.open_session`: the cheapest call that opens the profile's
        connection (an embedded target starts its Spark session), which `late-data` makes first. -#}
    {%- do run_query('select 1') -%}
{% endmacro %}
