"""What a failed dbt command says to its user: dbt's own error for the invocation and each failed
node, condensed to a line or a few (no Java stack), and a metastore that cannot be opened said so."""

from __future__ import annotations

import re
from typing import Any

from late_data.runtime.environment import ProjectEnvironment
from late_data.runtime.settings import SetupError


class DbtInvocationError(RuntimeError):
    """A dbt command failed; the message carries dbt's own error."""


def describe_command(args: list[str]) -> str:
    """A dbt command as a user would recognise it: its name and what it selects, without the vars
    (which the caller's message gives where they matter)."""
    shown, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("--vars", "--resource-type", "--project-dir", "--profiles-dir", "--log-path"):
            skip = True
        else:
            shown.append(arg)
    return " ".join(shown)


# What dbt reports when Spark cannot open the Hive metastore (the JVM's stderr has the cause,
# e.g. Derby's XSDB6 "Another instance of Derby may have already booted the database").
METASTORE_UNAVAILABLE = (
    "XSDB6",
    "Another instance of Derby",
    "Unable to instantiate org.apache.hadoop.hive.ql.metadata.SessionHiveMetaStoreClient",
)


def read_from(path: Any, offset: int) -> str:
    """What a log file gained since `offset` (empty when it does not exist)."""
    try:
        with open(path, errors="replace") as file:
            file.seek(offset)
            return file.read()
    except OSError:
        return ""


class NodeErrors:
    """A dbt callback keeping the error dbt reports for each node (RunResultError events, and the
    exception of a node that failed while it compiled, CatchableExceptionOnRun). A failed ephemeral
    model has no run result of its own: its error shows only there, and the model that refs it is
    marked skipped with a message naming it (or naming the ephemeral in between)."""

    def __init__(self) -> None:
        self.by_node: dict[str, str] = {}

    def __call__(self, event: Any) -> None:
        name = event.info.name
        if name in ("RunResultError", "CatchableExceptionOnRun") and event.data.node_info.unique_id:
            message = event.data.msg if name == "RunResultError" else event.data.exc
            self.by_node.setdefault(event.data.node_info.unique_id, message)


def describe_failure(
    outcome: Any,
    log_text: str = "",
    environment: ProjectEnvironment | None = None,
    node_errors: dict[str, str] | None = None,
) -> str:
    """dbt's own error for a failed invocation: the exception, else each failed node's message, and
    for a model skipped because an ephemeral model it refs failed, that model's error (from
    `node_errors`, NodeErrors.by_node). Not every result names a node (a run-operation's results
    carry only a unique_id, and a failure to open the metastore leaves no message), and a metastore
    that cannot be opened is said so."""
    messages = [condense(str(outcome.exception))] if outcome.exception is not None else []
    for result in getattr(outcome.result, "results", None) or []:
        status = str(getattr(result, "status", ""))
        node = getattr(result, "node", None)
        unique_id = getattr(node, "unique_id", None) or getattr(result, "unique_id", None) or "dbt"
        message = getattr(result, "message", None)
        if status in ("error", "fail"):
            message = message or logged_error(log_text)
            messages.append(f"{unique_id}: {condense(message) if message else 'failed without a message'}")
        elif status == "skipped" and message:
            # dbt gives a skip a message only for an ephemeral's failure, ending with its unique_id;
            # the error itself may be an ephemeral that one reads (all of them are named then).
            errors = {node: condense(error) for node, error in (node_errors or {}).items() if error != message}
            cause = errors.get(message.rsplit(" ", 1)[-1]) or "; ".join(errors.values())
            messages.append(f"{unique_id}: {condense(message)}" + (f"; {cause}" if cause else ""))
    described = "; ".join(messages) or "see the dbt log in LATE_DATA_HOME/logs"
    if any(sign in text for sign in METASTORE_UNAVAILABLE for text in (described, log_text)):
        return f"{metastore_unavailable(environment)} ({described})"
    return described


