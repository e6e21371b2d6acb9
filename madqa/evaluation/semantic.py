"""``madqa eval --semantic``: each matched prediction scored as the official harness does (``judge.py``), the
judgments cached per (question, gold, answer, judge, prompt) in ``MADQA_HOME/cache/judgments.sqlite``, and
the figures in the JSON and text reports."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from madqa.evaluation.judge import JUDGE_PROMPT, Judge, JudgeError, fill_prompt, import_litellm, pre_judge, summarise
from madqa.evaluation.metrics import match_predictions

GEMINI_KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")  # litellm's name, then the harness's


def judge_key(model: str, api_base: str | None) -> str | None:
    """The key to give the judge; JudgeError naming the variable when there is none.

    Gemini takes ``GEMINI_API_KEY`` or the harness's ``GOOGLE_API_KEY``; another provider the variables
    litellm names for it (not checked when ``api_base`` points at a server of your own)."""
    if model.startswith("gemini/"):
        for name in GEMINI_KEYS:
            if os.environ.get(name):
                return os.environ[name]
        raise JudgeError(f"the judge {model} needs a key: set GEMINI_API_KEY (or the harness's GOOGLE_API_KEY)")
    if api_base:
        return None
    try:
        missing = import_litellm().validate_environment(model=model).get("missing_keys") or []
    except Exception:  # litellm: validate_environment raises for a provider it cannot place; the call says
        missing = []
    if missing:
        raise JudgeError(f"the judge {model} needs a key: set {' or '.join(missing)}")
    return None


class JudgmentCache:
    """Judgments by key in SQLite; only real judgments are kept (a failure is asked again next run)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS judgments (key TEXT PRIMARY KEY, judgment TEXT NOT NULL, "
                        "cost REAL, created REAL NOT NULL)")

    def get(self, key: str) -> tuple[dict[str, Any], float | None] | None:
        row = self.db.execute("SELECT judgment, cost FROM judgments WHERE key = ?", (key,)).fetchone()
        return (json.loads(row[0]), row[1]) if row else None

    def put(self, key: str, judgment: dict[str, Any], cost: float | None) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO judgments VALUES (?, ?, ?, ?)",
                            (key, json.dumps(judgment), cost, time.time()))

    def close(self) -> None:
        self.db.close()


def cache_key(question: str, variants: Any, answer: Any, judge: str, template: str) -> str:
    parts = [question, variants, answer, judge, hashlib.sha256(template.encode()).hexdigest()]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def judge_name(judge: Judge) -> str:
    return judge.model + (f" at {judge.api_base}" if judge.api_base else "")


def score_rows(rows: Sequence[Any], gold: Sequence[Mapping[str, Any]], judge: Judge, cache: JudgmentCache,
               template: str = JUDGE_PROMPT) -> dict[str, Any]:
    """Every prediction matched to gold (as the harness matches), scored; the summary, the cost, the items."""
    matched, _ = match_predictions(rows, gold)
    items: list[dict[str, Any]] = []
    cached_cost = 0.0
    for pi, gi in matched:
        row, gold_row = rows[pi], gold[gi]
        question = row.get("question").strip() if isinstance(row.get("question"), str) else ""
        answer, variants = row.get("answer", ""), gold_row.get("answer_variants")
        item: dict[str, Any] = {"id": gold_row.get("id"), "question": question}
        early = pre_judge(answer, variants, question)
        if early is not None:
            items.append({**item, **early})
            continue
        key = cache_key(question, variants, answer, judge.model, template)  # the model, wherever served
        hit = cache.get(key)
        if hit is not None:
            cached_cost += hit[1] or 0.0
            items.append({**item, **hit[0], "source": "cache"})
            continue
        before = judge.cost
        verdict = judge.judge(fill_prompt(template, question, answer, variants))
        if verdict.get("failed"):
            items.append({**item, **{k: v for k, v in verdict.items() if k != "failed"}, "score": None,
                          "source": "failed"})
            continue
        cost = judge.cost - before if judge.cost_known else None
        cache.put(key, {k: verdict[k] for k in ("judgment", "main_issue", "explanation", "score")}, cost)
        items.append({**item, **verdict, "source": "judge"})
    summary = summarise(items)
    summary.update(judge=judge_name(judge), requests=judge.calls,
                   cost_usd=round(judge.cost, 6) if judge.cost_known else None,
                   cached_cost_usd=round(cached_cost, 6), questions=items)
    return summary


def format_semantic(name: str, result: Mapping[str, Any]) -> str:
    """The text report's semantic block for one prediction file."""
    src = result["sources"]
    skipped = ", ".join(f"{src[k]} {label}" for k, label in (("empty", "empty"), ("too_long", "too long"),
                        ("exact", "exact ANLS* match"), ("no_question", "no question text")) if src.get(k))
    lines = [f"{name}: semantic score (ANLS* + judge {result['judge']}, Rogan-Gladen q0=1.000 q1=0.980)",
             f"  {result['n']} questions: {src.get('judge', 0)} judged now, {src.get('cache', 0)} from the cache, "
             f"{skipped or 'none'} without the judge, {result['failed']} judge failures"]
    score = result["score"]
    if score is None:
        lines.append("  semantic score: none (no question has a score)")
    else:
        lines.append(f"  semantic score: {_pct(score['adjusted_score'])} (raw mean {_pct(score['raw_score'])}, "
                     f"SE {_pct(score['se'])}, 95% CI {_pct(score['ci_lower'])}-{_pct(score['ci_upper'])}), "
                     f"accuracy {_pct(result['accuracy'])} over {result['scored']} scored")
    off = result["official"]
    lines.append(f"  official figure (failures as 0): {_pct(off['adjusted_score'])} (95% CI "
                 f"{_pct(off['ci_lower'])}-{_pct(off['ci_upper'])}), accuracy {_pct(off['accuracy'])}")
    j = result["judgments"]
    cost = "unknown (no prices for this model)" if result["cost_usd"] is None else f"${result['cost_usd']:.4f}"
    lines.append(f"  judgments: {j['correct']} correct, {j['partial']} partial, {j['incorrect']} incorrect; "
                 f"{result['requests']} requests, cost {cost} (the cached ones cost ${result['cached_cost_usd']:.4f})")
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"
