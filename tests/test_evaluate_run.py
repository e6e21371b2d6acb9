"""What a run of the Evaluate tab does, without a running app (``madqa.ui.evaluate_run``): the questions scored per
config with progress per question, the downloads written, a config that cannot start said not run while the others
keep their scores, evidence files the collection lacks and questions without gold answers warned about."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from madqa.errors import PluginError
from madqa.settings import load_config
from madqa.ui.context import AppContext
from madqa.ui.evaluate_run import EvalRequest, run_evaluation
from tests.test_ask_run import Sessions

QUESTIONS = [
    {"id": "q-1", "question": "What was the revenue in 2024?", "answer_variants": [["7.5 million"]],
     "evidence": [{"document": "report.pdf", "page": 1}]},
    {"id": "q-2", "question": "When did the board approve the budget?", "answer_variants": [["3 May 2024"]],
     "evidence": [{"document": "minutes.pdf", "page": 1}]},  # a document this collection lacks
    {"id": "q-3", "question": "How many employees?"},  # no gold answer
]


def question_file(tmp_path: Path) -> str:
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return str(path)


def context(corpus: Any, settings: Any, registry: Any) -> AppContext:
    return AppContext(settings, registry, Sessions(corpus), {"offline": load_config("offline")},  # type: ignore[arg-type]
                      "offline")


class Progress:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, dict[str, Any]]] = []

    def __call__(self, value: Any, **kwargs: Any) -> None:
        self.calls.append((value, kwargs))


def test_a_run_scores_every_question_writes_its_downloads_and_warns_about_what_it_cannot_score(
        corpus, settings, registry, tmp_path):
    kept: list[Path] = []
    progress = Progress()
    request = EvalRequest(question_file(tmp_path), ["offline"], [], {"corpus": "mine"}, workers=2)
    done = run_evaluation(context(corpus, settings, registry), request, progress, kept.append)
    text = done.text.replace("\\", "")  # the Markdown escapes
    assert text.startswith("Ran 3 questions of **questions.jsonl** through 1 config on **your uploads** in ")
    assert "1 evidence file of these questions are not in your uploads (e.g. minutes.pdf)" in text
    assert "Only 2 of 3 questions have gold answers; the others score 0." in text
    assert list(done.results) == ["offline"] and len(done.rows["offline"]) == 3 and done.gaps == {}
    assert sorted(r["id"] for r in done.records["offline"]) == ["q-1", "q-2", "q-3"]  # in the order they finished
    assert len(done.predictions.read_text(encoding="utf-8").splitlines()) == 3
    report = json.loads(done.report.read_text(encoding="utf-8"))
    assert report["questions"] == 3 and list(report["configs"]) == ["offline"] and report["question_set"] == "questions.jsonl"
    assert done.predictions.parent in kept and [Path(f).name for f in done.config_files] == ["offline.toml"]
    assert progress.calls[0] == (0, {"desc": "waiting for the corpus"})
    assert [value for value, _ in progress.calls[1:]] == [(1, 3), (2, 3), (3, 3)]
    assert set(done.empty) <= {"kuiper", "errors"} and set(done.plots.accuracy["config"]) == {"offline"}


def test_with_the_oracle_each_config_runs_twice_and_gets_its_gap(corpus, settings, registry, tmp_path):
    request = EvalRequest(question_file(tmp_path), ["offline"], [], {"corpus": "mine"}, limit=2, oracle=True)
    done = run_evaluation(context(corpus, settings, registry), request, Progress(), lambda folder: None)
    assert list(done.results) == ["offline", "offline (oracle)"] and list(done.gaps) == ["offline"]
    assert done.gaps["offline"]["overall"]["n"] == 2


def test_a_config_that_cannot_start_is_not_run_and_the_others_keep_their_scores(corpus, settings, registry, tmp_path,
                                                                                monkeypatch):
    import madqa.ui.evaluate_run as evaluate_run

    real = evaluate_run.run_batch

    def failing_for_tantivy(questions: Any, corpus: Any, config: Any, *args: Any, **kwargs: Any) -> Any:
        if config.retriever == "tantivy":
            raise PluginError("retriever tantivy: its index cannot be opened")
        return real(questions, corpus, config, *args, **kwargs)

    monkeypatch.setattr(evaluate_run, "run_batch", failing_for_tantivy)
    broken = load_config("offline").with_overrides(name="offline[tantivy]", retriever="tantivy")
    request = EvalRequest(question_file(tmp_path), ["offline"], [broken], {"corpus": "mine"}, limit=1)
    done = run_evaluation(context(corpus, settings, registry), request, Progress(), lambda folder: None)
    assert "offline\\[tantivy\\]: not run, it could not start.** retriever tantivy: its index cannot be opened" in done.text
    assert "through 1 config " in done.text and list(done.results) == ["offline"]
    request = EvalRequest(question_file(tmp_path), [], [broken], {"corpus": "mine"}, limit=1)
    with pytest.raises(gr.Error, match="its index cannot be opened"):  # nothing ran at all: an error, no report
        run_evaluation(context(corpus, settings, registry), request, Progress(), lambda folder: None)


def test_nothing_is_run_without_questions_or_configs(corpus, settings, registry, tmp_path):
    ctx = context(corpus, settings, registry)
    with pytest.raises(gr.Error, match="has no question set of its own"):
        run_evaluation(ctx, EvalRequest(None, ["offline"], [], {"corpus": "mine"}), Progress(), lambda folder: None)
    with pytest.raises(gr.Error, match="Pick at least one config"):
        run_evaluation(ctx, EvalRequest(question_file(tmp_path), [], [], {"corpus": "mine"}), Progress(),
                       lambda folder: None)


@pytest.mark.slow  # litellm's import and its refused connections: ~20 s
def test_a_config_whose_model_cannot_be_reached_is_failed_never_scored(corpus, settings, registry, tmp_path):
    import socket

    from madqa.ui.evaluate import headline_cards, metrics_frame, scores_frame

    with socket.socket() as free:  # a port nothing listens on: every call is refused at once
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    gone = load_config("offline").with_overrides(
        name="gone", backend="litellm", model="openai/m",
        options={"backend": {"api_base": f"http://127.0.0.1:{port}/v1", "max_attempts": 1}})
    ctx = context(corpus, settings, registry)
    ctx.configs["gone"] = gone
    request = EvalRequest(question_file(tmp_path), ["offline", "gone"], [], {"corpus": "mine"}, limit=2)
    done = run_evaluation(ctx, request, Progress(), lambda folder: None)
    assert done.results["gone"]["overall"]["n_run_errors"] == 2
    cards = headline_cards(done.results)
    assert cards.count("failed (2 of 2)") == 3 and "0.0" not in cards.split("<b>gone</b>")[1]
    assert set(scores_frame(done.results).set_index("config").loc["gone"].iloc[:4]) == {"failed (2 of 2)"}
    assert "failed (2 of 2)" in set(metrics_frame(done.results)["gone"])
    assert "gone" not in set(done.plots.accuracy["config"]) and "offline" in set(done.plots.accuracy["config"])
    assert any("gone: not plotted, failed (2 of 2)" in n for n in done.plots.notes)
    report = json.loads(done.report.read_text(encoding="utf-8"))["results"]
    assert report["gone"]["failed"] == "failed (2 of 2)" and report["gone"]["overall"]["accuracy"] == "failed (2 of 2)"
    assert isinstance(report["offline"]["overall"]["accuracy"], float)
    assert "127.0.0.1" not in json.dumps(json.loads(done.report.read_text(encoding="utf-8"))["configs"])
