"""One commit to a table, as the table format's own metadata records it (Iceberg or Delta)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Commit:
    """One commit; partitions are tuples of the table's partition values, in partition-spec order
    (for the late-data tables: (partition_start, series_bucket)), typed as PySpark returns them
    (a timestamp is a naive datetime)."""

    version: int
    operation: str
    partitions_added: frozenset[tuple[Any, ...]]
    partitions_removed: frozenset[tuple[Any, ...]]
    records_added: int  # rows in the data files added
    records_removed: int  # rows in the data files removed
    files_added: int  # data and delete files
    files_removed: int
    rows_deleted: int = 0  # rows marked deleted by delete files (merge-on-read), not rewritten

    @property
    def partitions_touched(self) -> frozenset[tuple[Any, ...]]:
        return self.partitions_added | self.partitions_removed

    @property
    def time_partitions_touched(self) -> frozenset[Any]:
        """The first partition value (the time partition) of each partition touched."""
        return frozenset(partition[0] for partition in self.partitions_touched)
