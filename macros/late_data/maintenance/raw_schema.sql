{% macro late_data_create_raw_schema() %}
    {#- Creates the raw schema; also the cheap first call that starts the Spark session. -#}
    {% do adapter.execute('create schema if not exists ' ~ late_data_plain_identifier('var raw_schema', var('raw_schema'))) %}
{% endmacro %}
