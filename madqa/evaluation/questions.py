"""Load MADQA question sets (JSONL or the official Parquet export).

``load_questions`` returns plain Python data (lists, dicts, str, int) however
the file was stored, plus a list of human-readable problems that name the line
(JSONL) or row (Parquet, 1-based) they come from.  A row with a problem is left
out; a duplicate id is reported but kept, so matching behaves as the official
harness does (see ``metrics.match_predictions``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from madqa.errors import MadqaError
from madqa.evaluation import file_budget
from madqa.evaluation.conversations import conversation_problems

JSONL_SUFFIXES = (".jsonl", ".ndjson")
PARQUET_SUFFIXES = (".parquet", ".pq")
OPTIONAL_TEXT_FIELDS = ("document_category", "domain")
# what a question file may cost to read (issue 12: a 9 KB Parquet file of 8 x 256 MB strings took 6.3 GB; issue
# 39: an 8 KB dictionary-encoded one took 3 GB), the rest in file_budget: rows, lines and bytes as decoded
MAX_FILE_MB = 50  # on disk
MAX_PARQUET_UNCOMPRESSED_MB = 200  # as the file's own metadata says, checked before reading a row
MAX_QUESTION_CHARS = 2_000  # as the web app's question box


class QuestionFileError(MadqaError, ValueError):
    """The question file cannot be read at all (missing, unknown type, corrupt): a madqa error, so the command
    line says it in one line with exit status 2 (``run --questions``, ``eval --gold`` showed a traceback)."""


def read_jsonl(path: str | Path, error_cls: type[Exception] = QuestionFileError, budgeted: bool = True
               ) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """Return ``([(line_number, object), ...], problems)`` for a JSONL file, read line by line within the
    decoded budget of ``madqa.evaluation.file_budget`` (``budgeted=False`` only for a file madqa wrote).

    Blank lines are skipped; a line that is not valid UTF-8/JSON or not a JSON
    object becomes a problem ``"line N: ..."``.  Raises ``error_cls`` when the
    file cannot be opened or is past the budget.
    """
    return file_budget.read_jsonl(path, error_cls, budgeted)


def to_plain(value: Any) -> Any:
    """Return ``value`` with numpy arrays/scalars turned into lists and Python
    scalars (recursively through dicts and lists) and float NaN into None."""
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    tolist = getattr(value, "tolist", None)  # numpy arrays and numpy scalars
    if callable(tolist):
        return to_plain(tolist())
    return value


def integral(value: Any) -> int | None:
    """``value`` as an int when it is one (a whole float such as JSON's ``3.0`` counts), else None;
    a bool is not a number here."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _variants(value: Any, where: str, problems: list[str]) -> list[list[str]] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        problems.append(f"{where}: 'answer_variants' must be a list, got {type(value).__name__}")
        return None
    out: list[list[str]] = []
    for i, variant in enumerate(value):
        items = [variant] if isinstance(variant, str) else variant
        if not isinstance(items, list) or not all(
                isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in items):
            problems.append(f"{where}: answer_variants[{i}] must be a string or a list of strings")
            return None
        out.append([x if isinstance(x, str) else str(x) for x in items])
    return out


def _evidence(value: Any, where: str, problems: list[str]) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        problems.append(f"{where}: 'evidence' must be a list, got {type(value).__name__}")
        return None
    out: list[dict[str, Any]] = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            problems.append(f"{where}: evidence[{i}] must be an object")
            return None
        doc, page = item.get("document"), integral(item.get("page"))
        if not isinstance(doc, str) or not doc:
            problems.append(f"{where}: evidence[{i}].document must be a non-empty string")
            return None
        if page is None:
            problems.append(f"{where}: evidence[{i}].page must be an integer, "
                            f"got {item.get('page')!r}")
            return None
        out.append({**item, "document": doc, "page": page})
    return out


def normalise_question(raw: Mapping[str, Any], where: str) -> tuple[dict[str, Any] | None, list[str]]:
    """Return ``(question, problems)`` for one raw record; question is None when
    the record has a problem.  ``where`` (e.g. ``"line 3"``) prefixes problems."""
    record = to_plain(dict(raw))
    problems: list[str] = []
    if integral(record.get("id")) is not None and not isinstance(record.get("id"), str):
        record["id"] = str(integral(record["id"]))  # 1 and "1" are one id, as the harness matches them
    for field in ("id", "question"):
        value = record.get(field)
        if value is None:
            problems.append(f"{where}: missing field '{field}'")
        elif not isinstance(value, str):
            problems.append(f"{where}: '{field}' must be a string, got {type(value).__name__}")
        elif not value.strip():
            problems.append(f"{where}: '{field}' is empty")
        elif len(value) > MAX_QUESTION_CHARS:
            problems.append(f"{where}: '{field}' has {len(value):,} characters; at most {MAX_QUESTION_CHARS:,}")
    record["answer_variants"] = _variants(record.get("answer_variants"), where, problems)
    record["evidence"] = _evidence(record.get("evidence"), where, problems)
    for field in OPTIONAL_TEXT_FIELDS:
        value = record.get(field)
        if value is not None and not isinstance(value, str):
            problems.append(f"{where}: '{field}' must be a string, got {type(value).__name__}")
        record[field] = value
    problems += conversation_problems(record, where)
    problems += _scope_problems(record, where)
    return (None, problems) if problems else (record, [])


def _scope_problems(record: dict[str, Any], where: str) -> list[str]:
    """What is wrong with a question's ``scope``: the files it is asked over (a list of names; one name
    alone becomes a list of one). Whether the corpus holds them is checked when the run opens it."""
    scope = record.get("scope")
    if scope is None:
        return []
    if isinstance(scope, str):
        record["scope"] = scope = [scope]
    if not isinstance(scope, list) or not scope or not all(isinstance(n, str) and n.strip() for n in scope):
        return [f"{where}: 'scope' must be a list of file names of the corpus, got {scope!r}"]
    return []


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    return file_budget.read_parquet(path, QuestionFileError, MAX_PARQUET_UNCOMPRESSED_MB)


def load_questions(path: str | Path, unique_ids: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """Return ``(questions, problems)`` from a ``.jsonl``/``.ndjson`` or
    ``.parquet``/``.pq`` file.

    Each question has ``id``, ``question``, ``answer_variants`` (list of lists
    of str, or None), ``evidence`` (list of ``{"document", "page": int, ...}``,
    or None), ``document_category`` and ``domain`` (str or None) plus any other
    fields as they were. An integer id becomes its decimal string. With
    ``unique_ids`` (a run: ``--resume`` matches answers by id) a repeated id is
    left out with a problem, instead of kept.  Raises ``QuestionFileError`` for an unreadable file
    or an unknown extension.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        size = path.stat().st_size
    except OSError:
        size = 0  # reported by the reader below
    if size > MAX_FILE_MB * 2**20:
        raise QuestionFileError(f"{path.name} is {size / 2**20:,.0f} MB; a question file may be at most {MAX_FILE_MB} MB")
    if suffix in JSONL_SUFFIXES:
        rows, problems = read_jsonl(path)
        located = [(f"line {n}", obj) for n, obj in rows]
    elif suffix in PARQUET_SUFFIXES:
        if not path.is_file():
            raise QuestionFileError(f"cannot read {path}: no such file")
        located = [(f"row {i}", obj) for i, obj in enumerate(_read_parquet(path), start=1)]
        problems = []
    else:
        raise QuestionFileError(
            f"unknown question file type {suffix or '(none)'!r} for {path}; "
            f"expected one of {', '.join(JSONL_SUFFIXES + PARQUET_SUFFIXES)}")
    questions: list[dict[str, Any]] = []
    first_seen: dict[str, str] = {}
    turns_seen: dict[tuple[str, int], str] = {}
    for where, raw in located:
        question, issues = normalise_question(raw, where)
        problems.extend(issues)
        if question is None:
            continue
        qid = question["id"]
        turn = (question["conversation_id"], question["turn"]) if question.get("conversation_id") else None
        if turn is not None and turn in turns_seen:
            problems.append(f"{where}: turn {turn[1]} of conversation {turn[0]!r} is also at {turns_seen[turn]}: "
                            "left out")
            continue
        if turn is not None:
            turns_seen[turn] = where
        if qid in first_seen:
            if unique_ids:
                problems.append(f"{where}: duplicate id {qid!r} (first at {first_seen[qid]}): left out, since "
                                "answers are matched by id")
                continue
            problems.append(f"{where}: duplicate id {qid!r} (first at {first_seen[qid]})")
        else:
            first_seen[qid] = where
        questions.append(question)
    return questions, sorted(problems, key=_location)


def _location(problem: str) -> int:
    """Sort key: the line/row number a problem starts with (stable otherwise)."""
    head = problem.split(":", 1)[0].split()
    return int(head[1]) if len(head) == 2 and head[1].isdigit() else 0
