"""The official harness's semantic score (``--semantic``): ANLS* first, an LLM judge for the rest, and the
Rogan-Gladen corrected mean with its standard error and 95% interval.

The semantics are those of ``eval/metrics.py`` in the MADQA repository (``anls_star_llm``,
``_call_llm_judge``, ``aggregate_anls_star_llm``; file:line references in docs/metrics.md): which answers
skip the judge (``pre_judge``), the forced ``submit_judgment`` call and its 1 / 0.5 / 0 map, three tries
(``Judge``), and the corrected mean (``rogan_gladen``, pure). One deliberate difference: a judge that fails
is a failure, counted apart, never a 0 (``summarise`` gives both figures: ours without the failures, the
official one with them as 0).
"""

from __future__ import annotations

import ast
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from madqa.evaluation.metrics import anls_star

# The harness's constants (eval/metrics.py:37-44) and limits.
SENSITIVITY_Q1 = 0.980  # P(judge says correct | a human says correct)
SPECIFICITY_Q0 = 1.000  # P(judge says incorrect | a human says incorrect)
Z_95 = 1.96  # the harness's z without scipy (it does not require scipy)
MAX_ANSWER_CHARS = 2000  # json.dumps(answer) longer than this scores 0, unjudged
TRIES = 3
TIMEOUT_S = 30.0
DEFAULT_JUDGE = "gemini/gemini-2.5-flash"
SCORES = {"correct": 1.0, "partial": 0.5, "incorrect": 0.0}
MAIN_ISSUES = ["none", "refusal", "wrong_content", "missing_unit", "no_yes_no", "list_format",
               "verbosity_medium", "verbosity_high"]
PLACEHOLDERS = ("question", "predicted", "gold_variants")

JUDGE_TOOL = {"type": "function", "function": {
    "name": "submit_judgment",
    "description": "Submit your final judgment after reasoning through the evaluation steps",
    "parameters": {"type": "object", "properties": {
        "judgment": {"type": "string", "enum": list(SCORES), "description": "correct, partial or incorrect"},
        "main_issue": {"type": "string", "enum": MAIN_ISSUES, "description": "the main problem found, if any"},
        "explanation": {"type": "string", "description": "a short reason for the judgment"}},
        "required": ["judgment", "main_issue", "explanation"]}}}

# madqa's wording of the harness's criteria (the official text: --judge-prompt on a checkout's eval/metrics.py).
JUDGE_PROMPT = """You grade answers of a question-answering benchmark over documents.

Question: {question}
Predicted answer: {predicted}
Acceptable gold answers (each one a list of items): {gold_variants}

Decide on one label:
- correct: the prediction means the same as at least one gold answer; small differences of format do not matter.
- partial: the information is right, but the form is clearly off (several expected items written as one
  comma-separated string) or it carries material nobody asked for.
- incorrect: the information is wrong, missing or different, or of the wrong kind (a yes/no question answered
  without yes or no). Leaving out a unit or a scale that changes the size of a number (thousands, millions)
  is incorrect.

Work through these in order:
1. A refusal, or a claim that the answer cannot be found, is incorrect.
2. Compare the content with the gold answers: other content is incorrect.
3. Serious errors make it incorrect: a missing scale ("50" for "$50 million"), no explicit yes/no to a binary
   question, a wrong name or value, a list mixing right and wrong items.
4. Only when the content is right, the form: several gold items given as one comma-separated string is
   partial; a gold answer of one item has no form problem.
5. Only when the content is right, the length: helpful qualifiers and context are fine (correct); unrequested
   details or more precision than asked (a time when only the date was asked) are partial; whole sentences
   where a phrase would do, explanations, or openings such as "Based on the document" are incorrect.

Reason step by step, then call submit_judgment with your label, the main issue and a short explanation."""


def import_litellm() -> Any:
    """litellm, quiet (no "Give Feedback" prints in a --json report) and with its bundled price map."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


class JudgeError(Exception):
    """The judge cannot be used at all (no key, not reachable, refused the key): no score is given."""


class PromptError(ValueError):
    """A --judge-prompt file that cannot be used as the judge's template."""


