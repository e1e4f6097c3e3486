"""Bad records: the per-dataset policy, the error that names the record, the reject file, the counts.

A record is *bad* when it cannot be read as the schema says: the wrong number of fields,
broken quoting, text that is not UTF-8, invalid JSON, a value that is not a number in a numeric
column, a number out of range, a required value missing. The policy decides what happens:

- ``error``: reading stops with a :class:`DataError` naming the file, the line (or row), the
  column and the offending text.
- ``skip``: the record is dropped, counted once (however many of its values are bad), and
  written with its reasons to the reject file.
- ``default``: the bad value is replaced by the column's default and counted (written to the
  reject file too). A record that has no single bad value to replace (wrong field count,
  broken quoting, invalid JSON) or whose column has no default is skipped instead, and counted
  as skipped.

Missing values that the schema allows (see ``schema.py``) are not bad records; they are counted
as ``filled`` when a default was put in their place.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import threading

from sparseflow._src.framework import errors


class BadRecordPolicy(enum.StrEnum):
    ERROR = "error"
    SKIP = "skip"
    DEFAULT = "default"

    @classmethod
    def of(cls, value) -> BadRecordPolicy:
        try:
            return cls(value.value if isinstance(value, cls) else str(value).lower())
        except ValueError:
            raise ValueError(f"Unknown bad-record policy {value!r}; expected 'error', 'skip' or 'default'") from None


@dataclasses.dataclass
class BadRecord:
    """Where a bad record is and why it is bad."""

    path: str
    line: int | None  # 1-based line of a text file (None when unknown)
    row: int | None  # 1-based record number in a Parquet file
    column: str | None  # None for a record-level problem
    reason: str
    text: str  # the offending value (or the record's text for record-level problems)
    record: str | None = None  # the whole record, when known
    also: list = dataclasses.field(default_factory=list)  # more bad values of the record: (column, reason, text)

    def where(self) -> str:
        loc = f"{self.path}:{self.line}" if self.line is not None else \
            f"{self.path} row {self.row}" if self.row is not None else self.path
        return loc + (f", column {self.column!r}" if self.column else "")

    def message(self) -> str:
        more = "".join(f"; column {c!r}: {why}: {_clip(t)!r}" for c, why, t in self.also)
        return f"{self.where()}: {self.reason}: {_clip(self.text)!r}{more}"

    def to_json(self, action: str) -> str:
        d = {"path": self.path, "line": self.line, "row": self.row, "column": self.column,
             "reason": self.reason, "text": self.text, "record": self.record, "action": action,
             "also": [{"column": c, "reason": why, "text": t} for c, why, t in self.also] or None}
        return json.dumps({k: v for k, v in d.items() if v is not None}, ensure_ascii=False)


def _clip(s: str, n: int = 200) -> str:
    return s if len(s) <= n else s[:n] + "..."


class DataError(errors.InvalidArgumentError):
    """A bad record under the ``error`` policy; ``record`` tells where and why."""

    def __init__(self, record: BadRecord):
        super().__init__(None, None, record.message())
        self.record = record

    path = property(lambda self: self.record.path)
    line = property(lambda self: self.record.line)
    column = property(lambda self: self.record.column)
    text = property(lambda self: self.record.text)

    def __reduce__(self):
        return type(self), (self.record,)


class CorruptFileError(errors.DataLossError):
    """A file that cannot be read to its end (a truncated or corrupt compressed stream): always
    an error, whatever the policy, because the records it lost cannot be counted."""


def text_of(value) -> str:
    """Printable text of a raw field (bytes that are not UTF-8 are shown with escapes)."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return str(value)


class ReadStats:
    """Counts of one pass over a dataset (thread-safe)."""

    def __init__(self, policy: BadRecordPolicy, reject_path: str | None):
        self.policy = policy
        self.reject_path = reject_path
        self.files = 0
        self.rows_read = 0  # records seen (good and bad), blank lines excluded
        self.rows_out = 0  # records produced
        self.skipped: dict[str, int] = {}  # reason -> count
        self.defaulted: dict[str, int] = {}  # column -> bad values replaced by the default
        self.filled: dict[str, int] = {}  # column -> missing values replaced by the default
        self.complete = False
        self._lock = threading.Lock()
        self._reject = None

    def add_block(self, rows_read: int, rows_out: int, filled: dict, bad: list[tuple[BadRecord, str]]):
        """Counts of one block; ``bad`` are (record, action) pairs, in file order."""
        with self._lock:
            self.rows_read += rows_read
            self.rows_out += rows_out
            for col, n in filled.items():
                if n:
                    self.filled[col] = self.filled.get(col, 0) + int(n)
            for rec, action in bad:
                if action == "skip":
                    self.skipped[rec.reason] = self.skipped.get(rec.reason, 0) + 1
                else:
                    self.defaulted[rec.column] = self.defaulted.get(rec.column, 0) + 1
                if self.reject_path is not None:
                    if self._reject is None:
                        self._reject = open(self.reject_path, "w", encoding="utf-8")  # noqa: SIM115
                    self._reject.write(rec.to_json(action) + "\n")
            if self._reject is not None:
                self._reject.flush()

    def add_file(self):
        with self._lock:
            self.files += 1

    def close(self, complete: bool):
        with self._lock:
            self.complete = complete
            if self._reject is not None:
                self._reject.close()
                self._reject = None
            elif self.reject_path is not None:  # a pass without bad records: an empty reject file
                open(self.reject_path, "w", encoding="utf-8").close()

    @property
    def num_skipped(self) -> int:
        return sum(self.skipped.values())

    @property
    def num_defaulted(self) -> int:
        return sum(self.defaulted.values())

    def summary(self) -> dict:
        return {"files": self.files, "rows_read": self.rows_read, "rows_out": self.rows_out,
                "skipped": self.num_skipped, "skipped_by_reason": dict(self.skipped),
                "defaulted": self.num_defaulted, "defaulted_by_column": dict(self.defaulted),
                "filled_by_column": dict(self.filled), "policy": self.policy.value,
                "reject_file": self.reject_path, "complete": self.complete}

    def __repr__(self):
        return f"ReadStats({self.summary()})"
