"""Refusals: what models really write when they find nothing counts; no gold answer of ours ever does."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

from madqa.refusals import MAX_REFUSAL_CHARS, is_refusal, refusal_items

REPO = Path(__file__).resolve().parent.parent


def gold_answers() -> set[str]:
    """Every gold answer of the development question sets (answer_variants / answers), and the held-out
    corpus's, which its build script holds."""
    files = sorted(REPO.glob("data/*/*.jsonl")) + sorted((REPO / "tests" / "fixtures").rglob("*.jsonl"))
    found: set[str] = set()
    for path in files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except (ValueError, RecursionError):  # the hostile fixtures hold no answers
                continue
            if not isinstance(row, dict):
                continue
            for variant in row.get("answer_variants") or []:
                found.update(a for a in (variant if isinstance(variant, list) else [variant]) if isinstance(a, str))
            found.update(a for a in row.get("answers") or [] if isinstance(a, str))
    held = runpy.run_path(str(REPO / "data" / "heldout" / "build_heldout.py"))
    found.update(a for _, _, answers, _, _ in held["QUESTIONS"] for a in answers)
    return found


def test_no_gold_answer_of_the_development_sets_is_a_refusal() -> None:
    answers = gold_answers()
    assert len(answers) > 200  # demo, realdocs, heldout_realdocs and heldout were all read
    assert [a for a in answers if is_refusal(a)] == []
    assert not refusal_items(sorted(answers))


# what models write when they find nothing (GPT-4o, Claude, Gemini, Qwen, Llama, and MADQA's baselines)
REFUSALS = [
    "I cannot find this information in the documents.",
    "I couldn't find the 2019 revenue in the provided documents.",
    "I'm sorry, but I couldn't locate any mention of a WebP terminal in the documents.",
    "Unfortunately, I was unable to find the answer in the documents.",
    "After searching the documents several times, I could not find the exact figure.",
    "The documents do not mention the CEO's salary.",
    "The provided documents don't contain information about the number of employees in 2019.",
    "The search results do not contain the requested information.",
    "None of the documents mention a PowerPoint export.",
    "The information is not available in the provided documents.",
    "This information is not provided in the pages.",
    "The answer could not be found in the documents.",
    "There is no information about the 2019 revenue.",
    "No relevant information was found.",
    "Not found", "**Not found**", "“Not mentioned.”", "Not specified in the documents",
    "Not found in the provided pages.", "not stated",
    "N/A", "n/a", "Unknown", "No answer", "I don't know", "I do not know.", "Unanswerable",
    "Cannot be determined from the provided pages.", "It cannot be determined from the documents.",
    "Unable to determine from the documents.", "Insufficient information to answer.",
    "Unable to parse answer", "Unable to find answer", "Error: Unable to generate answer",  # MADQA's baselines
]


@pytest.mark.parametrize("text", REFUSALS)
def test_refusals_as_models_write_them(text: str) -> None:
    assert is_refusal(text)
    assert refusal_items([text]) and refusal_items([text, "N/A"])


@pytest.mark.parametrize("text", [
    "", "   ",  # no answer at all is a failure, not a refusal
    "zero", "none", "No", "0", "-", "Not applicable", "Unlimited", "Known issue",
    "148,612", "The answer is 42", "The documents mention 148,612.",
    "The documents do not mention it explicitly, but the total is 148,612.",
    "I could not find a 2023 figure; however, the 2024 revenue was 148,612.",
    "The value was given as 5 bar.", "The date is not 3 May but 4 May.",
    "Not found" + " because" * (MAX_REFUSAL_CHARS // 8),  # a long explanation is no refusal
])
def test_answers_and_partial_answers_are_not_refusals(text: str) -> None:
    assert not is_refusal(text)


def test_a_list_refuses_only_when_every_item_does() -> None:
    assert refusal_items([])
    assert refusal_items(["", "  "])
    assert refusal_items(["Not found", "unknown"])
    assert not refusal_items(["Not found", "148,612"])
    assert not refusal_items(["148,612"])


def test_odd_input_is_no_refusal() -> None:
    assert not is_refusal(None)  # type: ignore[arg-type]
    assert not is_refusal("x" * 1_000_000)
    assert not refusal_items([1])  # type: ignore[list-item]
