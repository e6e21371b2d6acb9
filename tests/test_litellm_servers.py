"""How the litellm backend meets what real servers (and the proxies in front of them) send, through litellm's
real client against fake servers on 127.0.0.1 (issue 37): a refused forced tool_choice, Gemini's retryDelay,
rejected keys, timeouts, bodies cut mid-reply, 413s, HTML error pages, no credits, an error object in a 200,
a stream of nothing, and the answer under other keys. Each ends with the answer, or with an error that names
the cause and the option that fixes it."""

from __future__ import annotations

import logging
import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import madqa  # noqa: E402
from madqa.loop.replies import unread  # noqa: E402
from madqa_plugins.litellm import litellm_protocol as protocol  # noqa: E402
from tests import fake_behaviours as fb  # noqa: E402
from tests import fake_providers as fp  # noqa: E402
from tests.litellm_fakes import TOOLS, backend, history  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_memo():
    protocol.forget()
    yield
    protocol.forget()


def failed(kind: str, replies: list[fp.Reply], model: str | None = None, images: int = 0,
           **options: object) -> tuple[str, fp.FakeProvider, list[float]]:
    """(the BackendError's message, the provider, the waits) of one turn that must fail."""
    sleeps: list[float] = []
    with fp.FakeProvider(kind, replies, model=model) as p:
        with pytest.raises(madqa.BackendError) as caught:
            backend(p, sleeps, **options).decide(history(images), TOOLS, False)
    return str(caught.value), p, sleeps


# --- a forced tool_choice refused -----------------------------------------------------------------------


@pytest.mark.parametrize("flavour", ["vllm", "llamacpp", "openai"])
def test_a_refused_named_tool_choice_sends_the_turn_again_unforced_and_is_learned(flavour, caplog):
    server = fb.Server(named_choice=False, flavour=flavour)
    answer = fp.answer(["62,500"], [{"file": "report.pdf", "page": 1}])
    with fp.FakeProvider("openai", [answer, answer], server=server, model="openai/local-model") as p:
        with caplog.at_level(logging.WARNING, logger="madqa.litellm"):
            decision = backend(p).decide(history(), TOOLS, True)
            again = backend(p).decide(history(), TOOLS, True)  # another backend of the same (api_base, model)
    assert [c.name for c in decision.tool_calls] == ["submit_answer"]
    assert [c.name for c in again.tool_calls] == ["submit_answer"]
    sent = [r["body"].get("tool_choice") for r in p.requests]
    assert sent[0] == {"type": "function", "function": {"name": "submit_answer"}} and sent[1:] == [None, None]
    assert any(fb.CHOICE_REFUSED in n for n in decision.raw["notes"])
    warned = [r.getMessage() for r in caplog.records if "tool_choice" in r.getMessage()]
    assert len(warned) == 1 and "backend.force_tool_choice=none" in warned[0]  # said once, naming the option


def test_force_tool_choice_none_sends_no_tool_choice_from_the_start():
    server = fb.Server(named_choice=False, flavour="vllm")
    with fp.FakeProvider("openai", [fp.answer(["1"], [])], server=server, model="openai/local-model") as p:
        backend(p, force_tool_choice="none").decide(history(), TOOLS, True)
    assert len(p.requests) == 1 and "tool_choice" not in p.requests[0]["body"]


# --- waits ----------------------------------------------------------------------------------------------


def test_gemini_retry_delay_in_the_body_is_waited_like_retry_after():
    sleeps: list[float] = []
    with fp.FakeProvider("gemini", [fp.raw(429, fb.gemini_quota("3s"), "application/json"), fp.search("x")]) as p:
        decision = backend(p, sleeps).decide(history(), TOOLS, False)
    assert [c.name for c in decision.tool_calls] == ["search_documents"]
    assert sleeps == [3.0] and len(p.requests) == 2


def test_gemini_retry_delay_is_capped_by_retry_max_delay():
    message, p, sleeps = failed("gemini", [fp.raw(429, fb.gemini_quota("90.5s"), "application/json")] * 2,
                                max_attempts=2, retry_max_delay=4)
    assert sleeps == [4.0] and "rate-limited" in message


# --- errors that name their cause and their fix -------------------------------------------------------------


@pytest.mark.parametrize("kind,variable", [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY"),
                                           ("gemini", "GEMINI_API_KEY")])
@pytest.mark.parametrize("status", [401, 403])
def test_a_rejected_key_names_its_variable_and_api_key_env(kind, variable, status):
    message, p, sleeps = failed(kind, [fp.error(status, "invalid api key sk-test-SECRET123")])
    assert variable in message and "backend.api_key_env" in message and "SECRET123" not in message
    assert len(p.requests) == 1 and sleeps == []


def test_a_rejected_key_from_api_key_env_names_that_variable(monkeypatch):
    monkeypatch.setenv("MY_GATEWAY_KEY", "sk-gateway-abcdef")
    with fp.FakeProvider("openai", [fp.error(401, "Incorrect API key provided")]) as p:
        b = madqa_backend(p, api_key_env="MY_GATEWAY_KEY")
        with pytest.raises(madqa.BackendError) as caught:
            b.decide(history(0), TOOLS, False)
    assert "the key came from MY_GATEWAY_KEY (backend.api_key_env)" in str(caught.value)


def madqa_backend(p: fp.FakeProvider, **options: object):
    from madqa_plugins.litellm.litellm_backend import LiteLLMBackend

    return LiteLLMBackend(p.model, {"api_base": p.url, "retry_base_delay": 0.01, "sleep": lambda s: None, **options})


