"""Reading a question or prediction file within a decoded budget (issue 39).

What a file says about itself is not what it costs to read: a dictionary-encoded Parquet column declares
its dictionary once (1 MB) and decodes a copy per row, so an 8,469-byte file took the server from 490 MB to
3,538 MB; a JSONL file of 50 MB of ``{},`` is 17 million dicts. So both readers here count rows and bytes
**as decoded**, a batch (Parquet) or a line (JSONL) at a time, before a Python object is made of them, and
refuse the whole file with a clear message once it is past the budget: memory stays bounded by the budget
whatever the file declares. ``madqa.evaluation.questions`` re-exports ``read_jsonl`` and reads Parquet here;
every reader of a visitor's file (Evaluate, the diff, Steer's scoring) and the CLI go through them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_ROWS = 200_000  # rows of a question or prediction file (MADQA has 2,250 questions)
MAX_LINE_MB = 4  # one JSONL line: a prediction row with its trajectory is tens of KB
MAX_DECODED_MB = 200  # what a file's rows decode to, counted as they are read
MAX_LINES = 1_000_000  # JSONL lines, blank ones included: each costs a step to skip
MAX_PARQUET_VALUES = 10_000_000  # leaf values of a Parquet file (lists of lists), as its metadata counts them
READ_BATCH_ROWS = 256  # Parquet rows decoded at a time
VALUE_COST = 64  # bytes a decoded value costs as a Python object, beyond its text (a str, a dict's slot)


@dataclass
class Budget:
    """Bytes decoded so far against the limit; ``spend`` raises ``error_cls`` past it."""

    name: str
    error_cls: type[Exception]
    limit: int
    used: int = 0

    def spend(self, amount: int, where: str) -> None:
        self.used += amount
        if self.used > self.limit:
            raise self.error_cls(f"{self.name} decodes to more than {self.limit / 2**20:,.0f} MB by {where}; a "
                                 f"question or prediction file may decode to at most {self.limit / 2**20:,.0f} MB")


def jsonl_cost(line: bytes) -> int:
    """What one JSON line may cost once parsed, counted on its bytes: its text plus ``VALUE_COST`` per value
    it can hold (each ``,``, ``{`` and ``[`` starts at most one); commas inside strings count too, so this
    errs high, never low."""
    return len(line) + VALUE_COST * (line.count(b",") + line.count(b"{") + line.count(b"[") + 1)


def _parsed_line(number: int, line: bytes, problems: list[str]) -> dict[str, Any] | None:
    if number == 1 and line.startswith(b"\xef\xbb\xbf"):
        line = line[3:]
    try:
        obj = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        problems.append(f"line {number}: not valid UTF-8")
        return None
    except json.JSONDecodeError as exc:
        problems.append(f"line {number}: invalid JSON ({exc.msg} at column {exc.colno})")
        return None
    except RecursionError:
        problems.append(f"line {number}: nested too deeply to read")
        return None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        problems.append(f"line {number}: {exc}"[:200])
        return None
    if not isinstance(obj, dict):
        problems.append(f"line {number}: expected a JSON object, got {type(obj).__name__}")
        return None
    return obj


def read_jsonl(path: str | Path, error_cls: type[Exception], budgeted: bool = True
               ) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """Return ``([(line_number, object), ...], problems)`` for a JSONL file, read line by line.

    Blank lines are skipped; a line that is not valid UTF-8/JSON or not a JSON object becomes a problem
    ``"line N: ..."``. Raises ``error_cls`` when the file cannot be opened, or (``budgeted``, the default)
    when it has a line over ``MAX_LINE_MB``, more than ``MAX_ROWS`` rows or ``MAX_LINES`` lines, or decodes to
    more than ``MAX_DECODED_MB``: checked on each line's bytes before it is parsed. Unbudgeted is for a file
    madqa wrote itself (a run's own rows, read back to resume), which must never be refused.
    """
    path = Path(path)
    budget = Budget(path.name, error_cls, MAX_DECODED_MB * 2**20)
    line_limit = MAX_LINE_MB * 2**20 if budgeted else -1
    rows: list[tuple[int, dict[str, Any]]] = []
    problems: list[str] = []
    try:
        with path.open("rb") as handle:
            number = 0
            while line := handle.readline(line_limit + 1 if budgeted else -1):
                number += 1
                if budgeted:
                    _check_line(path.name, number, line, len(rows), error_cls)
                if not line.strip():
                    continue
                if budgeted:
                    budget.spend(jsonl_cost(line), f"line {number:,}")
                obj = _parsed_line(number, line.rstrip(b"\r\n"), problems)
                if obj is not None:
                    rows.append((number, obj))
    except OSError as exc:
        raise error_cls(f"cannot read {path}: {exc}") from exc
    return rows, problems


def _check_line(name: str, number: int, line: bytes, rows: int, error_cls: type[Exception]) -> None:
    if len(line.rstrip(b"\r\n")) > MAX_LINE_MB * 2**20:
        raise error_cls(f"{name}: line {number:,} is longer than {MAX_LINE_MB} MB; a line of a question or "
                        f"prediction file may be at most {MAX_LINE_MB} MB")
    if number > MAX_LINES:
        raise error_cls(f"{name} has more than {MAX_LINES:,} lines; a question or prediction file may have "
                        f"at most {MAX_LINES:,}")
    if rows >= MAX_ROWS and line.strip():
        raise error_cls(f"{name} has more than {MAX_ROWS:,} rows; a question or prediction file may have at "
                        f"most {MAX_ROWS:,}")


def decoded_bytes(array: Any) -> int:
    """What an Arrow array holds once decoded, without decoding it: a dictionary-encoded string column counts
    each row's own copy of its value (the dictionary's lengths taken by the row's index), lists and structs
    their children, anything else its buffers."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        values = kind.value_type
        if not (pa.types.is_string(values) or pa.types.is_large_string(values) or pa.types.is_binary(values)
                or pa.types.is_large_binary(values)):
            return int(array.indices.nbytes + array.dictionary.nbytes)
        total = pc.sum(pc.binary_length(array.dictionary).take(array.indices)).as_py()
        return int(total or 0) + int(array.indices.nbytes)
    if pa.types.is_map(kind):
        return decoded_bytes(array.keys) + decoded_bytes(array.items) + 8 * len(array)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return decoded_bytes(array.flatten()) + 8 * len(array)
    if pa.types.is_struct(kind):
        return sum(decoded_bytes(child) for child in array.flatten())
    return int(array.nbytes)


def read_parquet(path: Path, error_cls: type[Exception], declared_mb: int) -> list[dict[str, Any]]:
    """The rows of a Parquet file as plain dicts, refused with ``error_cls`` when its metadata declares more
    than ``MAX_ROWS`` rows, ``declared_mb`` MB unpacked or ``MAX_PARQUET_VALUES`` values, or when its rows,
    counted batch by batch as they decode, come to more than ``MAX_DECODED_MB``. String columns are read as
    dictionaries, so a batch costs its dictionary and indices, not a copy of a value per row, until it is
    counted."""
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - pyarrow is in requirements.txt
        raise error_cls("reading Parquet needs pyarrow") from exc
    try:
        handle = pq.ParquetFile(path)
        meta, schema = handle.metadata, handle.schema
    except Exception as exc:  # pyarrow raises several unrelated error types
        raise error_cls(f"cannot read Parquet file {path}: {exc}") from exc
    groups = [meta.row_group(i) for i in range(meta.num_row_groups)]
    unpacked = sum(g.total_byte_size for g in groups)
    values = sum(g.column(c).num_values for g in groups for c in range(g.num_columns))
    if meta.num_rows > MAX_ROWS:
        raise error_cls(f"{path.name} has {meta.num_rows:,} rows; a question file may have at most {MAX_ROWS:,}")
    if unpacked > declared_mb * 2**20:
        raise error_cls(f"{path.name} unpacks to {unpacked / 2**20:,.0f} MB; a question file may unpack to "
                        f"at most {declared_mb} MB")
    if values > MAX_PARQUET_VALUES:
        raise error_cls(f"{path.name} holds {values:,} values; a question file may hold at most "
                        f"{MAX_PARQUET_VALUES:,}")
    strings = [schema.column(i).path for i in range(len(schema)) if schema.column(i).physical_type == "BYTE_ARRAY"]
    budget = Budget(path.name, error_cls, MAX_DECODED_MB * 2**20)
    rows: list[dict[str, Any]] = []
    try:
        batches = pq.ParquetFile(path, read_dictionary=strings).iter_batches(batch_size=READ_BATCH_ROWS)
        for batch in batches:
            cost = sum(decoded_bytes(column) for column in batch.columns)
            budget.spend(cost + VALUE_COST * batch.num_rows * max(1, batch.num_columns),
                         f"row {len(rows) + batch.num_rows:,}")
            rows.extend(batch.to_pylist())
    except error_cls:
        raise
    except Exception as exc:  # pyarrow raises several unrelated error types
        raise error_cls(f"cannot read Parquet file {path}: {exc}") from exc
    return rows
