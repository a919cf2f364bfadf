"""The files of a Delta table's `_delta_log`: its commit and checkpoint files' names, and listing and
reading them on a local disk or through Hadoop's file system (any store Spark reads)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlparse

COMMIT_FILE = re.compile(r"^(\d{20})\.json$")


# Classic checkpoints: one file, or parts `<version>.checkpoint.<part>.<parts>.parquet`.
CHECKPOINT_FILE = re.compile(r"^(\d{20})\.checkpoint(?:\.(\d{10})\.(\d{10}))?\.parquet$")
# V2 checkpoints (`<version>.checkpoint.<uuid>.json|parquet`, with sidecar files) are not read.
V2_CHECKPOINT_FILE = re.compile(r"^(\d{20})\.checkpoint\.[0-9a-fA-F-]{36}\.(json|parquet)$")


# Reads the given checkpoint files (full paths) into actions: dicts with one key per action
# present (add, remove, metaData, protocol, ...), like the lines of a JSON commit file.
CheckpointReader = Callable[[list[str]], list[dict[str, Any]]]


class DeltaLogError(RuntimeError):
    """The log cannot answer the question faithfully; the message says why."""


class LogFiles(Protocol):
    """The `_delta_log` directory of one table, wherever it is stored."""

    location: str  # the table's root, as the catalog reports it

    def names(self) -> list[str]: ...

    def read_text(self, name: str) -> str: ...

    def identity(self, name: str) -> tuple[Any, ...]:
        """What distinguishes this file from an earlier file of the same name (a table dropped and
        re-created at the same location writes its version 0 again): size and modification time."""
        ...

    def path_of(self, name: str) -> str: ...


def local_path(location: str) -> Path:
    """A local path from a location Spark reports (`file:/...`, `file:///...` or a plain path)."""
    if location.startswith("file:"):
        return Path(unquote(urlparse(location).path))
    return Path(location)


def is_local(location: str) -> bool:
    return location.startswith(("file:", "/"))


class LocalLogFiles:
    def __init__(self, location: str | Path):
        self.location = str(location)
        self.directory = local_path(self.location) / "_delta_log"

    def names(self) -> list[str]:
        try:
            return os.listdir(self.directory)
        except FileNotFoundError:
            raise DeltaLogError(f"{self.directory} does not exist: {self.location} is not a Delta table") from None

    def read_text(self, name: str) -> str:
        try:
            return (self.directory / name).read_text()
        except FileNotFoundError:
            raise DeltaLogError(f"{self.directory / name} vanished while the log was read") from None

    def identity(self, name: str) -> tuple[Any, ...]:
        status = (self.directory / name).stat()
        return (status.st_size, status.st_mtime_ns)

    def path_of(self, name: str) -> str:
        return str(self.directory / name)


class HadoopLogFiles:
    """The log through Hadoop's FileSystem of a running Spark (hdfs://, s3a://, ...), via py4j."""

    def __init__(self, spark: Any, location: str):
        self.location = location
        self._jvm = spark._jvm
        self._directory = self._jvm.org.apache.hadoop.fs.Path(location.rstrip("/") + "/_delta_log")
        self._fs = self._directory.getFileSystem(spark._jsc.hadoopConfiguration())
        self._statuses: dict[str, Any] = {}

    def names(self) -> list[str]:
        if not self._fs.exists(self._directory):
            raise DeltaLogError(f"{self._directory.toString()} does not exist: {self.location} is not a Delta table")
        self._statuses = {status.getPath().getName(): status for status in self._fs.listStatus(self._directory)}
        return list(self._statuses)

    def read_text(self, name: str) -> str:
        stream = self._fs.open(self._jvm.org.apache.hadoop.fs.Path(self._directory, name))
        try:
            return str(self._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
        finally:
            stream.close()

    def identity(self, name: str) -> tuple[Any, ...]:
        status = self._statuses.get(name) or self._fs.getFileStatus(
            self._jvm.org.apache.hadoop.fs.Path(self._directory, name)
        )
        return (status.getLen(), status.getModificationTime())

    def path_of(self, name: str) -> str:
        return f"{self._directory.toString()}/{name}"
