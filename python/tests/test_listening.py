"""The embedded Spark session (every command's default) listens on loopback only. Unpinned, Spark
binds its driver and block manager to the machine's external address whenever the host name
resolves to a loopback address ("using <address> instead"). The cluster's own listing is in
test_cluster.py."""

from __future__ import annotations

import ipaddress
import os

from late_data.cluster import command_line, listening_addresses, process_tree
from late_data.runtime.dbt_project import DbtProject


def test_the_embedded_session_listens_on_loopback_only(project: DbtProject) -> None:
    project.spark  # noqa: B018 - started, if no test did yet
    jvms = [pid for pid in process_tree([os.getpid()]) if pid != os.getpid() and "java" in command_line(pid)]
    sockets = [(pid, address, port) for pid, found in listening_addresses(jvms).items() for address, port in found]
    driver_port = int(project.spark.sparkContext.getConf().get("spark.driver.port"))
    # The driver's RPC port, the block manager and py4j's gateway at least.
    assert driver_port in {port for _, _, port in sockets} and len(sockets) >= 3, sockets
    outside = [entry for entry in sockets if not loopback(entry[1])]
    assert not outside, f"listening beyond loopback: {outside}"


def loopback(address: str) -> bool:
    parsed = ipaddress.ip_address(address)
    return (getattr(parsed, "ipv4_mapped", None) or parsed).is_loopback
