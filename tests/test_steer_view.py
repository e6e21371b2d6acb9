"""Ask's Steer section without a running app (``madqa.ui.steer``): a steered run waits at its first proposed call,
an approval runs it, and the answered question's row is kept and scored when it is a demo question."""

from __future__ import annotations

from madqa.settings import load_config
from madqa.ui.context import AppContext
from madqa.ui.steer import start_steered, steer_view
from tests.test_ask_run import Sessions

QUESTION = {"id": "q-1", "question": "What was the revenue in 2024?", "answer_variants": [["7.5 million"]],
            "evidence": [{"document": "report.pdf", "page": 1}]}


def test_a_steered_question_waits_for_the_person_then_its_answer_is_kept_and_scored(corpus, settings, registry):
    ctx = AppContext(settings, registry, Sessions(corpus), {}, "offline", questions=[QUESTION])  # type: ignore[arg-type]
    config = load_config("offline").with_overrides(backend="scripted")
    script = [{"search": "revenue 2024"}, {"answer": ["7.5 million"], "citations": [{"file": "report.pdf", "page": 1}]}]
    run = start_steered(ctx, QUESTION["question"], config, {"script": script}, {"corpus": "demo"}, [])
    view = steer_view(run, [])
    assert view.waiting and "search_documents" in view.proposal and "revenue 2024" in view.calls
    assert view.result == "" and view.file is None and view.rows == []
    run.advance()  # Approve
    while run.proposed is not None:
        run.advance()
    done = steer_view(run, [])
    assert not done.waiting and run.done
    assert [r["id"] for r in done.rows] == ["q-1"] and done.file is not None and done.file.endswith("steered.jsonl")
    assert done.result.replace("\\", "").startswith("**Answer:** 7.5 million · **right**")
