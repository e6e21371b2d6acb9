"""The litellm backend, offline: every call goes through the real ``litellm.completion`` with its
own mocks (``mock_response`` / ``mock_tool_calls``), so request building, response parsing,
usage and cost are litellm's, not ours. No key and no network are needed.
"""

from __future__ import annotations

import json
import logging
import os
import time

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no cost-map fetch at import (offline)

import litellm  # noqa: E402

import madqa  # noqa: E402
from madqa.agent import ANSWER_TOOL, SEARCH_TOOL, Agent, image_part  # noqa: E402
from madqa.corpus import Corpus  # noqa: E402
from madqa.index import ingest  # noqa: E402
from madqa.settings import load_config  # noqa: E402
from madqa.types import AnswerStep, ModelStep, SearchStep  # noqa: E402
from madqa_plugins.litellm.litellm_backend import LiteLLMBackend  # noqa: E402
from tests.conftest import make_pdf  # noqa: E402

MODEL = "openai/gpt-4o-mini"  # in litellm's bundled model map: vision, tools and prices known
SECRET = "sk-test-SECRET123"

PNG = b"\x89PNG\r\n\x1a\n fake page"


def backend(model: str = MODEL, **options) -> LiteLLMBackend:
    options.setdefault("sleep", lambda seconds: None)
    return LiteLLMBackend(model, options)


def search_call(query: str, call_id: str = "call_1") -> dict:
    return {"name": "search_documents", "arguments": {"query": query}, "id": call_id}


def history_after_search() -> list[dict]:
    """The messages the agent sends on step 2: the tool result (text) then the page images."""
    return [
        {"role": "system", "content": "system prompt"},
        {"role": "user", "content": "What was the revenue?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "search_documents", "arguments": json.dumps({"query": "revenue"})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Found 1 pages; 1 new, shown below:\n- File: a.pdf, Page: 1"},
        {"role": "user", "content": [{"type": "text", "text": "File: a.pdf, Page: 1"}, image_part(PNG, "image/png")]},
    ]


@pytest.fixture
def recorded(monkeypatch):
    """Every kwargs litellm.completion receives; the real function still runs (with its mocks)."""
    calls: list[dict] = []
    real = litellm.completion

    def spy(**kwargs):
        calls.append(dict(kwargs))
        return real(**kwargs)

    monkeypatch.setattr(litellm, "completion", spy)
    return calls


# --- mapping litellm's replies -----------------------------------------------------------------


def test_litellm_mock_tool_calls_map_to_a_search(recorded):
    raw_calls = [{"id": "c7", "type": "function",
                  "function": {"name": "search_documents", "arguments": '{"query": "revenue 2024"}'}}]
    b = backend(mock_tool_calls=raw_calls, mock_response="")  # litellm's own arguments, forwarded
    decision = b.decide(history_after_search()[:2], [SEARCH_TOOL, ANSWER_TOOL], False)
    assert decision.tool_calls == (madqa.ToolCall("search_documents", {"query": "revenue 2024"}, "c7"),)
    assert decision.text is None
    assert recorded[0]["mock_tool_calls"] == raw_calls and recorded[0]["tools"] == [SEARCH_TOOL, ANSWER_TOOL]
    assert "tool_choice" not in recorded[0]  # not forced before the last step
    assert decision.raw == {"finish_reason": "stop", "model": "gpt-4o-mini", "provider": "openai"}


def test_text_reply_and_submit_answer_map():
    b = backend(mock_responses=[
        "I need to look at more pages.",
        {"tool_calls": [{"name": "submit_answer",
                         "arguments": {"answer": ["7.5 million"], "citations": [{"file": "a.pdf", "page": 1}]}}]},
    ])
    text = b.decide(history_after_search()[:2], [SEARCH_TOOL, ANSWER_TOOL], False)
    assert text.text == "I need to look at more pages." and text.tool_calls == ()
    answer = b.decide(history_after_search()[:2], [SEARCH_TOOL, ANSWER_TOOL], False)
    assert [c.name for c in answer.tool_calls] == ["submit_answer"]
    assert answer.tool_calls[0].arguments == {"answer": ["7.5 million"], "citations": [{"file": "a.pdf", "page": 1}]}


