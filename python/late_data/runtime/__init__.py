"""The runtime: the project's environment and settings (environment), the one warm dbt process that
every command runs dbt and Spark through (dbt_project), the JVM's class archive, and time as the
macros read it (timeutil).

May import: nothing else of late_data.
"""
