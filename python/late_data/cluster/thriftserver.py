"""The Spark Thrift Server: SQL for dbt-spark's thrift method, with the `cluster` target's table
settings, Spark authentication, and a HiveServer2 authentication mode that fits where it listens
(NONE only on loopback)."""

from __future__ import annotations

import logging
import os
import subprocess
import xml.etree.ElementTree as ElementTree
from typing import Any

from late_data.cluster.common import (
    THRIFT_AUTH_REQUIRES,
    THRIFT_SERVER_CLASS,
    ClusterSettings,
    Tools,
    write_log4j_conf,
    write_private,
)
from late_data.cluster.metastore import hive_site
from late_data.cluster.processes import launch, port_answers
from late_data.cluster.spark import authentication_properties, properties_text, spark_env
from late_data.runtime.environment import ProjectEnvironment
from late_data.runtime.settings import SetupError

log = logging.getLogger(__name__)


def profile_spark_settings(environment: ProjectEnvironment, target: str = "cluster") -> dict[str, str]:
    """The server_side_parameters of a profiles.yml target, rendered like dbt does (env_var)."""
    import jinja2
    import yaml

    profile = yaml.safe_load((environment.profiles_dir / "profiles.yml").read_text())["late_data"]
    parameters: dict[str, Any] = profile["outputs"][target]["server_side_parameters"]
    missing = object()

    def env_var(name: str, default: Any = missing) -> str:
        if name in os.environ:
            return os.environ[name]
        if default is missing:
            raise SetupError(f"profiles.yml target {target} needs the environment variable {name}")
        return str(default)

    renderer = jinja2.Environment(undefined=jinja2.StrictUndefined)
    renderer.globals["env_var"] = env_var
    renderer.filters["as_number"] = lambda value: value
    return {key: renderer.from_string(str(value)).render() for key, value in parameters.items()}


def thriftserver_properties(settings: ClusterSettings, environment: ProjectEnvironment) -> dict[str, str]:
    """The `cluster` target's settings (table format, catalog, warehouse) for the Thrift Server,
    pinned to this cluster's addresses, with its Spark secret: so the file is 0600."""
    properties = profile_spark_settings(environment, "cluster")
    properties.update(
        {
            "spark.master": settings.master_url,
            "spark.app.name": "late_data_thriftserver",
            "spark.driver.memory": settings.server_memory,
            "spark.driver.host": settings.host,
            "spark.driver.bindAddress": settings.host,
            "spark.sql.warehouse.dir": settings.warehouse,
            "spark.hadoop.hive.metastore.uris": settings.metastore_uri,
            # dbt-spark turns ANSI off per session, which this server ignores (plain session keys).
            "spark.sql.ansi.enabled": "false",
            **authentication_properties(settings),
        }
    )
    return properties


def require_authentication(settings: ClusterSettings) -> None:
    """Beyond loopback the Thrift Server must check who connects; Spark itself always does."""
    if settings.opened and settings.thrift_auth == "NONE":
        raise SetupError(
            f"LATE_DATA_CLUSTER_HOST={settings.host} opens the cluster to other hosts, but the Thrift Server"
            " would accept any user name without a password (LATE_DATA_THRIFT_AUTH=NONE): set"
            " LATE_DATA_THRIFT_AUTH to LDAP, KERBEROS or CUSTOM and LATE_DATA_THRIFT_AUTH_SITE to a hive-site.xml"
            " with that mode's settings (docs/cluster.md), or unset LATE_DATA_CLUSTER_HOST (loopback)"
        )


def read_hive_site(path: str) -> dict[str, str]:
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as error:
        raise SetupError(f"LATE_DATA_THRIFT_AUTH_SITE={path} cannot be read as a hive-site.xml: {error}") from None
    return {
        (entry.findtext("name") or "").strip(): (entry.findtext("value") or "").strip()
        for entry in root.iter("property")
    }


def authentication_site(settings: ClusterSettings) -> dict[str, str]:
    """hive-site.xml properties of the server's authentication: NONE, or the mode's settings from
    LATE_DATA_THRIFT_AUTH_SITE, each required key present."""
    mode = settings.thrift_auth
    if mode == "NONE":
        return {"hive.server2.authentication": "NONE"}
    required = THRIFT_AUTH_REQUIRES[mode]
    if not settings.thrift_auth_site:
        raise SetupError(
            f"LATE_DATA_THRIFT_AUTH={mode} needs LATE_DATA_THRIFT_AUTH_SITE: a hive-site.xml setting"
            f" {', '.join(required)} (docs/cluster.md)"
        )
    properties = read_hive_site(settings.thrift_auth_site)
    missing = [key for key in required if not properties.get(key)]
    if missing:
        raise SetupError(
            f"LATE_DATA_THRIFT_AUTH_SITE={settings.thrift_auth_site} does not set {', '.join(missing)},"
            f" which LATE_DATA_THRIFT_AUTH={mode} needs"
        )
    return {**properties, "hive.server2.authentication": mode}


def write_thriftserver_conf(settings: ClusterSettings, environment: ProjectEnvironment) -> None:
    """Its SPARK_CONF_DIR (on the driver's class path, so HiveServer2 reads the hive-site.xml there)
    and its properties file; both may hold secrets, so 0600."""
    conf = settings.conf_dir / "thriftserver"
    write_log4j_conf(conf)
    write_private(conf / "hive-site.xml", hive_site(authentication_site(settings)))
    write_private(conf / "thriftserver.conf", properties_text(thriftserver_properties(settings, environment)))


def start_thriftserver(
    settings: ClusterSettings, tools: Tools, environment: ProjectEnvironment
) -> subprocess.Popen[bytes]:
    """The server runs in the project directory: a relative path in SQL (a relative LATE_DATA_HOME
    in a setting) means what it means to dbt run from there."""
    write_thriftserver_conf(settings, environment)
    conf = settings.conf_dir / "thriftserver"
    return launch(
        settings,
        "thriftserver",
        [
            str(tools.spark_home / "bin" / "spark-submit"),
            "--class",
            THRIFT_SERVER_CLASS,
            "--name",
            "late_data_thriftserver",
            "--properties-file",
            str(conf / "thriftserver.conf"),
            # Iceberg's classes must be visible to the driver's own class loader, not only added later.
            "--driver-class-path",
            str(tools.iceberg_jar),
            "spark-internal",
            "--hiveconf",
            f"hive.server2.thrift.bind.host={settings.host}",
            "--hiveconf",
            f"hive.server2.thrift.port={settings.thrift_port}",
        ],
        {**spark_env(settings, tools), "SPARK_CONF_DIR": str(conf)},
        cwd=environment.project_dir,
    )


def thrift_answers(settings: ClusterSettings) -> bool:
    """The Thrift Server runs `select 1` through PyHive (what dbt's thrift method uses); with an
    authentication mode this process has no credentials for, its port answering is all it can tell."""
    if not port_answers(settings.host, settings.thrift_port):
        return False
    if settings.thrift_auth != "NONE":
        return True
    from pyhive import hive

    try:
        connection = hive.connect(
            host=settings.host,
            port=settings.thrift_port,
            username=os.environ.get("LATE_DATA_THRIFT_USER", "late_data"),
        )
        try:
            cursor = connection.cursor()
            cursor.execute("select 1")
            return bool(cursor.fetchall() == [(1,)])
        finally:
            connection.close()
    except Exception as error:
        log.debug("thrift server not ready: %s", error)
        return False