def test_bad_json_arguments_are_repaired_or_kept_raw():
    b = backend(mock_responses=[
        {"tool_calls": [{"name": "search_documents", "arguments": "{'query': 'revenue',}"}]},
        {"tool_calls": [{"name": "search_documents", "arguments": "query=revenue"}]},
    ])
    repaired = b.decide(history_after_search()[:2], [SEARCH_TOOL, ANSWER_TOOL], False)
    assert repaired.tool_calls[0].arguments == {"query": "revenue"}
    assert repaired.raw["notes"] == ["search_documents: arguments were not valid JSON (Expecting property name "
                                     "enclosed in double quotes: line 1 column 2 (char 1)) and were repaired"]
    assert repaired.tool_calls[0].error is None
    kept = b.decide(history_after_search()[:2], [SEARCH_TOOL, ANSWER_TOOL], False)
    assert kept.tool_calls[0].arguments == {}  # unusable: the loop asks the model to send them again
    assert kept.tool_calls[0].error == "not valid JSON (Expecting value: line 1 column 1 (char 0)) in 'query=revenue'"
    assert "kept as _raw" in kept.raw["notes"][0]


# --- the request -------------------------------------------------------------------------------


def test_request_passes_image_parts_after_the_tool_message(recorded):
    b = backend(mock_response="ok", temperature=0.0, timeout=30)
    messages = history_after_search()
    b.decide(messages, [SEARCH_TOOL, ANSWER_TOOL], False)
    sent = recorded[0]["messages"]
    assert sent == messages  # passed through untouched: litellm translates per provider
    assert [m["role"] for m in sent[-3:]] == ["assistant", "tool", "user"]
    assert isinstance(sent[-2]["content"], str)
    label, image = sent[-1]["content"]
    assert label == {"type": "text", "text": "File: a.pdf, Page: 1"}
    assert image["type"] == "image_url" and image["image_url"]["url"].startswith("data:image/png;base64,")
    assert recorded[0]["temperature"] == 0.0 and recorded[0]["timeout"] == 30
    assert recorded[0]["num_retries"] == 0  # our retries only, not litellm's or the SDK's on top


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash"])
def test_litellm_translates_the_image_parts_for_other_providers(model):
    """What litellm would send (captured before any network I/O): the page image reaches the
    provider as its own image block, after the tool result."""
    from litellm.types.utils import CallTypes
    from litellm.utils import return_raw_request

    raw = return_raw_request(CallTypes.completion, {"model": model, "messages": history_after_search(),
                                                    "tools": [SEARCH_TOOL, ANSWER_TOOL]})
    body = raw["raw_request_body"]
    data = image_part(PNG, "image/png")["image_url"]["url"].split(",", 1)[1]
    if model.startswith("anthropic/"):
        turn = body["messages"][-1]  # tool result and images: one user turn
        assert [part["type"] for part in turn["content"]] == ["tool_result", "text", "image"]
        assert turn["content"][2]["source"] == {"type": "base64", "media_type": "image/png", "data": data}
    else:
        parts = [part for turn in body["contents"] for part in turn["parts"]]
        kinds = [next(iter(part)) for part in parts]
        assert kinds[-3:] == ["function_response", "text", "inline_data"]
        assert parts[-1]["inline_data"] == {"data": data, "mime_type": "image/png"}


def test_last_step_offers_only_submit_answer_and_forces_it(recorded):
    b = backend(mock_responses=[{"tool_calls": [{"name": "submit_answer", "arguments": {"answer": ["x"],
                                                                                        "citations": []}}]}] * 2)
    b.decide(history_after_search(), [ANSWER_TOOL], True)
    assert recorded[0]["tools"] == [ANSWER_TOOL]
    assert recorded[0]["tool_choice"] == {"type": "function", "function": {"name": "submit_answer"}}
    required = backend(force_tool_choice="required", mock_response="x")
    required.decide(history_after_search(), [ANSWER_TOOL], True)
    assert recorded[1]["tool_choice"] == "required"


def test_usage_and_cost_are_litellms():
    decision = backend(mock_response="hello").decide(history_after_search()[:2], [SEARCH_TOOL, ANSWER_TOOL], False)
    # litellm's mock reports 10 prompt and 20 completion tokens, priced from its bundled map
    assert decision.usage == madqa.Usage(10, 20)
    prices = litellm.model_cost["gpt-4o-mini"]
    expected = 10 * prices["input_cost_per_token"] + 20 * prices["output_cost_per_token"]
    assert decision.cost_usd == pytest.approx(expected) and decision.cost_usd > 0  # 1.35e-05 with litellm 1.110.2


