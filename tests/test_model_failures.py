"""What the loop does with the models people really run: prose, tool calls written as text, refusals,
cut-off and filtered replies, server limits, plugins that raise, budgets. A failure is never a score."""

from __future__ import annotations

import pytest

import madqa
from madqa.agent import Agent
from madqa.budget import Budget
from madqa.prompts import CLOSED_WORLD, OPEN_WORLD
from madqa.settings import load_config
from madqa.trace import Trace
from madqa.types import AnswerStep, ErrorStep, SearchStep

QUESTION = "What was the revenue in 2024?"
ANSWER = {"answer": ["7.5 million"], "citations": [{"file": "report.pdf", "page": 1, "quote": "Revenue in 2024 was 7.5 million."}]}


def run(corpus, registry, settings, script, budget=None, **overrides):
    config = load_config("offline").with_overrides(backend="scripted", **overrides)
    agent = Agent(corpus, config, registry, settings, {"script": script})
    trace = Trace(QUESTION, config, "q1").consume(agent.run(QUESTION, budget=budget))
    return trace, agent.backend


def last_answer(trace) -> AnswerStep:
    step = trace.steps[-1]
    assert isinstance(step, AnswerStep)
    return step


# ------------------------------------------------------------------ replies the loop must read


def test_a_prose_answer_on_the_last_step_gets_one_repair_turn_and_its_answer_is_used(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [
        {"search": "revenue 2024"},
        {"text": "The answer is 7.5 million, on page 1 of the report."},
        ANSWER,
    ], max_steps=2)
    row = trace.row()
    assert row["answer"] == ["7.5 million"] and row["error"] is None and not row["refusal"]
    assert backend.calls[-1]["force_answer"] and [t["function"]["name"] for t in backend.calls[-1]["tools"]] == [
        "submit_answer"]
    note = backend.calls[-1]["messages"][-1]["content"]
    assert "could not be read as a final answer" in note and '"citations"' in note
    assert any(isinstance(s, ErrorStep) and s.where == "answer" for s in trace.steps)


def test_prose_after_the_repair_turn_is_a_failure_not_an_answer(corpus, registry, settings):
    trace, _ = run(corpus, registry, settings, [
        {"search": "revenue 2024"},
        {"text": "The answer is 7.5 million."},
        {"text": "As I said, 7.5 million."},
    ], max_steps=2)
    row = trace.row()
    assert row["answer"] == [] and not row["refusal"]
    assert row["error"].startswith("no answer could be read from the model's reply, even after a repair turn")


def test_a_model_that_keeps_searching_when_it_must_answer_fails_with_the_reason(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [{"search": "revenue"}] * 10, max_steps=3)
    row = trace.row()
    assert len(backend.calls) == 4  # three steps and one repair turn, then no more
    assert "the model called search_documents when it had to answer" in row["error"]
    assert row["answer"] == [] and row["refusal"] is False


def test_a_model_that_keeps_replying_in_prose_is_asked_for_its_answer_after_two_such_replies(corpus, registry,
                                                                                              settings):
    prose = {"text": "The total revenue was 7.5 million (report.pdf, page 1)."}
    trace, backend = run(corpus, registry, settings, [{"search": "revenue 2024"}, prose, prose, ANSWER], max_steps=10)
    row = trace.row()
    assert row["answer"] == ["7.5 million"] and row["error"] is None
    assert [c["force_answer"] for c in backend.calls] == [False, False, False, True]  # not 7 more of the same
    assert "forced to answer after 2 replies in a row that called no tool" in row["flags"]
    # still prose when asked: one repair turn, then a failure, at the 5th call instead of the 11th
    trace, backend = run(corpus, registry, settings, [{"search": "revenue 2024"}] + [prose] * 12, max_steps=10)
    assert len(backend.calls) == 5 and trace.row()["error"].startswith("no answer could be read")
    # a reply without a tool call now and then (a model thinking aloud) is only reminded of the tools
    trace, backend = run(corpus, registry, settings, [{"search": "revenue"}, prose, {"search": "revenue 2024"},
                                                      prose, ANSWER], max_steps=10)
    assert [c["force_answer"] for c in backend.calls] == [False] * 5 and trace.row()["answer"] == ["7.5 million"]


@pytest.mark.parametrize("text", [
    "I cannot find this information in the documents.",
    "<think>The pages say nothing about it.</think>The documents do not contain this information.",
])
def test_a_refusal_written_as_text_is_a_refusal(corpus, registry, settings, text):
    trace, _ = run(corpus, registry, settings, [{"search": "revenue"}, {"text": text}])
    row = trace.row()
    assert row["refusal"] is True and row["answer"] == [] and row["error"] is None


