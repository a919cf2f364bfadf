{% macro late_data_relation_exists(relation) %}
    {{- return(execute and load_relation(relation) is not none) -}}
{% endmacro %}


{% macro spark__snapshot_get_time() %}
    {#- Versions are stamped with the run time, not the wall clock, so history and as-of reads
        live on the same time axis as the runs (and a replay at run time T can be compared). -#}
    {{- late_data_run_time() -}}
{% endmacro %}


{% macro spark__snapshot_staging_table(strategy, source_sql, target_relation) %}
    {#- For snapshots tagged `late_data_history`: compare only the stored versions in the
        partitions the snapshot's query selects, so cost follows the late window and
        hard_deletes='invalidate' closes exactly the windows that vanished in that range. -#}
    {%- if 'late_data_history' in config.get('tags', []) -%}
        {%- set stored_in_range -%}
            (select * from {{ target_relation }} where {{ late_data_checked_partitions(target_relation) }})
        {%- endset -%}
        {{- return(default__snapshot_staging_table(strategy, source_sql, stored_in_range)) -}}
    {%- endif -%}
    {{- return(default__snapshot_staging_table(strategy, source_sql, target_relation)) -}}
{% endmacro %}


{% macro late_data_as_of(history, as_of) %}
    {#- The versions of a snapshot valid at `as_of` (a SQL timestamp expression): the table as it
        stood right after the last run at or before that moment. -#}
    select *
    from {{ history }}
    where
        dbt_valid_from <= {{ as_of }}
        and (dbt_valid_to > {{ as_of }} or dbt_valid_to is null)
{%- endmacro %}