# ---------------------------------------------------------------- the prompt
def load_prompt(path: str | Path) -> str:
    """A judge template from ``path``: a text file with ``{question}``, ``{predicted}`` and ``{gold_variants}``,
    or the harness's ``eval/metrics.py`` (its ``_GEVAL_PROMPT_TEMPLATE`` string, read without running it)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError(f"cannot read the judge prompt {file}: {exc}") from exc
    if file.suffix == ".py":
        text = _template_from_source(text, file)
    check_prompt(text, str(file))
    return text


def _template_from_source(source: str, file: Path) -> str:
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise PromptError(f"{file} is not Python source: {exc}") from exc
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_GEVAL_PROMPT_TEMPLATE"
                                                for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError as exc:
                raise PromptError(f"{file}: _GEVAL_PROMPT_TEMPLATE is not a plain string") from exc
            if isinstance(value, str):
                return value
    raise PromptError(f"{file} has no _GEVAL_PROMPT_TEMPLATE string (give the harness's eval/metrics.py "
                      "or a text file with {question}, {predicted} and {gold_variants})")


def check_prompt(template: str, where: str = "the judge prompt") -> None:
    """Refuse a template that lacks a placeholder or names one the judge does not fill."""
    try:
        template.format(question="q", predicted="p", gold_variants="g")
    except (KeyError, IndexError, ValueError) as exc:
        raise PromptError(f"{where}: only {{question}}, {{predicted}} and {{gold_variants}} can be filled "
                          f"(write other braces doubled): {exc!r}") from exc
    missing = [p for p in PLACEHOLDERS if "{" + p + "}" not in template]
    if missing:
        raise PromptError(f"{where} lacks {', '.join('{' + m + '}' for m in missing)}")


def fill_prompt(template: str, question: str, answer: Any, variants: Any) -> str:
    """The harness's filling: the answer and the gold variants as ``json.dumps`` (ASCII escapes included)."""
    return template.format(question=question, predicted=json.dumps(answer), gold_variants=json.dumps(variants))


# ---------------------------------------------------------------- before the judge
def _empty(answer: Any) -> bool:
    return answer is None or answer == "" or answer == [] or (
        isinstance(answer, list) and all(not item for item in answer))


def answer_chars(answer: Any) -> int:
    try:
        return len(json.dumps(answer))
    except (TypeError, ValueError):
        return len(str(answer))


def pre_judge(answer: Any, variants: Any, question: str) -> dict[str, Any] | None:
    """The score the harness gives without a judge (``source`` says why), or None when the judge decides."""
    if _empty(answer):
        return {"score": 0.0, "anls": 0.0, "source": "empty"}
    chars = answer_chars(answer)
    if chars > MAX_ANSWER_CHARS:
        return {"score": 0.0, "anls": 0.0, "source": "too_long", "chars": chars}
    anls = anls_star(answer, variants)
    if anls >= 1.0:
        return {"score": 1.0, "anls": anls, "source": "exact"}
    if not question:
        return {"score": anls, "anls": anls, "source": "no_question"}
    return None