def test_a_refusal_written_as_the_answer_item_is_a_refusal(corpus, registry, settings):
    trace, _ = run(corpus, registry, settings, [
        {"search": "revenue"}, {"answer": ["Not found in the documents"], "citations": []}])
    row = trace.row()
    assert row["refusal"] is True and row["answer"] == [] and row["error"] is None
    assert any("reads as a refusal" in f for f in row["flags"])


@pytest.mark.parametrize("written", [
    '{"name": "search_documents", "arguments": {"query": "revenue 2024"}}',
    '```json\n{"name": "search_documents", "arguments": {"query": "revenue 2024"}}\n```',
    '<tool_call>\n{"name": "search_documents", "arguments": {"query": "revenue 2024"}}\n</tool_call>',
    '[TOOL_CALLS] [{"name": "search_documents", "arguments": {"query": "revenue 2024"}}]',
    '<think>maybe {"name": "show_pages", "arguments": {}}</think>{"search": "revenue 2024"}',
])
def test_tool_calls_written_as_text_are_run(corpus, registry, settings, written):
    trace, _ = run(corpus, registry, settings, [{"text": written}, ANSWER])
    searches = [s for s in trace.steps if isinstance(s, SearchStep)]
    assert [s.query for s in searches] == ["revenue 2024"]
    row = trace.row()
    assert row["answer"] == ["7.5 million"] and row["citations"][0]["page"] == 1 and row["error"] is None
    assert any("read from the reply's text" in n for n in trace.steps[0].notes)


def test_an_answer_written_as_a_text_tool_call_is_the_answer_never_raw_json(corpus, registry, settings):
    written = ('<tool_call>{"name": "submit_answer", "arguments": {"answer": ["7.5 million"], "citations": '
               '[{"file": "report.pdf", "page": 1, "quote": "Revenue in 2024 was 7.5 million."}]}}</tool_call>')
    trace, _ = run(corpus, registry, settings, [{"search": "revenue"}, {"text": written}])
    assert trace.row()["answer"] == ["7.5 million"]


# ------------------------------------------------------------------ finish reasons


def test_a_reply_cut_off_by_max_tokens_is_a_failure_naming_the_option(corpus, registry, settings):
    trace, _ = run(corpus, registry, settings, [
        {"search": "revenue"},
        {"text": "Let me think about this carefully. The documents show that the", "finish_reason": "length"}])
    row = trace.row()
    assert row["answer"] == [] and "backend.max_tokens" in row["error"] and "finish_reason length" in row["error"]


def test_a_content_filter_is_a_failure_that_names_the_filter(corpus, registry, settings):
    trace, _ = run(corpus, registry, settings, [
        {"search": "revenue"}, {"text": "", "finish_reason": "content_filter"}])
    assert "content filter" in trace.row()["error"]


# ------------------------------------------------------------------ server limits


def images_sent(call) -> int:
    return sum(1 for m in call["messages"] if isinstance(m.get("content"), list)
               for p in m["content"] if p.get("type") == "image_url")


def test_an_image_count_limit_is_learned_and_the_turn_sent_again(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [
        {"search": "revenue 2024 memo budget"},
        {"limit": "images_per_request", "value": 1},
        ANSWER,
    ])
    row = trace.row()
    assert row["answer"] == ["7.5 million"] and row["error"] is None
    assert images_sent(backend.calls[1]) >= 2 and images_sent(backend.calls[2]) == 1
    assert any("at most 1 image(s) per request" in f for f in row["flags"])
    assert any(isinstance(s, ErrorStep) and s.where == "recovery" for s in trace.steps)


def test_a_text_only_model_gets_page_text(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [{"search": "revenue"}, {"limit": "vision"}, ANSWER])
    assert trace.row()["answer"] == ["7.5 million"]
    assert images_sent(backend.calls[2]) == 0
    assert any("Revenue in 2024 was 7.5 million" in str(m["content"]) for m in backend.calls[2]["messages"])


def test_an_image_too_large_is_redrawn_at_half_the_budget_once_then_fails(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [
        {"search": "revenue"}, {"limit": "image_size"}, {"limit": "image_size"}, {"limit": "image_size"},
        {"limit": "image_size"}, {"limit": "image_size"}], image_budget_px=1_000_000)
    row = trace.row()
    sizes = [len(str(c["messages"])) for c in backend.calls[1:]]
    assert sizes[1] < sizes[0]  # redrawn smaller
    assert "nothing left to cut" in row["error"] and row["answer"] == []


def test_a_context_too_long_drops_images_then_text(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [
        {"search": "revenue 2024 memo budget"}, {"limit": "context_length"}, {"limit": "context_length"}, ANSWER])
    assert trace.row()["answer"] == ["7.5 million"]
    counts = [images_sent(c) for c in backend.calls[1:]]
    assert counts[0] > counts[1] > counts[2] or counts[2] == 0


