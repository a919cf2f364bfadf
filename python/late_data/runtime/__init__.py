"""The runtime: the project's environment (environment), its settings validated and the error every
broken setup ends in (settings), Delta's jars (delta_jars), the one warm dbt process every command
runs dbt and Spark through (dbt_project; its errors, dbt_errors; its packages, dbt_packages), the
JVM's class archive (class_archive), time as the macros read it (timeutil), and values written into
SQL text and read back (sql_text).

May import: nothing else of late_data.
"""
