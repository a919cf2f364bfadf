"""Python side of the late_data dbt project: what dbt cannot do itself."""
