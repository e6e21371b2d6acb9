"""The agent loop with the scripted backend on a real index: every rule of Algorithm 1 as we run it."""

from __future__ import annotations

import json

import pytest

import madqa
from madqa.agent import Agent
from madqa.settings import load_config
from madqa.trace import Trace
from madqa.types import AnswerStep, ErrorStep, ModelStep, SearchStep
from tests.conftest import two_file_corpus


@pytest.fixture
def corpus(tmp_path, settings, registry):
    return two_file_corpus(tmp_path / "docs", settings, registry, report="fin/report.pdf")


def run(corpus, registry, settings, script, **overrides):
    config = load_config("offline").with_overrides(backend="scripted", **overrides)
    agent = Agent(corpus, config, registry, settings, {"script": script})
    trace = Trace("What was the revenue in 2024?", config, "q1").consume(agent.run("What was the revenue in 2024?"))
    return trace, agent.backend


def test_search_then_answer(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [
        {"search": "revenue 2024"},
        {"answer": ["7.5 million"], "citations": [{"file": "fin/report.pdf", "page": 1}]},
    ])
    kinds = [s.type for s in trace.steps]
    assert kinds == ["model", "search", "model", "answer"]
    search = trace.steps[1]
    assert isinstance(search, SearchStep) and search.new_pages[0] == madqa.PageRef("fin/report.pdf", 1)
    row = trace.row()
    assert row["answer"] == ["7.5 million"] and row["citations"] == [{"file": "fin/report.pdf", "page": 1}]
    # the page with both words first, then the memo holding only "2024" (a plain query is not a strict AND)
    assert row["search_history"] == [{"iteration": 1, "query": "revenue 2024", "num_results": 2}]
    assert row["iterations"] == 2 and row["id"] == "q1" and row["error"] is None
    assert row["usage"] == {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}
    json.dumps(row)  # the row is plain JSON
    # the second call saw: tool message (text only) then a user message with label + image
    messages = backend.calls[1]["messages"]
    assert messages[-3]["role"] == "assistant" and messages[-3]["tool_calls"][0]["function"]["name"] == "search_documents"
    assert messages[-2]["role"] == "tool" and isinstance(messages[-2]["content"], str)
    parts = messages[-1]["content"]
    assert messages[-1]["role"] == "user" and parts[0] == {"type": "text", "text": "File: fin/report.pdf, Page: 1"}
    assert parts[1]["type"] == "image_url" and parts[1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_running_out_of_steps_forces_an_answer(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [{"search": "revenue"}] * 10, max_steps=3)
    # the third call is forced; it searched anyway, so one repair turn restates the answer format
    assert [c["force_answer"] for c in backend.calls] == [False, False, True, True]
    assert [t["function"]["name"] for t in backend.calls[-1]["tools"]] == ["submit_answer"]
    assert {t["function"]["name"] for t in backend.calls[0]["tools"]} == {"search_documents", "show_pages",
                                                                          "submit_answer"}
    answer = trace.steps[-1]
    assert isinstance(answer, AnswerStep) and answer.iteration == 4
    # the model searched on the answer step and again after the repair turn: a failure, not a refusal
    row = trace.row()
    assert not answer.refusal and row["answer"] == [] and "when it had to answer" in row["error"]


def test_seen_pages_are_not_sent_again(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [
        {"search": "revenue"}, {"search": "revenue OR headcount"},
        {"answer": ["7.5 million"], "citations": [{"file": "fin/report.pdf", "page": 1}]},
    ])
    first, second = trace.searches
    assert [r.page for r in first.new_pages] == [1]
    assert [r.page for r in second.new_pages] == [2] and len(second.hits) == 2
    tool_text = backend.calls[2]["messages"][-2]["content"]
    assert "Already shown earlier (not repeated; see their excerpts, or call show_pages): " \
           "File: fin/report.pdf, Page: 1" in tool_text
    images = [p for m in backend.calls[2]["messages"] if isinstance(m["content"], list)
              for p in m["content"] if p["type"] == "image_url"]
    assert len(images) == 1  # only the newest page goes as an image; page 1 is now an excerpt
    excerpts = backend.calls[2]["messages"][-4]["content"][-1]["text"]
    assert excerpts.startswith("Pages shown earlier") and 'File: fin/report.pdf, Page: 1: "Revenue in 2024' in excerpts


@pytest.mark.parametrize("reply,expected,refusal", [
    ('{"answer": "7.5 million", "citations": [{"file": "fin/report.pdf", "page": "1"}],}', ["7.5 million"], False),
    ("```json\n{'answer': ['7.5 million'], 'citations': []}\n```", ["7.5 million"], False),
    ("I could not find it, sorry. The documents do not seem to say anything about this at all.", [], True),
    # short free text is no longer taken as the answer: it gets a repair turn (tests/test_model_failures.py)
])
def test_free_text_answers_are_repaired_or_refused(corpus, registry, settings, reply, expected, refusal):
    trace, _ = run(corpus, registry, settings, [{"search": "revenue"}, {"text": reply}], max_steps=2)
    answer = trace.steps[-1]
    assert list(answer.answer) == expected and answer.refusal is refusal


def test_citation_checks(corpus, registry, settings):
    trace, _ = run(corpus, registry, settings, [
        {"search": "revenue"},
        {"answer": ["7.5 million"], "citations": [
            {"file": "fin/report.pdf", "page": 1},  # seen: kept
            {"file": "report.pdf", "page": 1},  # bare name, unique: matched, duplicate dropped
            {"file": "fin/report.pdf", "page": 2},  # exists, never shown
            {"file": "fin/report.pdf", "page": 9},  # out of range
            {"file": "nowhere.pdf", "page": 1},  # not in the corpus
            {"document": "memo.pdf", "page": "p. 1"},  # never shown
        ]},
    ])
    answer = trace.steps[-1]
    assert answer.citations == (madqa.PageRef("fin/report.pdf", 1),)
    assert len(answer.raw_citations) == 6
    flags = " | ".join(answer.flags)
    for needle in ("Page: 2 was never shown", "page 9 of fin/report.pdf does not exist",
                   "'nowhere.pdf' is not in the corpus", "memo.pdf, Page: 1 was never shown"):
        assert needle in flags


class Exploding:
    def search(self, query, k):
        raise madqa.SearchError("index on fire")  # the plugin's own error; a bug ends the question instead


def test_retriever_error_becomes_an_observation(corpus, registry, settings):
    config = load_config("offline").with_overrides(backend="scripted")
    agent = Agent(corpus, config, registry, settings, {"script": [
        {"search": "revenue"}, {"answer": ["7.5 million"], "citations": []}]})
    agent.retriever = Exploding()
    trace = Trace("q", config).consume(agent.run("q"))
    search = trace.searches[0]
    assert search.error == "index on fire" and search.hits == ()
    assert "Error: index on fire" in agent.backend.calls[1]["messages"][-1]["content"]
    assert trace.steps[-1].answer == ("7.5 million",)


def test_backend_failure_ends_with_an_error_not_a_refusal(corpus, registry, settings):
    trace, _ = run(corpus, registry, settings, [{"search": "revenue"}, {"raise": "rate limited"}])
    assert isinstance(trace.steps[-2], ErrorStep) and trace.steps[-2].where == "backend"
    assert not trace.steps[-1].refusal and trace.steps[-1].failure
    assert trace.row()["error"] == "backend: rate limited"


def test_bad_tool_calls_are_observations(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [
        {"tool_calls": [{"name": "search_documents", "arguments": {}}, {"name": "open_file", "arguments": {}}]},
        {"answer": [], "citations": []},
    ])
    assert trace.searches[0].error == "no query given"
    assert any(isinstance(s, ErrorStep) and "unknown tool 'open_file'" in s.message for s in trace.steps)
    tool_messages = [m for m in backend.calls[1]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 2  # every tool call gets its result
    assert trace.steps[-1].refusal


def test_steps_carry_timings(corpus, registry, settings):
    trace, _ = run(corpus, registry, settings, [{"search": "revenue"}, {"answer": ["x"], "citations": []}])
    assert all(s.elapsed_s >= 0 for s in trace.steps if isinstance(s, (ModelStep, SearchStep)))
    assert trace.row()["latency_s"] > 0


def test_unreadable_tool_arguments_get_one_repair_turn(corpus, registry, settings):
    broken = madqa.ToolCall("submit_answer", {}, "", "not valid JSON (Unterminated string) in '{\"answer\": [\"7.5'")
    trace, backend = run(corpus, registry, settings, [
        {"search": "revenue"},
        {"tool_calls": [{"name": "submit_answer", "arguments": {}}], "broken": broken},
        {"answer": ["7.5 million"], "citations": [{"file": "fin/report.pdf", "page": 1}]},
    ])
    assert trace.steps[-1].answer == ("7.5 million",)
    repair = backend.calls[2]["messages"][-1]
    assert repair["role"] == "tool" and "Unterminated string" in repair["content"]
    assert any(s.type == "error" and "asked the model to send it again" in s.message for s in trace.steps)


def test_unreadable_answer_after_the_repair_turn_is_given_up(corpus, registry, settings):
    broken = madqa.ToolCall("submit_answer", {}, "", "not valid JSON (Expecting value)")
    trace, _ = run(corpus, registry, settings, [{"broken": broken}, {"broken": broken}], max_steps=1)
    answer = trace.steps[-1]
    assert answer.failure and answer.flags[0].startswith("the submit_answer arguments could not be read")
    assert not answer.refusal and trace.row()["error"] == answer.failure
    models = [s for s in trace.steps if s.type == "model"]
    assert len(models) == 2 and models[0].notes == ("submit_answer: not valid JSON (Expecting value)",)  # +1 call


def test_ask_exits_1_when_the_backend_failed(corpus, settings, monkeypatch, capsys):
    from madqa.cli import main

    monkeypatch.setenv("MADQA_HOME", str(settings.home))
    refused = ["--backend", "litellm", "--model", "openai/local", "--api-base", "http://127.0.0.1:9/v1",
               "--set", "backend.max_attempts=1"]  # nothing listens on port 9: connection refused
    assert main(["ask", "--corpus", str(corpus.root), "What was the revenue in 2024?", *refused]) == 1
    assert "error in backend: the openai server at api_base could not be reached" in capsys.readouterr().out
    assert main(["ask", "--corpus", str(corpus.root), "What was the revenue in 2024?"]) == 0  # offline answers