# ------------------------------------------------------------------ plugins that raise


class Broken:
    def search(self, query, k):
        raise AttributeError("'NoneType' object has no attribute 'hits'")


class Refusing:
    def search(self, query, k):
        raise madqa.SearchError("the query could not be parsed")


def with_retriever(corpus, registry, settings, retriever, script):
    config = load_config("offline").with_overrides(backend="scripted")
    agent = Agent(corpus, config, registry, settings, {"script": script})
    agent.retriever = retriever
    return Trace(QUESTION, config, "q1").consume(agent.run(QUESTION))


def test_a_plugin_bug_is_an_error_row_with_its_traceback(corpus, registry, settings):
    trace = with_retriever(corpus, registry, settings, Broken(), [{"search": "revenue"}, ANSWER])
    row = trace.row()
    assert row["error"].startswith("the retriever raised AttributeError") and row["answer"] == []
    assert not row["refusal"]
    error = next(s for s in trace.steps if isinstance(s, ErrorStep))
    assert "Traceback" in error.message and "def search" not in row["error"]


def test_a_plugins_own_error_is_an_observation(corpus, registry, settings):
    trace = with_retriever(corpus, registry, settings, Refusing(), [
        {"search": "revenue"}, {"answer": [], "citations": []}])
    row = trace.row()
    assert row["error"] is None and row["refusal"] is True
    assert trace.searches[0].error == "the query could not be parsed"


class Found:
    """A retriever that finds page 1 of report.pdf without reading the page store."""

    def search(self, query, k):
        return madqa.SearchResult((madqa.Hit("report.pdf", 1, 1.0, ""),), query, None)


def test_a_damaged_page_store_is_a_courtesy_lost_but_a_bug_reading_it_is_an_error_row(corpus, registry, settings,
                                                                                        monkeypatch):
    """The page text beside an image, and the quote check, live without a damaged page store (madqa's own
    IndexDamagedError, flagged); any other exception there is a bug: it is not swallowed into an empty excerpt,
    and a batch run makes the question an error row."""
    from madqa.evaluation.answering import answer_question

    def damaged(file, page):
        raise madqa.IndexDamagedError("the page store is damaged")

    monkeypatch.setattr(corpus, "page_text", damaged)
    trace = with_retriever(corpus, registry, settings, Found(), [{"search": "revenue"}, ANSWER])
    row = trace.row()
    assert row["error"] is None and row["answer"] == ["7.5 million"]
    assert any("could not be read to check its quote (the page store is damaged)" in f for f in trace.steps[-1].flags)

    def buggy(file, page):
        raise TypeError("a bug reading page text")

    monkeypatch.setattr(corpus, "page_text", buggy)
    with pytest.raises(TypeError, match="a bug reading page text"):
        with_retriever(corpus, registry, settings, Found(), [{"search": "revenue"}, ANSWER])
    config = load_config("offline").with_overrides(backend="scripted")
    agent = Agent(corpus, config, registry, settings, {"script": [{"search": "revenue"}, ANSWER]})
    agent.retriever = Found()
    row = answer_question({"id": "q1", "question": QUESTION}, config, lambda: agent)
    assert row["error"] == "internal: TypeError: a bug reading page text" and row["answer"] == []


# ------------------------------------------------------------------ budgets


def test_max_calls_counts_the_answer_which_is_reserved(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [{"search": "revenue"}, {"search": "memo"}, ANSWER] + [
        {"search": "x"}] * 5, options={"budget": {"max_calls": 3}})
    assert [c["force_answer"] for c in backend.calls] == [False, False, True]
    assert trace.row()["answer"] == ["7.5 million"]


def test_a_cost_budget_on_an_unpriced_model_is_charged_an_estimate():
    budget = Budget(max_cost_usd=0.1)
    budget.charge(madqa.Usage(900, 100), None)
    assert budget.cost_usd == pytest.approx(1000 * 15.0 / 1e6) and budget.estimated_calls == 1
    budget.charge(madqa.Usage(0, 0), None)
    assert budget.exhausted is None
    budget.charge(madqa.Usage(10_000, 0), None)
    assert "estimated" in (budget.exhausted or "")


def test_a_token_budget_with_no_usage_reported_is_charged_an_estimate(corpus, registry, settings):
    class Silent:
        supports_tools = True

        def __init__(self):
            self.script = [madqa.ModelDecision(tool_calls=(madqa.ToolCall("search_documents", {"query": "revenue"}),))]

        def decide(self, messages, tools, force_answer):
            return self.script.pop(0) if self.script else madqa.ModelDecision(answer=ANSWER)

    config = load_config("offline").with_overrides(backend="scripted", options={"budget": {"max_tokens": 100}})
    agent = Agent(corpus, config, registry, settings, {"script": []})
    agent.backend = Silent()
    trace = Trace(QUESTION, config, "q1").consume(agent.run(QUESTION))
    row = trace.row()
    assert row["answer"] == ["7.5 million"]
    assert any("tokens reached" in f and "estimated" in f for f in row["flags"])


