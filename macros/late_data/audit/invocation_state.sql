{% macro late_data_invocation_state() %}
    {#- A dict shared by every node of this dbt invocation, whatever the connection or Spark session
        each node runs on (through a Thrift Server dbt opens one per node): facts looked up once per
        invocation (the audit's last runs) and what each late-data model wrote, for the history
        snapshot and the audit. It lives in the parsed graph, which every node of an invocation
        shares; only the current invocation's entry is kept. -#}
    {%- set states = graph.setdefault('late_data_invocation_state', {}) -%}
    {%- if invocation_id not in states -%}
        {%- do states.clear() -%}
        {%- do states.update({invocation_id: {'writes': {}}}) -%}
    {%- endif -%}
    {{- return(states[invocation_id]) -}}
{% endmacro %}


{% macro late_data_record_write(relation, facts) %}
    {#- Remember what a late-data model or snapshot wrote in this invocation (see
        late_data_invocation_state); `facts` are added to what it recorded before. -#}
    {%- do late_data_invocation_state()['writes'].setdefault(relation.identifier, {}).update(facts) -%}
{% endmacro %}


{% macro late_data_written(relation) %}
    {#- What `relation`'s model wrote in this invocation (late_data_record_write), or none. -#}
    {{- return(late_data_invocation_state()['writes'].get(relation.identifier)) -}}
{% endmacro %}