def test_cost_is_none_for_a_model_litellm_cannot_price():
    b = backend("openai/my-local-model", api_base="http://127.0.0.1:8000/v1", api_key="none", mock_response="hi")
    decision = b.decide(history_after_search()[:2], [SEARCH_TOOL, ANSWER_TOOL], False)
    assert decision.usage == madqa.Usage(10, 20) and decision.cost_usd is None


# --- retries and errors ------------------------------------------------------------------------


def provider_error(kind: type) -> Exception:
    if kind is litellm.Timeout:
        return litellm.Timeout("slow", model="gpt-4o-mini", llm_provider="openai")
    return kind("try later", llm_provider="openai", model="gpt-4o-mini")


@pytest.mark.parametrize("kind", [litellm.RateLimitError, litellm.Timeout, litellm.APIConnectionError,
                                  litellm.InternalServerError, litellm.ServiceUnavailableError])
def test_transient_errors_are_retried(kind):
    sleeps: list[float] = []
    b = backend(sleep=sleeps.append, mock_responses=[provider_error(kind), "recovered"])
    decision = b.decide(history_after_search()[:2], [SEARCH_TOOL, ANSWER_TOOL], False)
    assert decision.text == "recovered" and len(sleeps) == 1


def test_retries_back_off_exponentially_with_a_cap_then_fail():
    sleeps: list[float] = []
    b = backend(sleep=sleeps.append, max_attempts=5, retry_base_delay=1.0, retry_max_delay=3.0,
                mock_responses=[provider_error(litellm.RateLimitError)] * 5)
    with pytest.raises(madqa.BackendError) as caught:
        b.decide(history_after_search()[:2], [SEARCH_TOOL, ANSWER_TOOL], False)
    assert str(caught.value) == "openai rate-limited the request (rate limit error), after 5 attempts: try later"
    assert len(sleeps) == 4
    for n, delay in enumerate(sleeps):  # equal jitter: between half and all of min(cap, base * 2^n)
        ceiling = min(3.0, 2.0 ** n)
        assert ceiling / 2 <= delay <= ceiling
    assert LiteLLMBackend(MODEL, {"max_retries": 2}).max_attempts == 3
    assert LiteLLMBackend(MODEL, {}).max_attempts == 3 and LiteLLMBackend(MODEL, {}).timeout == 120.0


def test_a_plain_exception_from_litellm_is_a_server_error_and_retried():
    sleeps: list[float] = []
    b = backend(sleep=sleeps.append, mock_responses=[ValueError("boom"), "fine"])
    assert b.decide(history_after_search()[:2], [SEARCH_TOOL, ANSWER_TOOL], False).text == "fine"
    assert len(sleeps) == 1  # litellm raises it as InternalServerError (HTTP 500)


def test_bad_key_is_not_retried_and_never_shown(caplog):
    caplog.set_level(logging.DEBUG)  # everything litellm and madqa log, at every level
    sleeps: list[float] = []
    rejected = litellm.AuthenticationError(f"Incorrect API key provided: {SECRET}", llm_provider="openai",
                                           model="gpt-4o-mini")
    b = backend(api_key=SECRET, sleep=sleeps.append, mock_responses=[rejected, "never reached"])
    with pytest.raises(madqa.BackendError) as caught:
        b.decide(history_after_search(), [SEARCH_TOOL, ANSWER_TOOL], False)
    error = caught.value
    assert str(error).startswith("openai rejected the API key (authentication error); the key was the one handed over")
    assert "OPENAI_API_KEY" in str(error) and "backend.api_key_env" in str(error)  # what fixes it
    assert sleeps == [] and b._mock_queue == ["never reached"]  # no retry
    assert error.__cause__ is None and error.__context__ is None  # the provider's text is not chained
    assert {"LiteLLM", "madqa.litellm"} <= {r.name for r in caplog.records}
    for shown in (str(error), repr(error), repr(b), str(vars(b)), caplog.text):
        assert "SECRET123" not in shown
    assert "SECRET123" not in json.dumps(b.capabilities())