# ---------------------------------------------------------------- the judge
@dataclass
class Judge:
    """The judge model through litellm, forced to call ``submit_judgment``; ``judge(prompt)`` tries 3 times."""

    model: str = DEFAULT_JUDGE
    api_base: str | None = None
    api_key: str | None = None
    sleep: Callable[[float], None] | None = None  # None: time.sleep, looked up when it sleeps
    calls: int = 0
    cost: float = 0.0
    cost_known: bool = True
    errors: list[str] = field(default_factory=list)

    def judge(self, prompt: str) -> dict[str, Any]:
        """``{judgment, main_issue, explanation, score, tries}``, or ``{failed: True, main_issue, explanation}``."""
        litellm = import_litellm()
        last = ""
        for attempt in range(TRIES):
            try:
                response = self._complete(litellm, prompt)
            except litellm.AuthenticationError as exc:
                raise JudgeError(f"the judge {self.model} refused the key: {_short(exc)}") from exc
            except litellm.NotFoundError as exc:
                raise JudgeError(f"the judge {self.model} is not served there: {_short(exc)}") from exc
            except litellm.Timeout as exc:
                last, issue = _short(exc), "timeout"
            except litellm.APIConnectionError as exc:
                if attempt == TRIES - 1:
                    raise JudgeError(f"the judge {self.model} is not reachable: {_short(exc)}") from exc
                last, issue = _short(exc), "error"
            except (litellm.APIError, litellm.BadRequestError, litellm.RateLimitError,
                    litellm.ServiceUnavailableError, litellm.InternalServerError) as exc:
                last, issue = _short(exc), "error"
            else:
                verdict = read_judgment(response)
                if verdict is not None:
                    return {**verdict, "tries": attempt + 1}
                last, issue = "the judge did not call submit_judgment with a valid judgment", "parse_error"
            if attempt < TRIES - 1:
                (self.sleep or time.sleep)(1.0 if issue != "error" else 1.0 * (attempt + 1))
        self.errors.append(last)
        return {"failed": True, "judgment": "error", "main_issue": issue, "explanation": last, "tries": TRIES}

    def _complete(self, litellm: Any, prompt: str) -> Any:
        self.calls += 1
        options = {k: v for k, v in (("api_base", self.api_base), ("api_key", self.api_key)) if v}
        response = litellm.completion(
            model=self.model, messages=[{"role": "user", "content": prompt}], tools=[JUDGE_TOOL],
            tool_choice={"type": "function", "function": {"name": "submit_judgment"}}, temperature=0,
            timeout=TIMEOUT_S, num_retries=0, **options)
        self._add_cost(litellm, response)
        return response

    def _add_cost(self, litellm: Any, response: Any) -> None:
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:  # a model without prices in litellm's map: the cost is unknown, never $0
            self.cost_known = False
            return
        self.cost += float(cost or 0.0)


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def read_judgment(response: Any) -> dict[str, Any] | None:
    """The ``submit_judgment`` call's arguments with their score, or None (prose, another tool, a bad label)."""
    try:
        calls = response.choices[0].message.tool_calls or []
    except (AttributeError, IndexError):
        return None
    for call in calls:
        function = getattr(call, "function", None)
        if getattr(function, "name", None) != "submit_judgment":
            continue
        try:
            args = json.loads(getattr(function, "arguments", None) or "{}")
        except (TypeError, ValueError):
            continue
        judgment = args.get("judgment", "incorrect") if isinstance(args, dict) else None
        if judgment in SCORES:
            return {"judgment": judgment, "main_issue": str(args.get("main_issue", "")),
                    "explanation": str(args.get("explanation", "")), "score": SCORES[judgment]}
    return None


# ---------------------------------------------------------------- the aggregate (pure)
def rogan_gladen(scores: Sequence[float], q0: float = SPECIFICITY_Q0, q1: float = SENSITIVITY_Q1,
                 z: float = Z_95) -> dict[str, Any]:
    """``aggregate_anls_star_llm(scores, apply_bias_correction=True)``: the mean corrected for the judge's
    errors, ``clip((p + q0 - 1) / (q0 + q1 - 1), 0, 1)``, its standard error and the simplified interval
    (q0 + q1 > 1.9), clipped to [0, 1]."""
    if not scores:
        return {"raw_score": 0.0, "adjusted_score": 0.0, "se": 0.0, "ci_lower": 0.0, "ci_upper": 0.0,
                "n_samples": 0, "q0": q0, "q1": q1}
    if q0 + q1 <= 1.9:
        raise ValueError("only the simplified interval (q0 + q1 > 1.9) is implemented")
    n = len(scores)
    p = sum(scores) / n
    theta = min(max((p + q0 - 1) / (q0 + q1 - 1), 0.0), 1.0)
    se_raw = math.sqrt(p * (1 - p) / n) if 0 < p < 1 else 0.0
    se = se_raw / (q0 + q1 - 1)
    return {"raw_score": p, "adjusted_score": theta, "se": se, "ci_lower": max(0.0, theta - z * se),
            "ci_upper": min(1.0, theta + z * se), "n_samples": n, "q0": q0, "q1": q1}


def summarise(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The semantic figures of per-question results (``score`` None for a failed judge): ours over the
    questions that have a score, and the official ones with a failure counted as 0."""
    scored = [float(i["score"]) for i in items if i.get("score") is not None]
    official = [float(i["score"]) if i.get("score") is not None else 0.0 for i in items]
    sources: dict[str, int] = {}
    judgments = {label: 0 for label in SCORES}
    for item in items:
        sources[item["source"]] = sources.get(item["source"], 0) + 1
        if item.get("judgment") in judgments and item["source"] in ("judge", "cache"):
            judgments[item["judgment"]] += 1
    failed = sources.get("failed", 0)
    return {
        "n": len(items), "scored": len(scored), "failed": failed, "sources": sources, "judgments": judgments,
        "score": rogan_gladen(scored) if scored else None,
        "accuracy": sum(s >= 0.5 for s in scored) / len(scored) if scored else None,
        "official": {**rogan_gladen(official), "accuracy": sum(s >= 0.5 for s in official) / len(official)
                     if official else 0.0, "failures_as": 0.0},
    }
