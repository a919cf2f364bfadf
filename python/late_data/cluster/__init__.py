"""`late-data cluster up|down|status`: a shared catalog and a Spark cluster on this machine.

PostgreSQL (a project-local instance under LATE_DATA_HOME/cluster) holds the Hive metastore; a Hive
metastore service (Spark's own Hive 2.3.9 jars) serves it over thrift to every Spark process; a
Spark standalone master with workers runs the executors; a Spark Thrift Server answers SQL for
dbt-spark's thrift method. Ports, memory and worker count come from LATE_DATA_* settings
(docs/cluster.md); every process logs to LATE_DATA_HOME/cluster/logs and has a pid file in
LATE_DATA_HOME/cluster/run. Everything listens on loopback unless LATE_DATA_CLUSTER_HOST says
otherwise; the secrets are generated into LATE_DATA_HOME/cluster/secrets.

One module per service (postgres, metastore, spark, thriftserver), what they share (common:
settings, tools, secrets; processes: pid files, ports, sockets), the order they start and stop in
(control), and the writer lock on the shared catalog (writer_lock).

May import: late_data.runtime.
"""

from late_data.cluster.common import ClusterSettings, ComponentStatus, Tools
from late_data.cluster.control import cluster_down, cluster_status, cluster_up, describe, find_tools
from late_data.cluster.postgres import find_jdbc_jar, find_postgres_bin
from late_data.cluster.processes import (
    command_line,
    listening_addresses,
    pid_alive,
    port_owner,
    process_tree,
    require_free_port,
)
from late_data.cluster.thriftserver import profile_spark_settings, thriftserver_properties

__all__ = [
    "ClusterSettings",
    "ComponentStatus",
    "Tools",
    "cluster_down",
    "cluster_status",
    "cluster_up",
    "command_line",
    "describe",
    "find_jdbc_jar",
    "find_postgres_bin",
    "find_tools",
    "listening_addresses",
    "pid_alive",
    "port_owner",
    "process_tree",
    "profile_spark_settings",
    "require_free_port",
    "thriftserver_properties",
]