def test_key_is_passed_to_litellm_but_not_kept_in_the_decision(recorded, caplog):
    caplog.set_level(logging.DEBUG)
    decision = backend(api_key=SECRET, mock_response="ok").decide(history_after_search()[:2], [SEARCH_TOOL], False)
    assert recorded[0]["api_key"] == SECRET
    deadline = time.monotonic() + 5  # litellm logs a success in a background thread: let it finish
    while "LiteLLM-Success Call" not in caplog.text and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "LiteLLM" in {r.name for r in caplog.records}  # litellm's own debug logs were captured too
    assert "SECRET123" not in repr(decision) and "SECRET123" not in caplog.text


@pytest.mark.parametrize("kind,message", [
    (litellm.BadRequestError, "openai rejected the request (bad request): try later"),
    (litellm.NotFoundError, "openai does not know the model or endpoint (not found): try later"),
    (litellm.ContextWindowExceededError,
     "openai rejected the request as too long for the model (context window exceeded): try later"),
])
def test_bad_requests_are_not_retried(kind, message):
    sleeps: list[float] = []
    b = backend(sleep=sleeps.append, mock_responses=[provider_error(kind), "never"])
    with pytest.raises(madqa.BackendError, match=r"^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        b.decide(history_after_search()[:2], [SEARCH_TOOL], False)
    assert sleeps == []


def test_missing_key_is_reported_without_retrying(monkeypatch):
    """No mock here: the real OpenAI client refuses before any network I/O."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    sleeps: list[float] = []
    b = backend(sleep=sleeps.append)
    assert b.capabilities()["missing_keys"] == ["OPENAI_API_KEY"] and "api_key" in b.capabilities()["missing"]
    with pytest.raises(madqa.BackendError, match=r"^openai found no API key \(missing credentials\): "
                                                  r"set OPENAI_API_KEY in the environment, or name another variable with "
                                                  r"--set backend.api_key_env=NAME \(in the web app: paste a key in "
                                                  r"the API key field\)$"):
        b.decide(history_after_search()[:2], [SEARCH_TOOL], False)
    assert sleeps == []


# --- capabilities and the JSON-in-text protocol -------------------------------------------------


def test_capabilities_of_a_known_model():
    caps = backend(mock_response="x").capabilities()
    assert caps["known"] and caps["litellm_vision"] is True and caps["litellm_function_calling"] is True
    assert caps["native_tools"] and caps["vision"] and caps["missing"] == []
    assert backend(mock_response="x").supports_tools is True


def test_unknown_model_is_assumed_capable_unless_told():
    b = backend("openai/my-vllm-model", api_base="http://127.0.0.1:8000/v1", mock_response="x")
    caps = b.capabilities()
    assert not caps["known"] and caps["litellm_vision"] is None and caps["litellm_function_calling"] is None
    assert b.supports_tools and b.supports_vision
    assert "does not know model openai/my-vllm-model" in caps["message"]
    forced = backend("openai/my-vllm-model", api_base="http://127.0.0.1:8000/v1", native_tools="false",
                     vision=False, mock_response="x")
    assert not forced.supports_tools and not forced.supports_vision


def test_openai_compatible_server_without_a_key_gets_a_placeholder(recorded, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    b = backend("openai/local-model", api_base="http://127.0.0.1:8000/v1", mock_response="hi")
    assert b.capabilities()["missing"] == [] and "placeholder key" in b.capabilities()["message"]
    b.decide(history_after_search()[:2], [SEARCH_TOOL], False)
    assert recorded[0]["api_key"] == "none" and recorded[0]["api_base"] == "http://127.0.0.1:8000/v1"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")  # a key in the environment is litellm's to use
    assert not backend("openai/local-model", api_base="http://127.0.0.1:8000/v1").placeholder_key


def test_model_without_vision_sees_labels_only(recorded):
    b = backend("gpt-3.5-turbo", mock_response="ok")  # tools yes, images no, per litellm's map
    assert b.supports_tools and not b.supports_vision
    assert "does not accept images" in b.capabilities()["message"]
    b.decide(history_after_search(), [SEARCH_TOOL, ANSWER_TOOL], False)
    last = recorded[0]["messages"][-1]["content"]
    assert [p["type"] for p in last] == ["text", "text"] and last[0]["text"] == "File: a.pdf, Page: 1"
    assert "image omitted" in last[1]["text"]


def test_model_without_tool_calling_gets_the_json_protocol(recorded):
    b = backend("ollama/llama2", mock_responses=['Let me search. {"search": "revenue 2024"}',
                                                 '{"answer": ["7.5 million"], "citations": []}'])
    assert b.supports_tools is False and "JSON-in-text" in b.capabilities()["message"]
    decision = b.decide(history_after_search(), [SEARCH_TOOL, ANSWER_TOOL], False)
    # the backend reports the text as the model wrote it: the loop reads the call (madqa.tool_text)
    assert decision.tool_calls == () and decision.text == 'Let me search. {"search": "revenue 2024"}'
    assert [c.name for c in madqa.read_tool_calls(decision.text, ["search_documents"])] == ["search_documents"]
    sent = recorded[0]
    assert "tools" not in sent and "tool_choice" not in sent
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "user"]
    assert all("tool_calls" not in m for m in sent["messages"])
    assert sent["messages"][2]["content"] == '{"search": "revenue"}'
    merged = sent["messages"][3]["content"]  # the tool result and the label merged into one user turn
    assert merged[0]["text"].startswith("Result of search_documents:\nFound 1 pages")
    assert merged[1]["text"] == "File: a.pdf, Page: 1"  # ollama/llama2 has no vision: image left out
    answer = b.decide(history_after_search(), [ANSWER_TOOL], True)
    assert answer.tool_calls == () and answer.text == '{"answer": ["7.5 million"], "citations": []}'
    assert "answer now" in json.dumps(recorded[1]["messages"][-1]["content"])


def test_json_protocol_search_on_the_last_step_is_reported_as_written():
    # the loop sees no answer in it and gives one repair turn (tests/test_model_failures.py)
    b = backend(MODEL, native_tools=False, mock_response='{"search": "more"}')
    decision = b.decide(history_after_search()[:2], [ANSWER_TOOL], True)
    assert decision.text == '{"search": "more"}' and decision.tool_calls == ()


def test_unknown_provider_is_a_settings_error():
    with pytest.raises(madqa.SettingsError, match="provider/model"):
        LiteLLMBackend("no-such-model-anywhere", {})


# --- the whole loop ----------------------------------------------------------------------------


def test_registered_as_litellm(registry):
    component = registry.get("backend", "litellm")
    assert component.plugin == "madqa_plugins.litellm.litellm_backend"


def test_agent_loop_end_to_end(tmp_path, settings, registry, recorded):
    root = tmp_path / "docs"
    make_pdf(root / "report.pdf", ["Revenue in 2024 was 7.5 million euros.", "Headcount was 120 employees."])
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    config = load_config("offline").with_overrides(backend="litellm", model=MODEL, max_steps=3)
    script = [
        {"tool_calls": [search_call("revenue 2024")]},
        {"tool_calls": [{"name": "submit_answer", "arguments": {
            "answer": ["7.5 million euros"], "citations": [{"file": "report.pdf", "page": 1}]}}]},
    ]
    agent = Agent(corpus, config, registry, settings, {"mock_responses": script, "api_key": SECRET})
    steps = list(agent.run("What was the revenue in 2024?"))
    assert [s.type for s in steps] == ["model", "search", "model", "answer"]
    model_step, search_step, _, answer = steps
    assert isinstance(model_step, ModelStep) and model_step.usage == madqa.Usage(10, 20)
    assert model_step.cost_usd and model_step.cost_usd > 0
    assert isinstance(search_step, SearchStep) and search_step.new_pages == (madqa.PageRef("report.pdf", 1),)
    assert isinstance(answer, AnswerStep) and answer.answer == ("7.5 million euros",)
    assert answer.citations == (madqa.PageRef("report.pdf", 1),) and not answer.refusal
    second = recorded[1]["messages"]  # the rendered page went to litellm as an image after the tool result
    assert [m["role"] for m in second[-3:]] == ["assistant", "tool", "user"]
    assert second[-1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "SECRET123" not in repr(steps)


# --- the real client over HTTP, against a local OpenAI-compatible server ------------------------


@pytest.fixture
def local_server():
    """A tiny OpenAI-compatible /v1/chat/completions on 127.0.0.1 that plays queued replies."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    replies: list[tuple[int, dict]] = []
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
            status, payload = replies.pop(0)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", replies, seen
    server.shutdown()
    server.server_close()


def completion_body(message: dict) -> dict:
    return {"id": "cmpl-1", "object": "chat.completion", "created": 0, "model": "local-model",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290}}


