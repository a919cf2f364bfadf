"""The Hive metastore service (Spark's own Hive 2.3.9 jars over PostgreSQL), on loopback: it has no
authentication, and its clients (the Thrift Server, `cluster`-target drivers) run on this machine."""

from __future__ import annotations

import subprocess
from pathlib import Path
from xml.sax.saxutils import escape

from late_data.cluster.common import LOOPBACK, METASTORE_CLASS, ClusterSettings, Tools, write_private
from late_data.cluster.postgres import METASTORE_DATABASE, METASTORE_USER, metastore_password
from late_data.cluster.processes import launch

# Compiled and run by Janino (in pyspark's jars) each time the service starts.
LAUNCHER_SOURCE = "cluster/BoundMetastore.java"
JANINO_RUNNER = "org.codehaus.janino.SimpleCompiler"


def hive_site(properties: dict[str, str]) -> str:
    body = "\n".join(
        f"  <property><name>{escape(key)}</name><value>{escape(value)}</value></property>"
        for key, value in properties.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{body}\n</configuration>\n'


def write_metastore_conf(settings: ClusterSettings) -> Path:
    """hive-site.xml (PostgreSQL with its password, so 0600; warehouse) and a console log4j2
    config for the metastore service."""
    conf = settings.conf_dir / "metastore"
    conf.mkdir(parents=True, exist_ok=True)
    properties = {
        "javax.jdo.option.ConnectionURL": (
            f"jdbc:postgresql://{LOOPBACK}:{settings.postgres_port}/{METASTORE_DATABASE}"
        ),
        "javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
        "javax.jdo.option.ConnectionUserName": METASTORE_USER,
        "javax.jdo.option.ConnectionPassword": metastore_password(settings),
        # The service, and only it, creates the catalog tables (DBS, TBLS, ...) as they are first used.
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        # Iceberg knows columns by id; position-wise type checks refuse a measure's column dropped.
        "hive.metastore.disallow.incompatible.col.type.changes": "false",
        "hive.metastore.warehouse.dir": settings.warehouse,
        # Hive's default async logging needs the LMAX disruptor, which Spark's jars lack.
        "hive.async.log.enabled": "false",
    }
    write_private(conf / "hive-site.xml", hive_site(properties))
    (conf / "hive-log4j2.properties").write_text(
        "status = WARN\nappender.console.type = Console\nappender.console.name = console\n"
        "appender.console.layout.type = PatternLayout\n"
        "appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n\n"
        "rootLogger.level = INFO\nrootLogger.appenderRef.console.ref = console\n"
        # A health check that only opens the port makes the thrift server log an error; not one.
        "logger.thrift.name = org.apache.thrift.server.TThreadPoolServer\nlogger.thrift.level = OFF\n"
    )
    return conf


def start_metastore(settings: ClusterSettings, tools: Tools, project_dir: Path) -> subprocess.Popen[bytes]:
    conf = write_metastore_conf(settings)
    classpath = f"{conf}:{tools.spark_home / 'jars'}/*:{tools.jdbc_jar}"
    return launch(
        settings,
        "metastore",
        [
            tools.java,
            f"-Xmx{settings.metastore_memory}",
            "-cp",
            classpath,
            JANINO_RUNNER,
            str(project_dir / LAUNCHER_SOURCE),
            METASTORE_CLASS,
            LOOPBACK,
            str(settings.metastore_port),
        ],
        {},
    )
