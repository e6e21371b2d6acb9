"""Provider conformance, offline: a full multi-step question through litellm's real client against
fake OpenAI, Anthropic, Gemini and Ollama servers on 127.0.0.1, each checking its provider's
documented request rules on every request (tests/fake_providers.py; the rules and their sources:
docs/models.md), plus the error replies a real provider gives.
"""

from __future__ import annotations

import json
import os
import time

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests import fake_providers as fp  # noqa: E402

FULL_QUESTION = fp.full_question()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return fp.corpus_env(tmp_path_factory.mktemp("providers"))


ask = fp.ask


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_full_question_keeps_every_documented_rule(corpus, kind):
    with fp.FakeProvider(kind, list(FULL_QUESTION)) as provider:
        row = ask(corpus, provider)
    assert row["error"] is None and row["answer"] == ["62,500"], row["trajectory"][-3:]
    assert [c["page"] for c in row["citations"]] == [1, 2]
    assert len(provider.requests) == 5
    assert provider.failures() == [], provider.failures()
    assert {c.rule for c in provider.checks} >= {"roles", "tool results", "images", "tool schema"}
    assert "SECRET123" not in json.dumps(row)


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_text_only_model_sends_no_image(corpus, kind):
    with fp.FakeProvider(kind, list(FULL_QUESTION)) as provider:
        row = ask(corpus, provider, vision=False)
    assert row["answer"] == ["62,500"] and provider.failures() == []
    assert "Revenue in 2024 was 7.5 million euros, EUR 62,500 per employee." in json.dumps(provider.requests[1]["body"])
    assert all(s not in json.dumps(r["body"]) for r in provider.requests
               for s in ("image_url", "inlineData", "inline_data", '"images": ["', '"type": "image"'))


def test_anthropic_gets_max_tokens_and_cache_marks_on_the_stable_prefix(corpus):
    with fp.FakeProvider("anthropic", list(FULL_QUESTION)) as provider:
        ask(corpus, provider)
    bodies = [r["body"] for r in provider.requests]
    assert all(isinstance(b["max_tokens"], int) for b in bodies)
    assert all("cache_control" in b["system"][-1] for b in bodies)
    marked = [[blk for m in b["messages"] for blk in m["content"] if isinstance(blk, dict) and "cache_control" in blk]
              for b in bodies[1:]]
    assert all(len(m) == 1 and m[0]["type"] == "tool_result" for m in marked)


@pytest.mark.parametrize("thinking", [{"thinking": {"type": "enabled", "budget_tokens": 1024}},
                                      {"reasoning_effort": "low"}])  # litellm turns the second into the first
def test_claude_with_extended_thinking_gets_its_thinking_back_and_answers(corpus, thinking):
    # Anthropic refuses a request with thinking on whose last tool-calling turn does not start with the signed
    # thinking it came with: the question failed at its second call ("Expected `thinking` ... found `tool_use`")
    with fp.FakeProvider("anthropic", list(FULL_QUESTION)) as provider:
        row = ask(corpus, provider, completion_kwargs=thinking)
    assert row["error"] is None and row["answer"] == ["62,500"], row["trajectory"][-3:]
    assert len(provider.requests) == 5 and provider.failures() == []
    for n, request in enumerate(provider.requests[1:], start=1):
        turns = [m for m in request["body"]["messages"] if m["role"] == "assistant"]
        assert [t["content"][0] for t in turns] == [
            {"type": "thinking", "thinking": f"Step {k}: what do the pages say?", "signature": f"sig-{k}"}
            for k in range(1, n + 1)]  # every earlier turn, as it was signed


def test_claude_with_extended_thinking_is_asked_for_its_answer_without_a_forced_tool_choice(corpus):
    # the last step forced submit_answer, which thinking does not allow ("Thinking may not be enabled when
    # tool_choice forces tool use."): the turn is sent again with submit_answer offered alone, learned for the run
    script = [fp.search("revenue AND 2024"), fp.answer(["7.5 million euros"], [{"file": "report.pdf", "page": 1}])]
    with fp.FakeProvider("anthropic", script) as provider:
        row = ask(corpus, provider, completion_kwargs={"reasoning_effort": "low"}, max_steps_=2)
    assert row["error"] is None and row["answer"] == ["7.5 million euros"], row["trajectory"][-3:]
    forced = provider.requests[-1]["body"]
    assert "tool_choice" not in forced and [t["name"] for t in forced["tools"]] == ["submit_answer"]
    assert len(provider.requests) == 3  # the refused forced request, then the same turn without tool_choice
    notes = [n for step in row["trajectory"] for n in step.get("notes") or []]
    assert any("refused a forced tool choice" in n for n in notes), notes


# --- error replies -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", fp.KINDS)
def test_429_with_retry_after_is_retried_after_the_wait(corpus, kind):
    with fp.FakeProvider(kind, [fp.error(429, "slow down", **{"Retry-After": "0.3"}), *FULL_QUESTION]) as provider:
        row = ask(corpus, provider, retry_max_delay=1.0)
    assert row["answer"] == ["62,500"] and row["error"] is None
    assert provider.times[1] - provider.times[0] >= 0.3