def test_real_client_over_http_retries_then_parses(local_server):
    api_base, replies, seen = local_server
    error = {"error": {"message": "slow down", "type": "rate_limit_error"}}
    call = {"id": "call_9", "type": "function",
            "function": {"name": "search_documents", "arguments": '{"query": "revenue"}'}}
    replies += [(429, error), (200, completion_body({"content": None, "tool_calls": [call]}))]
    sleeps: list[float] = []
    b = backend("openai/local-model", api_base=api_base, api_key=SECRET, sleep=sleeps.append)
    decision = b.decide(history_after_search(), [SEARCH_TOOL, ANSWER_TOOL], False)
    assert decision.tool_calls == (madqa.ToolCall("search_documents", {"query": "revenue"}, "call_9"),)
    assert decision.usage == madqa.Usage(1234, 56) and decision.cost_usd is None  # no price for a local model
    assert len(seen) == 2 and len(sleeps) == 1  # one retry, ours: the OpenAI SDK did not retry on its own
    request = seen[-1]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == f"Bearer {SECRET}"
    assert [m["role"] for m in request["body"]["messages"]][-3:] == ["assistant", "tool", "user"]
    assert request["body"]["messages"][-1]["content"][1]["type"] == "image_url"


def test_real_client_over_http_bad_key(local_server, caplog):
    caplog.set_level(logging.DEBUG)
    api_base, replies, seen = local_server
    replies += [(401, {"error": {"message": f"Incorrect API key provided: {SECRET}", "type": "invalid_request_error",
                                 "code": "invalid_api_key"}})] * 2
    sleeps: list[float] = []
    b = backend("openai/local-model", api_base=api_base, api_key=SECRET, sleep=sleeps.append)
    with pytest.raises(madqa.BackendError) as caught:
        b.decide(history_after_search()[:2], [SEARCH_TOOL], False)
    assert str(caught.value).startswith("the openai server at api_base rejected the API key (authentication error)")
    assert "OPENAI_API_KEY" in str(caught.value) and "backend.api_key_env" in str(caught.value)
    assert len(seen) == 1 and sleeps == []
    assert "SECRET123" not in caplog.text


