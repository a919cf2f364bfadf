"""The settings that reach SQL, Spark settings or a command line (LATE_DATA_* names, hosts, ports,
memory, locations), each validated before use and refused naming the setting, and the error every
broken setup ends in (SetupError: its message says what to do)."""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from typing import Any

# Settings the shared-catalog targets read, with the defaults profiles.yml and `late-data cluster`
# use; each must be a TCP port.
PORT_SETTINGS = {
    "LATE_DATA_POSTGRES_PORT": 15432,
    "LATE_DATA_METASTORE_PORT": 19083,
    "LATE_DATA_SPARK_MASTER_PORT": 17077,
    "LATE_DATA_SPARK_UI_PORT": 18080,
    "LATE_DATA_THRIFT_PORT": 10015,
}
URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# Names that reach SQL unquoted (schemas) and values that reach Spark settings or command lines.
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
HOST_NAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)
USER_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@-]{0,63}$")
# A git commit, `-dirty` after it when the working tree had changes (late_data.code_commit).
CODE_COMMIT = re.compile(r"^[0-9a-f]{7,40}(-dirty)?$")
MEMORY = re.compile(r"^[1-9][0-9]*[kKmMgGtT]?$")
# A path or URI ends up in Spark settings unescaped: the warehouse directory, the comma-separated
# spark.jars and the space-separated spark.driver.extraJavaOptions (LATE_DATA_HOME).
UNSAFE_IN_LOCATION = re.compile(r"[\s'\"`\\,;]")
# Free-form settings copied into Spark settings (master URLs, the metastore URI); commas separate
# several masters or metastores.
UNSAFE_IN_SETTING = re.compile(r"[\s'\"`\\;]")
LOG_LEVELS = ("ALL", "DEBUG", "ERROR", "FATAL", "INFO", "OFF", "TRACE", "WARN")
# The Thrift Server's hive.server2.authentication modes (server and `thrift` clients); NONE takes any
# user name and no password.
THRIFT_AUTH_MODES = ("NONE", "LDAP", "KERBEROS", "CUSTOM")


class SetupError(RuntimeError):
    """Something the machine or the configuration lacks; the message says what to do."""


def validate_location(name: str, value: str | None) -> str | None:
    """A warehouse location: an absolute path (made a plain absolute path) or a URI
    such as hdfs://namenode/warehouse or s3a://bucket/warehouse. Spark would resolve a relative
    path against each process's working directory, so it is refused."""
    if not value:
        return None
    refuse_unsafe_location(name, value)
    if URI_SCHEME.match(value) or value.startswith("file:/"):
        return value
    if not os.path.isabs(value):
        raise SetupError(
            f"{name}={value!r} is relative: use an absolute path or a URI every Spark process reaches "
            "(hdfs://..., s3a://...)"
        )
    return os.path.normpath(value)


def refuse_unsafe_location(name: str, value: str) -> None:
    if UNSAFE_IN_LOCATION.search(value):
        raise SetupError(
            f"{name}={value!r} holds a space, quote, backslash, comma or semicolon: it reaches SQL and Spark"
            " settings unescaped; use a path or URI without them"
        )


def validate_ports() -> None:
    """The cluster and thrift targets: every port setting is a TCP port."""
    for name in PORT_SETTINGS:
        port_setting(name)


