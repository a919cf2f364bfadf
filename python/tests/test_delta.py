"""Delta: the pinned release is what Spark loads, and the commit-log proofs hold on Delta tables.

The start-up checks are tested with fake jars on every machine. The proofs on real Delta tables
need Delta's jars, which no package registry ships: they run where the jars can be had (DELTA_JARS,
Spark's Ivy cache, or LATE_DATA_DELTA_MAVEN=1) and are skipped with that reason elsewhere."""

from __future__ import annotations

import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from late_data.runtime.delta_jars import (
    check_delta_classpath,
    check_delta_jars,
    check_delta_setup,
    check_delta_spark_pair,
    delta_jars_unavailable,
    installed_version,
    jvm_delta_version,
)
from late_data.runtime.environment import prepare_environment
from late_data.runtime.settings import SetupError

PINNED = installed_version("delta-spark") or ""


def jar(directory: Path, name: str, entries: dict[str, str] | None = None) -> Path:
    path = directory / name
    with zipfile.ZipFile(path, "w") as archive:
        for entry, text in (entries or {"META-INF/MANIFEST.MF": "Manifest-Version: 1.0\n"}).items():
            archive.writestr(entry, text)
    return path


def test_the_pinned_pair_works_and_the_broken_one_is_refused() -> None:
    assert PINNED == "3.3.3"  # requirements.txt
    check_delta_spark_pair(PINNED, installed_version("pyspark") or "")
    check_delta_spark_pair("3.3.2", "3.5.5")  # before apache/spark#50739
    with pytest.raises(SetupError, match=r"delta-spark==3\.3\.2 does not work with pyspark==3\.5\.9.*truncate"):
        check_delta_spark_pair("3.3.2", "3.5.9")


def test_delta_jars_of_the_pinned_release_pass(tmp_path: Path) -> None:
    spark_jar, storage_jar = jar(tmp_path, "delta-spark_2.12-3.3.3.jar"), jar(tmp_path, "delta-storage-3.3.3.jar")
    other = jar(tmp_path, "antlr4-runtime-4.9.3.jar")  # a dependency listed too is left alone
    assert check_delta_jars(f"{spark_jar}, {storage_jar},{other}", "3.3.3") == [spark_jar, storage_jar]
    assert check_delta_setup(f"{spark_jar},{storage_jar}") == PINNED


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (
            ["delta-spark_2.12-3.3.2.jar", "delta-storage-3.3.2.jar"],
            r"DELTA_JARS holds delta-spark_2\.12-3\.3\.2\.jar \(Delta 3\.3\.2\) but the installed Python package"
            r" delta-spark is 3\.3\.3: set DELTA_JARS to delta-spark_2\.12-3\.3\.3\.jar",
        ),
        (["delta-spark_2.12-3.3.3.jar", "delta-storage-3.2.0.jar"], r"delta-storage-3\.2\.0\.jar \(Delta 3\.2\.0\)"),
        (["delta-spark_2.13-3.3.3.jar", "delta-storage-3.3.3.jar"], r"built for Scala 2\.13"),
        (["delta-spark_2.12-3.3.3.jar"], r"has no delta-storage jar: it needs delta-storage-3\.3\.3\.jar"),
    ],
)
def test_delta_jars_of_another_release_are_refused_naming_both(tmp_path: Path, names: list[str], message: str) -> None:
    paths = ",".join(str(jar(tmp_path, name)) for name in names)
    with pytest.raises(SetupError, match=message):
        check_delta_jars(paths, "3.3.3")