# --- options: one way to set them, unknown ones refused ------------------------------------------


def test_unknown_backend_option_lists_the_known_ones():
    with pytest.raises(madqa.PluginError, match=r"backend litellm: unknown option timout \(known: api_base, "
                                                 r"api_key_env, .*timeout"):
        LiteLLMBackend(MODEL, {"timout": 5})
    with pytest.raises(madqa.SettingsError, match="timeout must be a number"):
        LiteLLMBackend(MODEL, {"timeout": 0})
    with pytest.raises(madqa.SettingsError, match="vision must be true, false or auto"):
        LiteLLMBackend(MODEL, {"vision": "maybe"})
    assert LiteLLMBackend(MODEL, {"vision": "false"}).supports_vision is False


def test_an_api_base_without_its_scheme_is_refused_with_the_url_it_means():
    # how Ollama and vLLM print their address; litellm sent it as it was and every call ended in
    # "Connection error" after its retries (each question of a run)
    for typed in ("localhost:11434", "127.0.0.1:8000/v1"):
        with pytest.raises(madqa.OptionError, match=rf"api_base must be a server URL .*did you mean http://{typed}\?"):
            LiteLLMBackend("ollama_chat/qwen2.5vl", {"api_base": typed})
    for typed in ("ftp://127.0.0.1/v1", "http://", "http://host:port/v1"):
        with pytest.raises(madqa.OptionError, match="api_base must be a server URL"):
            LiteLLMBackend("openai/local", {"api_base": typed})
    for good in ("http://localhost:11434", "https://proxy.example.org/v1", "http://[::1]:8000/v1"):
        assert LiteLLMBackend("openai/local", {"api_base": good}).capabilities()["provider"] == "openai"
    assert LiteLLMBackend("openai/gpt-4o", {"api_base": " "}).api_base is None  # blank: not set, as before


