"""Leaderboard export: exactly the fields the official MADQA harness reads, checked first.

The harness (``eval/evaluate.py`` in OxRML/MADQA) reads per row ``question`` (matched after
stripping, then ``id`` as a fallback), ``answer``, ``citations`` (``file`` or ``document``, and
``page``), ``search_history`` (its length is the effort) and ``iterations`` (the effort when the
history is empty). It never complains: an unmatched row is dropped with a count, a 0-based page
simply scores zero. ``check_rows`` names every such problem by line so a file is fixed before
it is submitted; ``leaderboard_row`` keeps only those fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from madqa.evaluation import metrics as m
from madqa.evaluation.questions import integral

if TYPE_CHECKING:
    from madqa.contract import Corpus

LEADERBOARD_FIELDS = ("id", "question", "answer", "citations", "search_history", "iterations")


def _citation_problems(citations: Any, where: str, corpus: Corpus | None) -> list[str]:
    if not isinstance(citations, list):
        return [f"{where}: 'citations' must be a list, got {type(citations).__name__}"]
    problems = []
    for i, c in enumerate(citations):
        if not isinstance(c, Mapping):
            problems.append(f"{where}: citations[{i}] must be an object with 'file' and 'page'")
            continue
        file, page = m.citation_document(c), integral(c.get("page"))
        if not isinstance(file, str) or not file:
            problems.append(f"{where}: citations[{i}] has no 'file' (or 'document')")
            continue
        if page is None:
            problems.append(f"{where}: citations[{i}] page must be an integer, got {c.get('page')!r}")
        elif page < 1:
            problems.append(f"{where}: citations[{i}] page {page} of {file}: pages are 1-based (0-based numbering?)")
        elif corpus is not None:
            doc = corpus.documents.get(file)
            if doc is None:
                problems.append(f"{where}: citations[{i}] cites {file!r}, which is not in the corpus")
            elif page > doc.pages:
                problems.append(f"{where}: citations[{i}] page {page} of {file} is out of range "
                                f"(it has {doc.pages} pages)")
    return problems


def check_rows(located: Sequence[tuple[int, Any]], gold: Sequence[Mapping[str, Any]] | None = None,
               corpus: Corpus | None = None) -> list[str]:
    """Every reason the rows (``(line number, row)``) cannot go to the leaderboard, ``"line N: ..."``.

    With ``gold``: each row must match a question of the set (the harness's matching). With
    ``corpus``: each citation must name one of its files and a page it has.
    """
    problems: list[str] = []
    by_text: dict[str, int] = {}
    by_id: dict[str, int] = {}
    rows = [row for _, row in located]
    unmatched = set(m.match_predictions(rows, gold)[1]) if gold is not None else set()
    for index, (line, row) in enumerate(located):
        where = f"line {line}"
        if not isinstance(row, Mapping):
            problems.append(f"{where}: expected a JSON object")
            continue
        question, qid = row.get("question"), row.get("id")
        if not isinstance(question, str) or not question.strip():
            problems.append(f"{where}: no 'question' text (the harness matches on it)")
        else:
            text = question.strip()
            if text in by_text:
                problems.append(f"{where}: duplicate question (first at line {by_text[text]})")
            by_text.setdefault(text, line)
        if isinstance(qid, str) and qid:
            if qid in by_id:
                problems.append(f"{where}: duplicate id {qid!r} (first at line {by_id[qid]})")
            by_id.setdefault(qid, line)
        if gold is not None and index in unmatched:
            problems.append(f"{where}: question {str(question)[:60]!r} (id {qid!r}) is not in the question set")
        if row.get("error"):
            problems.append(f"{where}: the run failed on this question ({str(row['error'])[:80]}); "
                            "re-run it (madqa run --resume) first")
        answer = row.get("answer")
        if "answer" not in row:
            problems.append(f"{where}: no 'answer'")
        elif not isinstance(answer, (str, list)) or (isinstance(answer, list)
                                                      and not all(isinstance(a, str) for a in answer)):
            problems.append(f"{where}: 'answer' must be a list of strings")
        if "citations" not in row:
            problems.append(f"{where}: no 'citations'")
        else:
            problems += _citation_problems(row.get("citations"), where, corpus)
        history = row.get("search_history")
        if history is None:
            problems.append(f"{where}: no 'search_history' (the harness counts effort from it)")
        elif not isinstance(history, list):
            problems.append(f"{where}: 'search_history' must be a list, got {type(history).__name__}")
        iterations = row.get("iterations")
        counted = integral(iterations) if iterations is not None else 0
        if counted is None or counted < 0:
            problems.append(f"{where}: 'iterations' must be a whole number >= 0, got {iterations!r}")
    return problems


def leaderboard_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """Only the fields the harness reads; citations as ``{file, page}``, iterations filled in."""
    answer = row.get("answer")
    history = [{"iteration": h.get("iteration"), "query": h.get("query"), "num_results": h.get("num_results")}
               if isinstance(h, Mapping) else h for h in row.get("search_history") or []]
    iterations = integral(row.get("iterations"))
    return {
        "id": row.get("id"),
        "question": row.get("question"),
        "answer": [answer] if isinstance(answer, str) else list(answer or []),
        "citations": [{"file": m.citation_document(c), "page": integral(c.get("page"))}
                      for c in row.get("citations") or []],
        "search_history": history,
        "iterations": iterations if iterations is not None else len(history),
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _num(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_official(name: str, result: Mapping[str, Any]) -> str:
    """The figures the official harness prints for one file (overall, then by hop type by size)."""
    def block(label: str, o: Mapping[str, Any], indent: str) -> list[str]:
        if not o.get("n"):
            return [f"{indent}{label}: No data"]
        lines = [f"{indent}{label} (n={o['n']}):",
                 f"{indent}  Accuracy (ANLS*>=0.5): {_pct(o['accuracy'])}",
                 f"{indent}  Mean ANLS*:           {_num(o['anls'], 4)}",
                 f"{indent}  Document F1:          {_num(o['doc_f1'], 4)}",
                 f"{indent}  Page F1:              {_num(o['page_f1'], 4)}"]
        if o.get("kuiper") is not None:
            lines.append(f"{indent}  Kuiper Statistic:     {o['kuiper']:.2f}")
        if o.get("wasted_effort_ratio") is not None:
            lines.append(f"{indent}  Wasted Effort Ratio:  {o['wasted_effort_ratio']:.3f}")
        return lines

    lines = block(name, result["overall"], "")
    hops = sorted(((h, o) for h, o in result["by_hop_type"].items() if o.get("n")), key=lambda x: -x[1]["n"])
    if hops:
        lines.append("\n  By Hop Type:")
        for hop, o in hops:
            lines += block(hop, o, "    ")
    unmatched = result["overall"].get("n_unmatched")
    if unmatched:
        lines.insert(0, f"  Warning: {unmatched} questions not found in gold standard")
    return "\n".join(lines)
