"""``madqa eval --semantic`` end to end: litellm's real Gemini client against a fake Gemini server on
127.0.0.1 (tests/fake_providers.py) playing the judge: a judgment, prose instead of the tool call then a
retry that calls it, a judge that errors on every try, the cache on a second run, and the refusals (no key,
a judge that is not reachable or refuses the key) that give no score at all."""

from __future__ import annotations

import json
import socket
import types

import pytest

from madqa.cli import main
from madqa.evaluation import judge as judge_module
from tests import fake_providers as fp

GOLD = [
    {"id": "q1", "question": "What city?", "answer_variants": [["Paris"]], "evidence": [{"document": "a.pdf", "page": 1}]},
    {"id": "q2", "question": "Revenue in 2024?", "answer_variants": [["$50 million"]],
     "evidence": [{"document": "a.pdf", "page": 2}]},
    {"id": "q3", "question": "Which colours?", "answer_variants": [["red", "blue"]],
     "evidence": [{"document": "a.pdf", "page": 3}]},
    {"id": "q4", "question": "Who signed?", "answer_variants": [["J. Smith"]], "evidence": [{"document": "b.pdf", "page": 1}]},
    {"id": "q5", "question": "How many?", "answer_variants": [["3"]], "evidence": [{"document": "b.pdf", "page": 2}]},
]
ANSWERS = {"q1": ["PARIS"], "q2": ["50 million dollars"], "q3": ["red, blue"], "q4": ["John Smith"], "q5": []}


def verdict(label: str) -> fp.Reply:
    return fp.raw_call("submit_judgment", json.dumps({"judgment": label, "main_issue": "none", "explanation": "ok"}))


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    sleeps: list[float] = []
    monkeypatch.setattr(judge_module, "time", types.SimpleNamespace(sleep=sleeps.append))
    gold, pred = tmp_path / "gold.jsonl", tmp_path / "run.jsonl"
    gold.write_text("".join(json.dumps(g) + "\n" for g in GOLD), encoding="utf-8")
    pred.write_text("".join(json.dumps({"id": g["id"], "question": g["question"], "answer": ANSWERS[g["id"]],
                                        "citations": [g["evidence"][0]]}) + "\n" for g in GOLD), encoding="utf-8")
    return gold, pred, sleeps


def _eval(files, provider, *extra: str) -> list[str]:
    gold, pred, _ = files
    return ["eval", str(pred), "--gold", str(gold), "--semantic", "--judge-api-base", provider.url, *extra]


@pytest.mark.slow  # litellm's first import in the process: seconds
def test_semantic_eval_scores_as_the_harness_with_failures_apart_and_caches(files, monkeypatch, capsys):
    monkeypatch.setenv("GOOGLE_API_KEY", "harness-key")  # the harness's variable is enough
    replies = [verdict("correct"),                           # q2
               fp.text("The answer looks correct to me."), verdict("partial"),  # q3: prose, then the call
               fp.error(500, "internal"), fp.error(500, "internal"), fp.error(500, "internal")]  # q4: fails
    with fp.FakeProvider("gemini", replies) as provider:
        assert main(_eval(files, provider, "--json")) == 0
        assert len(provider.requests) == 6
        first = provider.requests[0]
    body = first["body"]
    assert body["toolConfig"]["functionCallingConfig"]["mode"] == "ANY"
    assert body["generationConfig"]["temperature"] == 0
    assert "harness-key" in json.dumps(first["headers"]) or "harness-key" in first["path"]
    prompt = body["contents"][0]["parts"][0]["text"]
    assert 'Predicted answer: ["50 million dollars"]' in prompt and '[["$50 million"]]' in prompt
    sem = json.loads(capsys.readouterr().out)["run"]["semantic"]
    assert sem["sources"] == {"exact": 1, "judge": 2, "failed": 1, "empty": 1}
    by_id = {q["id"]: q for q in sem["questions"]}
    assert by_id["q3"]["tries"] == 2 and by_id["q3"]["score"] == 0.5
    assert by_id["q4"]["score"] is None and by_id["q4"]["main_issue"] == "error"
    # ours: 1, 1, 0.5, 0 (q5 empty) -> p = 0.625 -> 0.625 / 0.98; the harness's adds q4 as 0: p = 0.5
    assert sem["score"]["adjusted_score"] == pytest.approx(0.625 / 0.98)
    assert sem["score"]["se"] == pytest.approx((0.625 * 0.375 / 4) ** 0.5 / 0.98)
    assert sem["accuracy"] == pytest.approx(0.75)
    assert sem["official"]["adjusted_score"] == pytest.approx(0.5 / 0.98)
    assert sem["official"]["accuracy"] == pytest.approx(0.6)
    assert files[2] == [1.0, 1.0, 2.0]  # prose: 1 s; errors: 1 s then 2 s, as the harness waits
    assert sem["requests"] == 6 and sem["cost_usd"] > 0

    # Second run: the judged answers come from the cache; only the failure is asked again.
    with fp.FakeProvider("gemini", [verdict("incorrect")]) as provider:
        assert main(_eval(files, provider)) == 0
        assert len(provider.requests) == 1
        assert "Who signed?" in provider.requests[0]["body"]["contents"][0]["parts"][0]["text"]
    text = capsys.readouterr().out
    assert "0 judged now" not in text and "1 judged now, 2 from the cache" in text
    assert "0 judge failures" in text
    assert "official figure (failures as 0)" in text and "semantic score: 51.0%" in text  # (1 + 1 + .5 + 0 + 0) / 5 / .98