def test_api_key_env_names_the_variable(monkeypatch, recorded):
    monkeypatch.setenv("MY_OTHER_KEY", SECRET)
    b = backend(api_key_env="MY_OTHER_KEY", mock_response="hi")
    b.decide(history_after_search()[:2], [SEARCH_TOOL], False)
    assert recorded[-1]["api_key"] == SECRET and "SECRET" not in repr(b)
    monkeypatch.delenv("MY_OTHER_KEY")
    with pytest.raises(madqa.SettingsError, match="MY_OTHER_KEY"):
        backend(api_key_env="MY_OTHER_KEY")


def test_config_and_set_options_reach_the_backend(tmp_path, settings, registry, recorded):
    """[options.backend] and --set backend.K=V reach litellm.completion: timeout, max_tokens, api_base."""
    from madqa import cli
    from madqa.cli.common import pipeline_config

    make_pdf(tmp_path / "docs" / "a.pdf", ["Revenue was 5 million."])
    ingest(tmp_path / "docs", settings, registry, ocr="never")
    corpus = Corpus.open(tmp_path / "docs", settings.corpora_dir)
    config_file = tmp_path / "mine.toml"
    config_file.write_text('backend = "litellm"\nmodel = "openai/gpt-4o-mini"\n[options.backend]\n'
                           'max_tokens = 300\nmock_response = "5 million"\n', encoding="utf-8")
    args = cli.build_parser().parse_args(["ask", "--corpus", str(corpus.root), "q", "--config", str(config_file),
                                          "--set", "backend.timeout=7", "--set", "backend.max_attempts=1"])
    config = pipeline_config(args, settings)
    agent = Agent(corpus, config, registry, settings)
    assert agent.backend.max_attempts == 1
    list(agent.run("What was the revenue?"))
    assert recorded[0]["timeout"] == 7.0 and recorded[0]["max_tokens"] == 300
    bad = config.with_overrides(options={"backend": {"max_attempt": 2}})
    with pytest.raises(madqa.PluginError, match="unknown option max_attempt"):
        Agent(corpus, bad, registry, settings)


def test_a_text_only_model_gets_each_pages_text_instead_of_its_image(tmp_path, settings, registry, recorded):
    root = tmp_path / "docs"
    make_pdf(root / "report.pdf", ["Revenue in 2024 was 7.5 million euros."])
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    config = load_config("offline").with_overrides(backend="litellm", model="ollama_chat/llama3.1", max_steps=2,
                                                   options={"backend": {"vision": False}})
    script = [{"tool_calls": [search_call("revenue")]}, '{"answer": ["7.5 million euros"], "citations": []}']
    agent = Agent(corpus, config, registry, settings, {"mock_responses": script})
    steps = list(agent.run("What was the revenue?"))
    assert steps[-1].answer == ("7.5 million euros",)
    pages = recorded[1]["messages"][-1]["content"]
    assert pages == [{"type": "text", "text": "File: report.pdf, Page: 1\nRevenue in 2024 was 7.5 million euros."}]
    assert "image_url" not in json.dumps(recorded[1]["messages"])


@pytest.mark.parametrize("raw,shown", [
    ('litellm.BadRequestError: AnthropicException - {"type":"error","error":{"type":"invalid_request_error",'
     '"message":"At most 1 image(s) may be provided in one request."}}',
     "At most 1 image(s) may be provided in one request."),
    ("litellm.BadRequestError: OpenAIException - Invalid image: key sk-live-abcdef123456 leaked",
     "Invalid image: key <redacted> leaked"),
    ('litellm.BadRequestError: GeminiException BadRequestError - {"error": {"code": 400, "message": '
     '"API key AIzaSyA1234567890abcdefghijklmn not valid for ?key=AIzaSyA1234567890abcdefghijklmn"}}',
     "API key <redacted> not valid for ?key=<redacted>"),
])
def test_the_providers_own_message_is_shown_with_keys_redacted(raw, shown):
    from madqa_plugins.litellm.litellm_errors import provider_message

    assert provider_message(Exception(raw)) == shown
    assert provider_message(Exception(f"bad {SECRET} here"), (SECRET,)) == "bad <redacted> here"