# dbt's log line for an error it reports without a result message (a failed run-operation).
_LOGGED_ERROR = re.compile(r"\[error\] \[\w+\]: Encountered an error[^:]*: (.*?)(?=\n\S|\Z)", re.DOTALL)


def logged_error(log_text: str) -> str | None:
    """The last error dbt logged with "Encountered an error ...", with its indented lines."""
    found = _LOGGED_ERROR.findall(log_text)
    return found[-1] if found else None


# The header lines dbt and py4j put before the error itself, and a Java stack trace's own lines.
_NOT_THE_ERROR = re.compile(
    r"^(Runtime Error|Compilation Error|Database Error|Parsing Error)( in .*)?$|^An error occurred while calling"
    r"|^at |^\.\.\. \d+ more|^Suppressed:|^Driver stacktrace"
)
# A Java exception's package, dropped from its class name (org.apache.spark.sql.AnalysisException).
_JAVA_PACKAGE = re.compile(r"\b(?:[a-z][a-z0-9_]*\.)+(?=[A-Z]\w*(?:Exception|Error)\b)")
ERROR_LENGTH = 400


def condense(message: str) -> str:
    """One line of an error that may carry a Java stack trace (dbt passes Spark's on whole): the
    innermost cause when there is one, else the first line that is not a header; Java packages
    left out, at most ERROR_LENGTH characters. The whole error stays in the dbt log."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    causes = [line.removeprefix("Caused by:").strip() for line in lines if line.startswith("Caused by:")]
    body = [line for line in lines if not _NOT_THE_ERROR.match(line)]
    text = causes[-1] if causes else (body or lines or [""])[0].lstrip(": ")
    if text.endswith(":") and not causes and len(body) > 1:
        text = f"{text} {body[1]}"  # a header that introduces its detail on the next line
    text = _JAVA_PACKAGE.sub("", text)
    return text if len(text) <= ERROR_LENGTH else text[: ERROR_LENGTH - 3] + "..."


def metastore_unavailable(environment: ProjectEnvironment | None) -> str:
    if environment is not None and environment.shares_catalog:
        return (
            "Spark could not reach the shared Hive metastore: check `late-data cluster status` "
            "(and LATE_DATA_METASTORE_URI / LATE_DATA_CLUSTER_HOST)"
        )
    where = f"{environment.home}/metastore_db" if environment is not None else "LATE_DATA_HOME/metastore_db"
    return (
        f"the Hive metastore could not be opened: its embedded Derby database {where} is in use by "
        "another process (Derby admits one JVM: a Thrift Server, a plain dbt command or a notebook on the "
        "same LATE_DATA_HOME). Stop that process, set LATE_DATA_HOME to another directory, or share one "
        "catalog between processes: `late-data cluster up` and LATE_DATA_TARGET=cluster or thrift "
        "(docs/cluster.md)"
    )


# Spark's message for a table that is not there, with the table's name.
_MISSING_TABLE = re.compile(r"\[TABLE_OR_VIEW_NOT_FOUND\] The table or view (\S+) cannot be found")


def describe_error(error: BaseException) -> str:
    """What a command's error says to its user, in one line: the project's own errors as they are,
    a missing table with what builds it, anything else condensed (LATE_DATA_DEBUG=1 or -v prints
    the traceback too)."""
    if isinstance(error, (SetupError, DbtInvocationError, ValueError)) and "\n" not in str(error):
        return str(error)
    missing = _MISSING_TABLE.search(str(error))
    if missing:
        return (
            f"table {missing.group(1).replace('`', '')} does not exist: build the pipelines first"
            " (`late-data schedule`, or `dbt build`), or check LATE_DATA_HOME and LATE_DATA_SCHEMA"
        )
    return f"{type(error).__name__}: {condense(str(error))} (LATE_DATA_DEBUG=1 prints the traceback)"