@pytest.mark.parametrize("kind", fp.KINDS)
def test_400_shows_the_providers_reason(corpus, kind):
    reason = "Unrecognized request argument supplied: logprobs"  # (an image-count refusal is a ServerLimitError)
    with fp.FakeProvider(kind, [fp.search("revenue"), fp.error(400, reason)]) as provider:
        row = ask(corpus, provider)
    assert len(provider.requests) == 2  # a bad request is not retried
    assert row["error"].startswith("backend: ") and reason in row["error"]
    assert "SECRET123" not in json.dumps(row)


@pytest.mark.parametrize("kind", fp.KINDS)
def test_500_is_retried_then_reported(corpus, kind):
    with fp.FakeProvider(kind, [fp.error(500, "internal trouble")] * 3) as provider:
        row = ask(corpus, provider)
    assert len(provider.requests) == 3 and "server error" in row["error"] and "after 3 attempts" in row["error"]


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_hang_ends_at_the_timeout(corpus, kind):
    hang = 60.0  # each request would be answered (with nothing) after this; a client without our timeout waits
    with fp.FakeProvider(kind, [fp.hang(hang)] * 2) as provider:
        row = ask(corpus, provider, timeout=1, max_attempts=2)
        ended = time.monotonic()
    assert "did not answer in time" in row["error"] and len(provider.requests) == 2
    # Timed from the first request's arrival (not from the start: imports on a loaded machine can take
    # minutes): both 1 s attempts gave up long before the server's first hang would have ended.
    assert ended - provider.times[0] < hang


def test_invalid_json_in_tool_arguments_gets_one_repair_turn(corpus):
    with fp.FakeProvider("openai", [fp.raw_call("search_documents", '{"query": "revenue'), *FULL_QUESTION]) as p:
        row = ask(corpus, p)
    repair = p.requests[1]["body"]["messages"]
    assert repair[-1]["role"] == "tool" and "not valid JSON" in repair[-1]["content"]
    assert row["answer"] == ["62,500"] and p.failures() == []
    notes = [s for s in row["trajectory"] if s["type"] == "error" and s["where"] == "tool"]
    assert notes and "search_documents" in notes[0]["message"]


NAVIGATION = ("search_documents", "show_pages", "list_documents", "document_outline", "open_page", "next_pages",
              "search_in")


@pytest.mark.parametrize("kind", fp.KINDS)
def test_the_navigation_tools_schemas_pass_each_providers_rules(corpus, kind):
    replies = [fp.raw_call("list_documents", "{}"), fp.raw_call("document_outline", '{"file": "report.pdf"}'),
               fp.raw_call("open_page", '{"file": "report.pdf", "page": 1}'),
               fp.raw_call("next_pages", '{"file": "report.pdf", "page": 1, "direction": "after"}'),
               fp.raw_call("search_in", '{"file": "report.pdf", "query": "headcount"}'),
               fp.answer(["62,500"], [{"file": "report.pdf", "page": 1}, {"file": "report.pdf", "page": 2}])]
    with fp.FakeProvider(kind, replies) as provider:
        row = ask(corpus, provider, tools=NAVIGATION)
    assert row["error"] is None and row["answer"] == ["62,500"], row["trajectory"][-3:]
    offered = json.dumps(provider.requests[0]["body"])
    assert all(name in offered for name in NAVIGATION)
    assert provider.failures() == [], provider.failures()
    tools = [s["name"] for s in row["trajectory"] if s["type"] == "tool"]
    assert tools == ["list_documents", "document_outline", "open_page", "next_pages"]
    assert [s["tool"] for s in row["trajectory"] if s["type"] == "search"] == ["search_in"]


def test_the_gemini_fake_refuses_what_gemini_refuses_in_a_schema():
    assert fp._gemini_schema({"type": "object", "properties": {}}, "p") == [
        "p.properties: should be non-empty for OBJECT type"]
    assert fp._gemini_schema({"type": "object", "properties": {"n": {"type": "integer", "enum": [1, 2]}}}, "p") == [
        "p.properties[n].enum: only strings"]


def test_a_text_protocol_model_is_told_the_navigation_tools_and_its_calls_are_read(corpus):
    replies = [fp.text(json.dumps({"tool": "open_page", "arguments": {"file": "report.pdf", "page": 2}})),
               fp.json_answer(["62,500"], [{"file": "report.pdf", "page": 1}, {"file": "report.pdf", "page": 2}])]
    with fp.FakeProvider("openai", replies) as provider:
        row = ask(corpus, provider, tools=NAVIGATION, native_tools=False)
    assert row["error"] is None and row["answer"] == ["62,500"]
    system = json.dumps(provider.requests[0]["body"]["messages"][0])
    assert "tools" not in provider.requests[0]["body"]
    assert '{\\"tool\\": \\"<name>\\", \\"arguments\\": {...}}' in system and "- open_page(file: string, page: integer)" in system
    opened = [s for s in row["trajectory"] if s["type"] == "tool"]
    assert [(s["name"], [p["page"] for p in s["new_pages"]]) for s in opened] == [("open_page", [2])]
