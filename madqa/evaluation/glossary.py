"""What every number of an evaluation report means: its name in words, its scale, one line of meaning.

One table read by both faces: ``madqa eval`` prints it as the legend under its table, the app's
Evaluate tab shows it beside each number. The definitions follow docs/metrics.md (the official
MADQA harness's semantics); a test checks that every figure ``evaluate`` emits has an entry here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Term", "TERMS", "term", "legend"]


@dataclass(frozen=True)
class Term:
    """A metric in words: ``label`` (no snake_case), ``scale`` (range and which way is better) and
    ``meaning`` (what it measures, in one line)."""

    label: str
    scale: str
    meaning: str

    def explained(self) -> str:
        """The meaning followed by the scale, as one line for a tooltip or a table cell."""
        return f"{self.meaning} ({self.scale})" if self.scale else self.meaning


_SHARE = "0 to 1, higher is better"
_COUNT = "a count"

_ERRORS = {
    "failed": ("runs that failed", "the run ended in an error: no answer was given"),
    "refusal": ("refused", "an empty answer: the agent said the documents do not answer it"),
    "wrong_document": ("wrong document", "no cited document is a gold evidence document"),
    "wrong_page": ("wrong page", "a gold document is cited, but none of its evidence pages"),
    "wrong_answer": ("wrong answer on the right page", "a gold evidence page is cited, the answer is still wrong"),
}
_PER = {"sum": ("total", "over all questions"), "mean": ("per question", "mean per question"),
        "median": ("median per question", "median per question"), "max": ("most in one question", "the most in one question")}
_AMOUNTS = {"steps": "steps", "tokens": "tokens", "cost_usd": "cost (USD)", "latency_s": "time (s)"}
_UNITS = {"steps": "steps, fewer is cheaper", "tokens": "tokens, fewer is cheaper", "cost_usd": "US dollars",
          "latency_s": "seconds"}

TERMS: dict[str, Term] = {
    "n": Term("questions scored", _COUNT, "predictions that matched a question of the set"),
    "n_gold": Term("questions in the set", _COUNT, "questions of the question set in this group"),
    "n_missing": Term("not answered", _COUNT, "questions of the set with no prediction"),
    "n_duplicate": Term("extra predictions", _COUNT, "predictions beyond the first for the same question"),
    "n_unmatched": Term("unmatched predictions", _COUNT, "predictions whose question is not in the set"),
    "accuracy": Term("accuracy", _SHARE, "share of scored answers with ANLS* of at least 0.5 (the official accuracy)"),
    "accuracy_strict": Term("strict accuracy", _SHARE,
                            "share of all questions of the set whose first prediction is right; missing ones count wrong"),
    "anls": Term("ANLS* (answer similarity)", _SHARE, "mean similarity of the answer to its closest gold answer"),
    "doc_f1": Term("document F1", _SHARE, "cited documents against the gold evidence documents, per question"),
    "page_f1": Term("page F1", _SHARE, "cited pages against the gold evidence pages, per question"),
    "kuiper": Term("effort calibration (Kuiper)",
                   "0 or more, lower is better; not divided by the number of questions",
                   "how far accuracy swings with the number of steps: with questions sorted by steps, the range "
                   "of the running sum of (right − mean accuracy); 0 means effort says nothing about being right"),
    "wasted_effort_ratio": Term("wasted effort (wrong ÷ right steps)",
                                "0 or more; 1 means equal, above 1 means more steps went into wrong answers",
                                "mean steps on questions answered wrong divided by mean steps on those answered right"),
    "mean_steps_correct": Term("mean steps, right answers", "steps", "mean steps on questions answered right"),
    "mean_steps_incorrect": Term("mean steps, wrong answers", "steps", "mean steps on questions answered wrong"),
    "query_drift": Term("query drift (words)", "0 to 1: 0 the same words, 1 no word shared",
                        "how much each search's words differ from the one before, averaged per question"),
    "query_drift_n": Term("questions with drift", _COUNT, "questions with two or more searches (the drift's base)"),
    "query_drift_representation": Term("drift measured on", "", "how the queries were compared for query drift"),
    "query_drift_embedding": Term("query drift (meaning)", "0 to 2 (cosine distance), 0 means the same meaning",
                                  "how far each search's meaning moves from the one before, by a sentence embedding"),
    "query_drift_embedding_representation": Term("meaning drift measured on", "",
                                                 "the embedding model used for the meaning drift"),
    "evidence_recall": Term("evidence recall", _SHARE,
                            "share of each question's gold evidence pages that any search returned, averaged"),
    "evidence_recall_micro": Term("evidence recall (all pages pooled)", _SHARE,
                                  "gold evidence pages any search returned, over all questions' pages at once"),
    "evidence_recall_n": Term("questions with evidence recall", _COUNT, "questions with a trajectory and gold pages"),
    "first_query_success": Term("first search found it", _SHARE,
                                "share of questions whose first search already returned a gold evidence page"),
    "first_step_success": Term("first tool call found it", _SHARE,
                               "share of questions whose first call that returned pages (a search, or a navigation "
                               "tool such as open_page) returned a gold evidence page"),
    "tool_calls": Term("calls per tool", "calls", "how many times each tool was called, over all questions"),
    "tool_calls_per_question": Term("calls per tool, per question", "calls per question",
                                    "each tool's calls per question (search_documents, open_page, ...; the answer aside)"),
    "pages_by_search": Term("pages reached by search", _COUNT, "new pages the searches showed, over all questions"),
    "pages_by_navigation": Term("pages reached by navigation", _COUNT,
                                "new pages the other tools (open_page, next_pages, ...) showed, over all questions"),
    "gold_pages_by_search": Term("gold pages reached by search", _COUNT,
                                 "gold evidence pages first shown by a search"),
    "gold_pages_by_navigation": Term("gold pages reached by navigation", _COUNT,
                                     "gold evidence pages first shown by a navigation tool"),
    "errors": Term("wrong answers by kind", "shares of the wrong answers", "why answers were wrong"),
    "steps": Term("steps", "steps", "searches per question (the official effort)"),
    "tokens": Term("tokens", "tokens", "model tokens used"),
    "cost_usd": Term("cost (USD)", "US dollars", "what the model calls cost"),
    "latency_s": Term("time (s)", "seconds", "wall time per question"),
    "n_run_errors": Term("runs that failed", _COUNT,
                         "questions whose run ended in an error: nothing to score, counted wrong as the official "
                         "harness does; run them again"),
    "n_unanswerable": Term("questions with no answer", _COUNT, "questions whose gold answer is empty"),
    "unanswerable_refused": Term("rightly refused", _SHARE, "share of the questions with no answer that the run refused"),
    "quotes_verified": Term("quotes verified", _SHARE, "share of quotes found word for word on the cited page"),
    "quotes_n": Term("quotes checked", _COUNT, "quotes the answers carried"),
    "answers_with_verified_quote": Term("answers with a verified quote", _SHARE,
                                        "share of answers backed by at least one quote found on its page"),
    "answers_verified": Term("answers verified on their pages", _SHARE,
                             "share of answers whose every item is written on a page the agent saw (answer_check)"),
    "answers_checked_n": Term("answers checked", _COUNT, "answers whose items were looked for on the pages"),
    "accuracy_verified": Term("accuracy of verified answers", _SHARE,
                              "accuracy among answers verified on their pages: how far the ✓ can be trusted"),
    "accuracy_unverified": Term("accuracy of unverified answers", _SHARE,
                                "accuracy among answers not written as such on a page seen: what the ✗ catches"),
    "right_verified": Term("right answers verified", _SHARE,
                           "share of the right answers that the check finds written on a page seen"),
    "wrong_caught": Term("wrong answers caught", _SHARE,
                         "share of the wrong answers the check flags (not written as such on a page seen); an "
                         "extractive answer from the wrong line is on its page, and is not caught"),
    **{f"errors.{c}": Term(f"wrong answers: {words}", "share of the wrong answers, 0 to 1", why)
       for c, (words, why) in _ERRORS.items()},
    **{f"{head}.{part}": Term(f"{words} {part_words}", _UNITS[head], f"{words}, {why}")
       for head, words in _AMOUNTS.items() for part, (part_words, why) in _PER.items()
       if not (head != "steps" and part in ("median", "max"))},
}


def term(key: str) -> Term:
    """The entry of a report figure (``"kuiper"``, ``"errors.refusal"``, ``"steps.mean"``).

    Raises KeyError for a figure with no entry: a new metric must be described before it is shown.
    """
    return TERMS[key]


def legend(keys: list[str] | tuple[str, ...]) -> str:
    """Plain-text lines ``key  label: meaning (scale)`` for the CLI report, one per key with an entry."""
    rows = [(k, TERMS[k]) for k in keys if k in TERMS]
    width = max((len(k) for k, _ in rows), default=0)
    return "\n".join(f"{k.ljust(width)}  {t.label}: {t.explained()}" for k, t in rows)
