"""What a question of the Compare tab does, without a running app (``madqa.ui.compare_run``): both sides stream,
the summary comes last, a side whose model cannot be reached is not run and says why, an edited question has no
gold answer. The scripted backend answers on a real corpus made in a fixture."""

from __future__ import annotations

from typing import Any

from madqa.settings import load_config
from madqa.ui.compare_run import CompareQuestion, compare_question, gold_for
from madqa.ui.context import AppContext
from tests.test_ask_run import REVENUE, Sessions

GOLD = {"id": "q-1", "question": "What was the revenue in 2024?", "answer_variants": [["7.5 million"]]}


def scripted(name: str, script: list[dict[str, Any]]) -> tuple[Any, dict[str, Any]]:
    return load_config("offline").with_overrides(name=name, backend="scripted"), {"script": script}


def summary(update: Any) -> dict[str, list[Any]]:
    return {row[0]: list(row[1:]) for row in update.summary.itertuples(index=False)}


def test_both_sides_stream_and_the_last_update_puts_them_side_by_side_scored(corpus, settings, registry):
    ctx = AppContext(settings, registry, Sessions(corpus), {}, "offline")  # type: ignore[arg-type]
    configs = {"A": scripted("fast", REVENUE), "B": scripted("slow", [{"answer": ["the board"], "citations": []}])}
    updates = list(compare_question(ctx, CompareQuestion(GOLD["question"], configs, {"corpus": "mine"}, gold=GOLD)))
    assert all(u.summary is None for u in updates[:-1]) and updates[-1].summary is not None
    assert list(updates[-1].summary.columns) == ["", "A: fast", "B: slow"]
    assert [m["content"] for m in updates[0].chats["A"]][:1] == [GOLD["question"]]
    for side in "AB":
        assert updates[0].chats[side][-1]["metadata"]["title"] == "Starting"
    rows = summary(updates[-1])
    assert rows["right?"] == ["right", "wrong"] and rows["answer"] == ["7.5 million", "the board"]  # scored
    assert "7.5 million" in updates[-1].chats["A"][-1]["content"].replace("\\", "")


def test_a_side_whose_model_cannot_be_reached_is_not_run_and_the_other_still_answers(corpus, settings, registry,
                                                                                    monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ctx = AppContext(settings, registry, Sessions(corpus), {}, "offline")  # type: ignore[arg-type]
    keyless = load_config("offline").with_overrides(name="gpt", backend="litellm", model="gpt-4o-mini")
    configs = {"A": scripted("fast", REVENUE), "B": (keyless, {})}
    updates = list(compare_question(ctx, CompareQuestion("What was the revenue?", configs, {"corpus": "mine"})))
    assert "The model cannot be reached." in updates[0].chats["B"][-1]["content"]
    assert any(v[1] == "not run: needs an API key" for v in summary(updates[-1]).values())
    assert "7.5 million" in updates[-1].chats["A"][-1]["content"].replace("\\", "")


def test_a_question_edited_after_picking_it_has_no_gold_answer(settings, registry):
    ctx = AppContext(settings, registry, Sessions(None), {}, "offline", questions=[GOLD])  # type: ignore[arg-type]
    assert gold_for(ctx, "q-1", GOLD["question"], {"corpus": "demo"}) == GOLD
    assert gold_for(ctx, "q-1", "What was the revenue in 2023?", {"corpus": "demo"}) is None
    assert gold_for(ctx, None, GOLD["question"], {"corpus": "demo"}) is None