def test_a_judge_that_never_calls_the_tool_is_a_failure_not_a_zero(files, monkeypatch, capsys):
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    prose = [fp.text("Correct.") for _ in range(9)]
    with fp.FakeProvider("gemini", prose) as provider:
        assert main(_eval(files, provider)) == 0
        assert len(provider.requests) == 9  # 3 questions, 3 tries each
    text = capsys.readouterr().out
    assert "3 judge failures" in text
    assert "semantic score: 51.0%" in text  # q1 1 and q5 0 scored: 0.5 / 0.98
    assert "official figure (failures as 0): 20.4%" in text  # 1 / 5 / 0.98


def test_no_key_is_refused_naming_the_variable(files, capsys):
    with fp.FakeProvider("gemini", [verdict("correct")]) as provider:
        assert main(_eval(files, provider)) == 2
        assert provider.requests == []
    out = capsys.readouterr()
    assert "GEMINI_API_KEY" in out.err and "GOOGLE_API_KEY" in out.err and "semantic score" not in out.out


def test_a_judge_that_refuses_the_key_gives_no_score(files, monkeypatch, capsys):
    monkeypatch.setenv("GEMINI_API_KEY", "bad")
    with fp.FakeProvider("gemini", [fp.error(401, "API key not valid")]) as provider:
        assert main(_eval(files, provider)) == 2
    out = capsys.readouterr()
    assert "refused the key" in out.err and "semantic score" not in out.out


def test_a_judge_that_is_not_reachable_gives_no_score(files, monkeypatch, capsys):
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    gold, pred, _ = files
    assert main(["eval", str(pred), "--gold", str(gold), "--semantic",
                 "--judge-api-base", f"http://127.0.0.1:{port}"]) == 2
    out = capsys.readouterr()
    assert "not reachable" in out.err and "semantic score" not in out.out


def test_the_official_template_from_a_checkout(files, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    metrics = tmp_path / "eval" / "metrics.py"
    metrics.parent.mkdir()
    metrics.write_text('_GEVAL_PROMPT_TEMPLATE = """OFFICIAL {question} {predicted} {gold_variants}"""\n',
                       encoding="utf-8")
    with fp.FakeProvider("gemini", [verdict("correct")] * 3) as provider:
        assert main(_eval(files, provider, "--judge-prompt", str(metrics), "--json")) == 0
        assert provider.requests[0]["body"]["contents"][0]["parts"][0]["text"].startswith("OFFICIAL Revenue in 2024?")
    assert json.loads(capsys.readouterr().out)["run"]["semantic"]["prompt"] == str(metrics)