def validate_names_and_hosts() -> None:
    """Every name and host from the environment that reaches SQL, a Spark setting or a command line,
    checked once before anything starts (each refused naming the variable and its value)."""
    identifier_setting("LATE_DATA_SCHEMA", "analytics")
    for name in ("LATE_DATA_CLUSTER_HOST", "LATE_DATA_THRIFT_HOST"):
        host_setting(name)
    pattern_setting("LATE_DATA_THRIFT_USER", "late_data", USER_NAME, "a user name (letters, digits, _ . @ -)")
    for name in ("LATE_DATA_DRIVER_MEMORY", "LATE_DATA_EXECUTOR_MEMORY"):
        memory_setting(name, "1g")
    for name in ("LATE_DATA_SHUFFLE_PARTITIONS", "LATE_DATA_APP_CORES"):
        count_setting(name, 1, minimum=1)
    for name in ("LATE_DATA_THRIFT_POLL_INTERVAL", "LATE_DATA_THRIFT_CONNECT_RETRIES"):
        count_setting(name, 0, minimum=0)
    for name in ("LATE_DATA_SPARK_MASTER", "LATE_DATA_CLUSTER_MASTER", "LATE_DATA_METASTORE_URI"):
        value = os.environ.get(name)
        if value is not None and (not value or UNSAFE_IN_SETTING.search(value)):
            raise SetupError(f"{name}={value!r} is not a URL: no spaces, quotes, backslashes or semicolons")
    thrift_auth = os.environ.get("LATE_DATA_THRIFT_AUTH")
    if thrift_auth is not None:
        if thrift_auth.upper() not in THRIFT_AUTH_MODES:
            raise SetupError(f"LATE_DATA_THRIFT_AUTH={thrift_auth!r} is not one of {THRIFT_AUTH_MODES}")
        # dbt-spark compares the profile's `auth` in upper case.
        os.environ["LATE_DATA_THRIFT_AUTH"] = thrift_auth.upper()
    writer_lock = os.environ.get("LATE_DATA_WRITER_LOCK")
    if writer_lock is not None and writer_lock not in ("on", "off"):
        raise SetupError(f"LATE_DATA_WRITER_LOCK={writer_lock!r} is not on or off")
    level = os.environ.get("LATE_DATA_SPARK_LOG_LEVEL")
    if level is not None and level.upper() not in LOG_LEVELS:
        raise SetupError(f"LATE_DATA_SPARK_LOG_LEVEL={level!r} is not a log level: use one of {LOG_LEVELS}")
    if os.environ.get("LATE_DATA_CODE_COMMIT"):
        pattern_setting(
            "LATE_DATA_CODE_COMMIT", "", CODE_COMMIT, "a git commit (7 to 40 hex digits, optionally followed by -dirty)"
        )


def validate_identifier(name: str, value: str) -> str:
    """A schema name spliced into SQL: letters, digits and underscores, not starting with a digit."""
    if not IDENTIFIER.match(value):
        raise SetupError(
            f"{name}={value!r} is not a plain identifier: use letters, digits and underscores, starting"
            " with a letter or underscore"
        )
    return value


def validate_relation(name: str, value: str) -> str:
    """A `schema.table` spliced into SQL (and a folder name): two plain identifiers (validate_identifier)."""
    parts = value.split(".")
    if len(parts) != 2:
        raise SetupError(f"{name}: {value!r} is not schema.table")
    return ".".join(validate_identifier(name, part) for part in parts)


def identifier_setting(name: str, default: str) -> str:
    return validate_identifier(name, os.environ.get(name, default))


def host_setting(name: str, default: str = "127.0.0.1") -> str:
    """A host name or IPv4 address from the environment: it reaches Spark URLs and the servers'
    command lines."""
    value = os.environ.get(name) or default
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        address = None
    if (address is not None and address.version != 4) or (address is None and not HOST_NAME.match(value)):
        raise SetupError(f"{name}={value!r} is not a host name or an IPv4 address")
    return value


def is_loopback(host: str) -> bool:
    """True when every address `host` names is a loopback address (127.0.0.0/8, ::1)."""
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)}
    except socket.gaierror:
        return False
    return bool(addresses) and all(ipaddress.ip_address(address).is_loopback for address in addresses)


def pattern_setting(name: str, default: str, pattern: re.Pattern[str], what: str) -> str:
    value = os.environ.get(name) or default
    if not pattern.match(value):
        raise SetupError(f"{name}={value!r} is not {what}")
    return value


def memory_setting(name: str, default: str) -> str:
    return pattern_setting(name, default, MEMORY, "an amount of memory (e.g. 512m, 2g)")


def count_setting(name: str, default: int, minimum: int = 1, maximum: int | None = None) -> int:
    text = os.environ.get(name) or str(default)
    if not text.isdigit() or int(text) < minimum or (maximum is not None and int(text) > maximum):
        bound = f"{minimum}-{maximum}" if maximum is not None else f"{minimum} or more"
        raise SetupError(f"{name}={text!r} is not a whole number ({bound})")
    return int(text)


def port_setting(name: str) -> int:
    """A TCP port from the environment (default: PORT_SETTINGS), refused by name when it is not one."""
    text = os.environ.get(name) or str(PORT_SETTINGS[name])
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise SetupError(f"{name}={text!r} is not a TCP port (1-65535)")
    return int(text)


def validated_vars(project_vars: dict[str, Any]) -> dict[str, Any]:
    """Project vars as given; the schema names among them reach SQL unquoted, so checked first."""
    if "raw_schema" in project_vars:
        validate_identifier("var raw_schema", str(project_vars["raw_schema"]))
    return dict(project_vars)