# ------------------------------------------------------------------ open and closed world


def test_people_get_the_open_world_prompt_and_benchmarks_the_closed_one(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [ANSWER])
    system = backend.calls[0]["messages"][0]["content"]
    assert OPEN_WORLD in system and CLOSED_WORLD not in system
    assert trace.row()["answer_always_present"] is False
    trace, backend = run(corpus, registry, settings, [ANSWER], answer_always_present=True)
    assert CLOSED_WORLD in backend.calls[0]["messages"][0]["content"]
    assert trace.row()["answer_always_present"] is True


def test_a_config_with_another_backend_is_named_by_backend_and_model():
    config = load_config("offline").with_overrides(backend="litellm", model="openai/gpt-4o", top_k=3)
    assert config.name == "litellm:openai/gpt-4o[top_k=3]"


# ------------------------------------------------------------------ honest accounting in the CLI


def cli_run(tmp_path, corpus, settings, monkeypatch, reply, *extra):
    import json

    from madqa.cli import main

    monkeypatch.setenv("MADQA_HOME", str(settings.home))
    questions = tmp_path / "q.jsonl"
    rows = [{"id": "q1", "question": QUESTION, "answer_variants": [["7.5 million"]], "kind": "number"},
            {"id": "q2", "question": "Who is the CEO?", "answer_variants": [], "kind": "person"}]
    questions.write_text("".join(json.dumps(q) + "\n" for q in rows), encoding="utf-8")
    out = tmp_path / "pred.jsonl"
    code = main(["run", "--corpus", str(corpus.root), "--questions", str(questions), "-o", str(out),
                 "--backend", "litellm", "--model", "openai/gpt-4o", "--max-steps", "2",
                 "--set", f"backend.mock_response={reply}", *extra])
    return code, out, questions


def test_run_counts_rows_with_no_readable_answer_as_failed_and_exits_1(tmp_path, corpus, settings, monkeypatch,
                                                                        capsys):
    import json

    code, out, _ = cli_run(tmp_path, corpus, settings, monkeypatch, "The answer is 7.5 million.")
    captured = capsys.readouterr()
    assert code == 1
    assert "no row scored, 2 failed, 0 refused" in captured.out  # never "accuracy 0.000": nothing was scored
    assert "--resume" in captured.err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(r["error"] and r["answer"] == [] for r in rows)
    assert rows[0]["config"].startswith("litellm:openai/gpt-4o[") and "max_steps=2" in rows[0]["config"]


def test_the_run_summary_scores_only_rows_that_did_not_fail():
    from madqa.cli.agent import run_summary

    questions = [{"id": f"q{n}", "question": "?", "answer_variants": [["7.5 million"]]} for n in range(3)]
    right = {"id": "q0", "answer": ["7.5 million"], "error": None, "refusal": False}
    broken = [{"id": f"q{n}", "answer": [], "error": "backend: HTTP 500", "refusal": False} for n in (1, 2)]
    # one answer scored (right), two failures counted apart; the harness's figure (failed = wrong) beside it
    assert run_summary([right, *broken], questions) == ("accuracy 1.000 on 1 scored, 2 failed, 0 refused "
                                                        "(madqa eval counts the failed as wrong: 0.333 on 3)")
    assert run_summary([right], questions) == "accuracy 1.000 on 1 scored, 0 failed, 0 refused"
    assert run_summary(broken, questions) == "no row scored, 2 failed, 0 refused"


def test_run_of_refusals_exits_0_and_eval_reports_them_by_any_field(tmp_path, corpus, settings, monkeypatch,
                                                                    capsys):
    import json

    from madqa.cli import main

    code, out, questions = cli_run(tmp_path, corpus, settings, monkeypatch,
                                   "I cannot find this information in the documents.")
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "0 failed, 2 refused" in captured.out
    assert main(["eval", str(out), "--gold", str(questions), "--json", "--by", "kind"]) == 0
    report = json.loads(capsys.readouterr().out)["pred"]
    assert report["overall"]["n_unanswerable"] == 1 and report["overall"]["unanswerable_refused"] == 1.0
    assert set(report["by_kind"]) == {"number", "person"}
    assert report["overall"]["accuracy"] == 0.0 and report["overall"]["n"] == 2


def test_a_budget_of_one_call_makes_that_call_the_answer(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [ANSWER], options={"budget": {"max_calls": 1}})
    assert [c["force_answer"] for c in backend.calls] == [True] and trace.row()["error"] is None
