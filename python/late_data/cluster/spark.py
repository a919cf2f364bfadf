"""The Spark standalone master and its workers, and the Spark configuration every process on the
cluster shares: spark.authenticate with a generated secret, read from 0600 files (spark-defaults.conf
or a properties file), never from a command line or the environment.

Why not spark.authenticate.secret.file: Spark 3.5's SecurityManager.initializeAuth reads secret files
only for YARN, Kubernetes and local masters; for a spark:// master it requires
spark.authenticate.secret itself in the configuration. The master and workers read
SPARK_CONF_DIR/spark-defaults.conf (MasterArguments, WorkerArguments), spark-submit (and so
PySpark and dbt's session method) reads it too; a worker hands the secret to the executors it
starts in their environment (_SPARK_AUTH_SECRET, Spark's own mechanism)."""

from __future__ import annotations

import json
import subprocess
import urllib.request

from late_data.cluster.common import (
    LOOPBACK,
    MASTER_CLASS,
    WORKER_CLASS,
    ClusterSettings,
    Tools,
    spark_secret,
    write_log4j_conf,
    write_private,
)
from late_data.cluster.processes import launch


def authentication_properties(settings: ClusterSettings) -> dict[str, str]:
    """What every Spark process of the cluster needs to talk to the others; encrypted too once the
    cluster listens beyond loopback."""
    properties = {"spark.authenticate": "true", "spark.authenticate.secret": spark_secret(settings)}
    if settings.opened:
        properties["spark.network.crypto.enabled"] = "true"
    return properties


def properties_text(properties: dict[str, str]) -> str:
    return "".join(f"{key} {value}\n" for key, value in sorted(properties.items()))


def write_spark_confs(settings: ClusterSettings) -> None:
    """SPARK_CONF_DIR of the master and workers, and of every driver on the cluster (the client
    configuration prepare_environment points `cluster`/`thrift` targets at)."""
    daemons = settings.conf_dir / "spark"
    write_log4j_conf(daemons)
    write_private(daemons / "spark-defaults.conf", properties_text(authentication_properties(settings)))
    write_private(
        settings.client_conf_dir / "spark-defaults.conf", properties_text(authentication_properties(settings))
    )


def spark_env(settings: ClusterSettings, tools: Tools) -> dict[str, str]:
    """SPARK_LOCAL_IP is where Spark's web UIs bind (WebUI.bind: SPARK_LOCAL_IP, else 0.0.0.0):
    loopback, whatever the cluster's host, since the UIs have no authentication."""
    return {
        "SPARK_HOME": str(tools.spark_home),
        "SPARK_LOCAL_IP": LOOPBACK,
        "SPARK_DAEMON_MEMORY": settings.daemon_memory,
        "SPARK_CONF_DIR": str(settings.conf_dir / "spark"),
    }


def start_master(settings: ClusterSettings, tools: Tools) -> subprocess.Popen[bytes]:
    return launch(
        settings,
        "master",
        [
            str(tools.spark_home / "bin" / "spark-class"),
            MASTER_CLASS,
            "--host",
            settings.host,
            "--port",
            str(settings.master_port),
            "--webui-port",
            str(settings.ui_port),
        ],
        spark_env(settings, tools),
    )


def start_worker(settings: ClusterSettings, tools: Tools, index: int) -> subprocess.Popen[bytes]:
    name = f"worker-{index}"
    work_dir = settings.cluster_dir / "work" / name
    work_dir.mkdir(parents=True, exist_ok=True)
    return launch(
        settings,
        name,
        [
            str(tools.spark_home / "bin" / "spark-class"),
            WORKER_CLASS,
            "--host",
            settings.host,
            "--cores",
            "1",
            "--memory",
            settings.worker_memory,
            "--webui-port",
            str(settings.ui_port + index),
            "--work-dir",
            str(work_dir),
            settings.master_url,
        ],
        {
            **spark_env(settings, tools),
            # Every application leaves its jars and executor logs (about 45 MB) in the work directory:
            # remove those of applications finished more than a day ago (checked every 30 minutes).
            "SPARK_WORKER_OPTS": "-Dspark.worker.cleanup.enabled=true -Dspark.worker.cleanup.appDataTtl=86400",
        },
    )


def alive_workers(settings: ClusterSettings) -> int:
    """Workers the master counts as ALIVE (its web UI's JSON)."""
    try:
        with urllib.request.urlopen(f"http://{LOOPBACK}:{settings.ui_port}/json/", timeout=2) as response:
            state = json.load(response)
    except (OSError, ValueError):
        return 0
    return sum(1 for worker in state.get("workers", []) if worker.get("state") == "ALIVE")