def test_a_timeout_names_backend_timeout_and_its_value():
    message, _, _ = failed("openai", [fp.hang(4)], timeout=1, max_attempts=1)
    assert "did not answer in time" in message and "backend.timeout is 1 s" in message
    assert "--set backend.timeout=N" in message


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_body_cut_mid_reply_is_named_so_and_retried(kind):
    sleeps: list[float] = []
    with fp.FakeProvider(kind, [fp.cut_mid_body(), fp.search("x")]) as p:
        decision = backend(p, sleeps).decide(history(0), TOOLS, False)
    assert [c.name for c in decision.tool_calls] == ["search_documents"] and len(p.requests) == 2
    message, _, _ = failed(kind, [fp.cut_mid_body()] * 2, max_attempts=2)
    assert "the reply was cut off mid-body (received" in message and "could not be reached" not in message


def test_a_413_on_a_request_without_images_is_a_request_too_large():
    message, p, _ = failed("openai", [fp.error(413, "Request too large")], images=0)
    assert "the request was too large (" in message and " bytes" in message
    assert "image" not in message.split("the request was too large")[0] and len(p.requests) == 1


def test_a_413_html_page_from_a_proxy_is_named_with_its_title_and_the_size():
    page = fb.html_page(413, "413 Request Entity Too Large")
    message, p, _ = failed("openai", [fp.raw(413, page, "text/html")], images=0)
    assert 'HTML page (HTTP 413, "413 Request Entity Too Large") from something in front of' in message
    assert "the request was too large (" in message and "refused an image" not in message and len(p.requests) == 1


@pytest.mark.parametrize("kind", fp.KINDS)
def test_an_html_error_page_from_a_proxy_is_named_and_retried(kind):
    page = fb.html_page(502, "502 Bad Gateway")
    sleeps: list[float] = []
    with fp.FakeProvider(kind, [fp.raw(502, page, "text/html"), fp.search("x")]) as p:
        decision = backend(p, sleeps).decide(history(0), TOOLS, False)
    assert [c.name for c in decision.tool_calls] == ["search_documents"]
    message, _, _ = failed(kind, [fp.raw(502, page, "text/html")] * 2, max_attempts=2)
    assert '"502 Bad Gateway") from something in front of the model server' in message


def test_no_credits_is_not_retried_and_says_so():
    message, p, sleeps = failed("openai", [fp.raw(402, fb.CREDITS, "application/json")] * 3,
                                model="openai/anthropic/claude-sonnet-4.5")
    assert "no credits or quota left (HTTP 402" in message and "Insufficient credits" in message
    assert len(p.requests) == 1 and sleeps == []


@pytest.mark.parametrize("kind,said", [("openai", "Provider returned error"), ("anthropic", "error object")])
def test_an_error_object_in_a_200_is_retried_then_named(kind, said):
    sleeps: list[float] = []
    with fp.FakeProvider(kind, [fp.raw(200, fb.ERROR_IN_200, "application/json"), fp.search("x")]) as p:
        decision = backend(p, sleeps).decide(history(0), TOOLS, False)
    assert [c.name for c in decision.tool_calls] == ["search_documents"]
    message, _, _ = failed(kind, [fp.raw(200, fb.ERROR_IN_200, "application/json")] * 2, max_attempts=2)
    assert said in message and "could not be reached" not in message


def test_a_stream_of_only_done_is_named_as_a_stream():
    message, p, _ = failed("openai", [fp.raw(200, fb.DONE_ONLY, "text/event-stream")] * 2, max_attempts=2)
    assert "streamed reply (server-sent events)" in message and len(p.requests) == 1


def test_ollama_without_tools_answers_in_the_text_protocol():
    with fp.FakeProvider("ollama", [fp.json_search("revenue")], server=fb.Server(tools=False)) as p:
        b = backend(p, native_tools=None)
        decision = b.decide(history(0), TOOLS, False)
    assert not b.supports_tools and len(p.requests) == 2 and not p.requests[1]["body"].get("tools")
    assert [c.name for c in madqa.read_tool_calls(decision.text or "", ["search_documents"])] == ["search_documents"]


# --- the answer under other keys ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return fp.corpus_env(tmp_path_factory.mktemp("servers"))


@pytest.mark.parametrize("arguments,flags", [
    ({"final_answer": "62,500", "sources": [{"document": "report.pdf", "page_number": 1}]},
     ["answer read from final_answer", "citations read from sources", "citation file read from document",
      "citation page read from page_number"]),
    ({"answers": ["62,500"], "references": [{"filename": "report.pdf", "page_no": "1"}]},
     ["answer read from answers", "citations read from references", "citation file read from filename",
      "citation page read from page_no"]),
])
def test_the_answer_under_other_keys_is_read_and_flagged(env, arguments, flags):
    import json

    replies = [fp.search("revenue AND 2024"), fp.raw_call("submit_answer", json.dumps(arguments))]
    with fp.FakeProvider("openai", replies) as p:
        row = fp.ask(env, p)
    assert row["answer"] == ["62,500"] and row["error"] is None
    assert row["citations"][0]["file"] == "report.pdf" and row["citations"][0]["page"] == 1
    assert set(flags) <= set(row["flags"])


def test_an_answer_call_under_unknown_keys_says_which_keys_it_had():
    call = madqa.ToolCall("submit_answer", {"result": "62,500", "pages": [1]}, "c1")
    why = unread(madqa.ModelDecision(None, (call,)), [call])
    assert "held no answer under any known key" in why and "final_answer" in why and "pages, result" in why
    assert "when it had to answer" not in why
