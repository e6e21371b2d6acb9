"""The llm-rewrite strategy through litellm's own client and offline mocks: no network, no key."""

from __future__ import annotations

import logging

import pytest

import madqa
from madqa.agent import Agent, SearchState
from madqa.corpus import Corpus
from madqa.index import ingest
from madqa.settings import load_config
from madqa.trace import Trace
from madqa_plugins.strategies.llm_rewrite import LLMRewrite, parse_query
from tests.conftest import make_pdf

pytest.importorskip("litellm")
SECRET = "sk-test-1234567890abcdef"


def state(queries, new_counts, question="How many staff work at the plant?"):
    s = SearchState(question)
    s.queries, s.written, s.new_page_counts = list(queries), list(queries), list(new_counts)
    return s


def test_a_stale_query_is_rewritten_and_the_note_says_by_what_and_at_what_cost():
    strategy = LLMRewrite({"mock_response": "employees plant headcount"})
    query, note, *_ = strategy.rewrite("staff plant", state(["staff plant"], [2]))
    assert query == "employees plant headcount"
    assert note.startswith("too close to 'staff plant' (1.00): rewritten by openai/gpt-4.1-nano, ")
    assert "tokens" in note


def test_a_fresh_query_is_left_alone_unless_always():
    strategy = LLMRewrite({"mock_response": "employees"})
    assert strategy.rewrite("staff plant", state([], [])) == ("staff plant", None)
    assert strategy.rewrite("night shift", state(["staff plant"], [2])) == ("night shift", None)
    always = LLMRewrite({"mock_response": "employees", "when": "always"})
    assert always.rewrite("staff plant", state([], []))[0] == "employees"


@pytest.mark.parametrize("reply", ["", "   ", "staff plant", "STAFF  plant"])
def test_an_empty_or_repeated_reply_keeps_the_query(reply):
    query, note, *_ = LLMRewrite({"mock_response": reply}).rewrite("staff plant", state(["staff plant"], [0]))
    assert query == "staff plant" and "kept the query" in note


def test_a_provider_error_keeps_the_query_and_never_shows_the_key(monkeypatch, caplog):
    monkeypatch.setenv("REWRITE_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    strategy = LLMRewrite({"api_key_env": "REWRITE_KEY", "max_attempts": 1,
                           "mock_responses": [RuntimeError(f"invalid key {SECRET}")]})
    query, note, *_ = strategy.rewrite("staff plant", state(["staff plant"], [0]))
    assert query == "staff plant" and "the rewrite model failed" in note and "kept the query" in note
    assert SECRET not in note and SECRET not in repr(strategy) and SECRET not in caplog.text


def test_the_key_itself_is_refused_as_an_option_and_a_missing_variable_is_named(monkeypatch):
    with pytest.raises(madqa.PluginError, match="api_key_env"):
        LLMRewrite({"api_key": SECRET})
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(madqa.PluginError, match="NO_SUCH_KEY_VAR"):
        LLMRewrite({"api_key_env": "NO_SUCH_KEY_VAR"})
    with pytest.raises(madqa.PluginError, match="when"):
        LLMRewrite({"when": "sometimes"})


@pytest.mark.parametrize("text, query", [
    ("employees plant", "employees plant"), ('Query: "night shift"', "night shift"),
    ('{"query": "headcount"}', "headcount"), ('```\nstaff OR employees\n```', "staff OR employees"),
    ('"annual report" AND revenue', '"annual report" AND revenue'), (None, None), ("", None),
])
def test_replies_are_read_as_one_query(text, query):
    assert parse_query(text) == query


def test_llm_rewrite_runs_with_the_offline_backend_on_a_real_index(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "hr.pdf", ["Staffing. The plant has 31 employees on three shifts."])
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    config = load_config("offline").with_overrides(
        query_strategy="llm-rewrite", options={"query_strategy": {"mock_response": "employees", "when": "always"},
                                               # a one-page corpus lacks "work": the reader would rightly abstain
                                               "backend": {"abstain_threshold": 0.0}})
    agent = Agent(corpus, config, registry, settings)
    question = "How many staff work at the plant?"
    row = Trace(question, config, "q").consume(agent.run(question)).row()
    first = next(s for s in row["trajectory"] if s["type"] == "search")
    assert first["executed_query"] == "employees" and "rewritten by" in first["strategy_note"]
    assert row["answer"] == ["31"] and row["citations"] == [
        {"file": "hr.pdf", "page": 1, "quote": "Staffing. The plant has 31 employees on three shifts."}]
    searches = [s for s in row["trajectory"] if s["type"] == "search"]
    rewrite_tokens = sum(s["usage"]["total_tokens"] for s in searches)
    model_tokens = sum(s["usage"]["total_tokens"] for s in row["trajectory"] if s["type"] == "model")
    assert first["usage"]["total_tokens"] > 0  # the rewrite model's tokens count in the run's totals
    assert row["usage"]["total_tokens"] == rewrite_tokens + model_tokens