def test_renamed_jars_are_judged_by_their_manifest(tmp_path: Path) -> None:
    def delta_jar(name: str, marker: str, version: str | None) -> Path:
        manifest = "Manifest-Version: 1.0\n" + (f"Implementation-Version: {version}\n" if version else "")
        return jar(tmp_path, name, {"META-INF/MANIFEST.MF": manifest, marker: ""})

    spark_jar = delta_jar("delta.jar", "io/delta/sql/DeltaSparkSessionExtension.class", "3.3.2")
    storage_jar = delta_jar("storage.jar", "io/delta/storage/LogStore.class", "3.3.3")
    with pytest.raises(SetupError, match=r"delta\.jar \(Delta 3\.3\.2\)"):
        check_delta_jars(f"{spark_jar},{storage_jar}", "3.3.3")
    unversioned = delta_jar("mystery.jar", "io/delta/sql/DeltaSparkSessionExtension.class", None)
    with pytest.raises(SetupError, match="whose version cannot be told"):
        check_delta_jars(f"{unversioned},{storage_jar}", "3.3.3")


def test_a_missing_jar_is_refused_at_start_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LATE_DATA_TABLE_FORMAT", "delta")
    monkeypatch.delenv("LATE_DATA_TARGET", raising=False)
    monkeypatch.setenv("DELTA_JARS", f"{tmp_path}/delta-spark_2.12-3.3.3.jar")
    with pytest.raises(SetupError, match=r"DELTA_JARS names .*delta-spark_2\.12-3\.3\.3\.jar, which does not exist"):
        prepare_environment()


def test_the_loaded_classes_are_checked_against_the_pinned_release() -> None:
    def jvm(version: str | None) -> Any:
        if version is None:
            return SimpleNamespace(io=SimpleNamespace(delta=SimpleNamespace()))  # no `package` class
        return SimpleNamespace(
            io=SimpleNamespace(delta=SimpleNamespace(package=SimpleNamespace(VERSION=lambda: version)))
        )

    assert jvm_delta_version(jvm("3.3.3")) == "3.3.3"
    check_delta_classpath(jvm("3.3.3"), "3.3.3")
    with pytest.raises(
        SetupError, match=r"Spark loaded Delta 3\.3\.2 but the installed Python package delta-spark is 3\.3\.3"
    ):
        check_delta_classpath(jvm("3.3.2"), "3.3.3")
    with pytest.raises(SetupError, match="Delta's classes are not on Spark's classpath"):
        check_delta_classpath(jvm(None), "3.3.3")


def test_the_classes_spark_loaded_are_the_pinned_release(project: Any) -> None:
    """On a Delta session, Spark's own io.delta.VERSION; on Iceberg, that Delta is absent."""
    loaded = jvm_delta_version(project.spark._jvm)
    if project.environment.table_format != "delta":
        assert loaded is None or loaded == PINNED
        pytest.skip("this session runs on Iceberg: the Delta classpath is checked where the suite runs on Delta")
    assert loaded == PINNED


def test_delta_jars_are_found_in_delta_jars_the_ivy_cache_or_by_maven(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("DELTA_JARS", "LATE_DATA_DELTA_MAVEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LATE_DATA_IVY_DIR", str(tmp_path))
    assert "Delta's jars are not available" in (delta_jars_unavailable("3.3.3") or "")
    (tmp_path / "jars").mkdir()
    for name in ("io.delta_delta-spark_2.12-3.3.3.jar", "io.delta_delta-storage-3.3.3.jar"):
        (tmp_path / "jars" / name).touch()
    assert delta_jars_unavailable("3.3.3") is None
    assert delta_jars_unavailable("3.3.4") is not None
    monkeypatch.setenv("LATE_DATA_DELTA_MAVEN", "1")
    assert delta_jars_unavailable("3.3.4") is None


def test_delta_bench_cells_are_skipped_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from late_data.cli import main

    for name in ("DELTA_JARS", "LATE_DATA_DELTA_MAVEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LATE_DATA_IVY_DIR", str(tmp_path))
    assert main(["bench", "--table-format", "delta", "--cell", "100:2:heavy", "--out", str(tmp_path)]) == 0
    assert "bench: Delta cells skipped: Delta's jars are not available" in capsys.readouterr().out
    assert not (tmp_path / "results.csv").exists()
