"""What the litellm backend makes of servers' limits, stop reasons, overloads, broken bodies and missing
usage: through litellm's real client against fake servers that answer as the real ones do
(tests/fake_behaviours.py), and the wordings on their own (madqa_plugins/litellm/litellm_limits.py).
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import madqa  # noqa: E402
from madqa.image_tokens import anthropic as anthropic_rule  # noqa: E402
from madqa_plugins.litellm import litellm_protocol as protocol  # noqa: E402
from madqa_plugins.litellm.litellm_backend import LiteLLMBackend  # noqa: E402
from madqa_plugins.litellm.litellm_limits import server_limit, tools_refused  # noqa: E402
from tests import fake_behaviours as fb  # noqa: E402
from tests import fake_providers as fp  # noqa: E402
from tests.litellm_fakes import KEY, TOOLS, backend, history  # noqa: E402

LITELLM_WORDS = ("litellm", "Exception", "InternalServerError", "APIConnectionError", "BadRequestError")


@pytest.fixture(autouse=True)
def fresh_memo():
    protocol.forget()
    yield
    protocol.forget()


# --- the wordings ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("text,status,limit,value", [
    ("At most 1 image(s) may be provided in one request.", 400, "images_per_request", 1),
    ("At most 4 image(s) may be provided in one prompt.", 400, "images_per_request", 4),
    ("At most 0 image(s) may be provided in one request.", 400, "vision", None),
    ("Too many images and documents: 101 > 100", 400, "images_per_request", None),
    ("this model only supports one image while more than one image requested", 500, "images_per_request", 1),
    ("Invalid content type. image_url is only supported by certain models.", 400, "vision", None),
    ("facebook/opt-125m is not a multimodal model None", 400, "vision", None),
    ("image input is not supported - hint: if this is unexpected, you may need to provide the mmproj", 500,
     "vision", None),
    ("this model is missing data required for image input", 500, "vision", None),
    ("messages.1.content.1.image.source.base64: image exceeds 5 MB maximum: 6500712 bytes > 5242880 bytes", 400,
     "image_size", None),
    ("messages.9.content.4.image.source.base64.data: At least one of the image dimensions exceed max allowed size "
     "for many-image requests: 2000 pixels", 400, "image_size", None),
    ("Request payload size exceeds the limit: 20971520 bytes.", 400, "image_size", None),
    ("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens", 400,
     "context_length", None),
    ("prompt is too long: 210000 tokens > 200000 maximum", 400, "context_length", None),
    ("the request exceeds the available context size, try increasing it", 400, "context_length", None),
    ("The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).", 400,
     "context_length", None),
    ("Unrecognized request argument supplied: logprobs", 400, None, None),
    ("Request too large", 413, "image_size", None),
])
def test_limit_wordings(text, status, limit, value):
    found = server_limit(text, status)
    assert (found.limit, found.value) == (limit, value) if limit else found is None


@pytest.mark.parametrize("text,refused", [
    ("registry.ollama.ai/library/llava:latest does not support tools", True),
    ('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', True),
    ("tools param requires --jinja flag", True),
    ("Unsupported param: tools", True),
    ("At most 1 image(s) may be provided in one request.", False),
    ("Invalid 'tools[0].function.name': string does not match pattern", False),
])
def test_tool_refusal_wordings(text, refused):
    assert tools_refused(text) is refused


# --- limits through the real client ------------------------------------------------------------------------


LIMITS = [
    ("openai", fb.Server(max_images=1, flavour="vllm"), 2, "images_per_request", 1, "At most 1 image(s)"),
    ("anthropic", fb.Server(max_images=1), 2, "images_per_request", None, "Too many images"),
    ("ollama", fb.Server(max_images=1), 2, "images_per_request", 1, "only supports one image"),
    ("openai", fb.Server(vision=False), 1, "vision", None, "image_url is only supported by certain models"),
    ("openai", fb.Server(vision=False, flavour="vllm"), 1, "vision", None, "is not a multimodal model"),
    ("openai", fb.Server(vision=False, flavour="llamacpp"), 1, "vision", None, "provide the mmproj"),
    ("ollama", fb.Server(vision=False), 1, "vision", None, "missing data required for image input"),
    ("anthropic", fb.Server(max_image_bytes=1000), 1, "image_size", None, "image exceeds 5 MB maximum"),
    ("openai", fb.Server(max_image_bytes=1000), 1, "image_size", None, "below 20 MB"),
    ("gemini", fb.Server(max_image_bytes=1000), 1, "image_size", None, "payload size exceeds the limit"),
    ("openai", fb.Server(context_tokens=100), 1, "context_length", None, "maximum context length is 100"),
    ("openai", fb.Server(context_tokens=100, flavour="vllm"), 1, "context_length", None, "maximum context length"),
    ("openai", fb.Server(context_tokens=100, flavour="llamacpp"), 1, "context_length", None,
     "exceeds the available context size"),
    ("anthropic", fb.Server(context_tokens=100), 1, "context_length", None, "prompt is too long"),
    ("gemini", fb.Server(context_tokens=100), 1, "context_length", None, "input token count"),
]


@pytest.mark.parametrize("kind,server,images,limit,value,words", LIMITS,
                         ids=[f"{k}-{s.flavour if k == 'openai' else k}-{lim}" for k, s, _, lim, _, _ in LIMITS])
def test_a_server_limit_is_a_server_limit_error_and_not_retried(kind, server, images, limit, value, words):
    with fp.FakeProvider(kind, server=server, model="openai/local-model" if server.flavour != "openai" else None) as p:
        b = backend(p)
        with pytest.raises(madqa.ServerLimitError) as caught:
            b.decide(history(images), TOOLS, False)
    error = caught.value
    assert (error.limit, error.value) == (limit, value) and len(p.requests) == 1
    assert words in str(error) and not any(w in str(error) for w in LITELLM_WORDS)
    assert "SECRET123" not in str(error)
    if limit == "vision":  # learned: the loop's retry of this turn sends page text
        assert b.supports_vision is False and b.capabilities()["vision_source"] == "learned"
        assert "vision" in b.capabilities()["missing"] and "page's text" in b.capabilities()["message"]
        assert protocol.learned(p.url, p.model)["vision"][0] is False
    else:
        assert b.supports_vision is True


def test_ollama_truncates_a_long_prompt_silently_so_nothing_is_raised():
    with fp.FakeProvider("ollama", [fp.search("x")], server=fb.Server(context_tokens=100)) as p:
        decision = backend(p).decide(history(), TOOLS, False)
    assert decision.tool_calls and len(p.requests) == 1


# --- finish reasons --------------------------------------------------------------------------------------


def _max_tokens(kind: str, body: dict) -> int | None:
    if kind == "gemini":
        return (body.get("generationConfig") or {}).get("maxOutputTokens") or (
            body.get("generationConfig") or {}).get("max_output_tokens")
    if kind == "ollama":
        return (body.get("options") or {}).get("num_predict")
    return body.get("max_tokens") or body.get("max_completion_tokens")


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_cut_reply_is_asked_again_once_with_twice_the_max_tokens(kind):
    with fp.FakeProvider(kind, [fp.cut(), fp.search("revenue")]) as p:
        decision = backend(p, max_tokens=300).decide(history(), TOOLS, False)
    assert [_max_tokens(kind, r["body"]) for r in p.requests] == [300, 600]
    assert decision.finish_reason == "tool_calls" and decision.tool_calls[0].arguments == {"query": "revenue"}
    assert decision.usage == madqa.Usage(2000, 40)  # both calls are paid for
    assert any("cut off at max_tokens=300" in n for n in decision.raw["notes"])


@pytest.mark.parametrize("kind", fp.KINDS)
def test_still_cut_after_the_retry_reports_length(kind):
    with fp.FakeProvider(kind, [fp.cut(), fp.cut()]) as p:
        decision = backend(p).decide(history(), TOOLS, False)
    assert decision.finish_reason == "length" and decision.text == fb.CUT_TEXT
    assert _max_tokens(kind, p.requests[1]["body"]) == 4096 and len(p.requests) == 2


def test_a_refused_retry_leaves_the_cut_reply_reported_as_length():
    refusal = "max_tokens is too large: 4096. This model supports at most 1024 completion tokens"
    with fp.FakeProvider("openai", [fp.cut(), fp.error(400, refusal)]) as p:
        decision = backend(p).decide(history(), TOOLS, False)
    assert decision.finish_reason == "length" and decision.text == fb.CUT_TEXT and len(p.requests) == 2
    assert refusal in decision.raw["notes"][-1] and "max_tokens=4096 failed" in decision.raw["notes"][-1]


def test_no_retry_above_the_ceiling():
    with fp.FakeProvider("openai", [fp.cut()]) as p:
        decision = backend(p, max_tokens=16384).decide(history(), TOOLS, False)
    assert decision.finish_reason == "length" and len(p.requests) == 1
    with fp.FakeProvider("openai", [fp.cut(), fp.cut()]) as p:
        backend(p, max_tokens=3000, max_tokens_ceiling=5000).decide(history(), TOOLS, False)
    assert [r["body"]["max_tokens"] for r in p.requests] == [3000, 5000]


@pytest.mark.parametrize("kind,named", [("openai", "content_filter"), ("anthropic", "content_filter"),
                                        ("gemini", "content_filter")])
def test_a_content_filter_is_reported_and_named(kind, named):
    with fp.FakeProvider(kind, [fp.filtered()]) as p:
        decision = backend(p).decide(history(), TOOLS, False)
    assert decision.finish_reason == "content_filter" and len(p.requests) == 1
    assert any(f"content filter stopped the reply ({named}" in n for n in decision.raw["notes"])


@pytest.mark.parametrize("kind", fp.KINDS)
def test_normal_replies_say_stop_or_tool_calls(kind):
    with fp.FakeProvider(kind, [fp.search("x"), fp.text("plain words")]) as p:
        b = backend(p)
        calls, text = b.decide(history(), TOOLS, False), b.decide(history(), TOOLS, False)
    assert (calls.finish_reason, text.finish_reason) == ("tool_calls", "stop")


# --- labels and waits ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind,label", [("anthropic", "is overloaded (529)"),
                                        ("openai", "is overloaded or unavailable (HTTP 503)"),
                                        ("gemini", "is overloaded or unavailable (HTTP 503)"),
                                        ("ollama", "is overloaded or unavailable (HTTP 503)")])
def test_an_overload_is_named_and_waited_out_longer(kind, label):
    sleeps: list[float] = []
    with fp.FakeProvider(kind, [fp.overloaded(kind)] * 3) as p:
        with pytest.raises(madqa.BackendError) as caught:
            backend(p, sleeps, overload_delay=2.0, retry_base_delay=0.1).decide(history(), TOOLS, False)
    message = str(caught.value)
    assert label in message and "after 3 attempts" in message and len(p.requests) == 3
    assert not any(w in message for w in LITELLM_WORDS), message
    assert len(sleeps) == 2 and sleeps[0] >= 1.0 and sleeps[1] >= 2.0  # base 2 s (half jitter), doubled


def test_a_plain_server_error_keeps_the_short_waits():
    sleeps: list[float] = []
    with fp.FakeProvider("anthropic", [fp.error(500, "internal trouble")] * 3) as p:
        with pytest.raises(madqa.BackendError, match=r"failed with a server error \(HTTP 500\)"):
            backend(p, sleeps, overload_delay=2.0, retry_base_delay=0.1).decide(history(), TOOLS, False)
    assert len(sleeps) == 2 and max(sleeps) <= 0.2


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_truncated_body_is_unreadable_and_retried(kind):
    with fp.FakeProvider(kind, [fp.truncated_body(), fp.search("revenue")]) as p:
        decision = backend(p).decide(history(), TOOLS, False)
    assert decision.tool_calls[0].arguments == {"query": "revenue"} and len(p.requests) == 2
    with fp.FakeProvider(kind, [fp.truncated_body()] * 3) as p:
        with pytest.raises(madqa.BackendError) as caught:
            backend(p).decide(history(), TOOLS, False)
    message = str(caught.value)
    assert "unreadable reply body" in message and "after 3 attempts" in message
    assert not any(w in message for w in LITELLM_WORDS) and "HTTP 500" not in message


def test_retry_after_still_sets_the_wait_of_an_overload():
    sleeps: list[float] = []
    with fp.FakeProvider("anthropic", [fp.Reply("error", status=529, text="Overloaded",
                                                 headers={"Retry-After": "7"}), fp.search("x")]) as p:
        backend(p, sleeps, overload_delay=0.1, retry_max_delay=30).decide(history(), TOOLS, False)
    assert sleeps == [7.0]


# --- usage estimates ----------------------------------------------------------------------------------


def test_an_image_whose_size_cannot_be_read_is_estimated_never_free():
    """Not base64, not an image, or a size past Pillow's bomb limit: the estimate's fixed figure, never 0."""
    import base64
    import struct
    import zlib

    from madqa.usage import UNKNOWN_IMAGE_TOKENS, image_tokens

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    def png(width, height):  # the header and an empty image: what image_tokens reads
        header = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
        return "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + header + chunk(b"IDAT", b"")).decode()

    assert image_tokens("data:image/png;base64,not*base64", "openai") == UNKNOWN_IMAGE_TOKENS
    assert image_tokens("data:image/png;base64," + base64.b64encode(b"plain text").decode(), None) == UNKNOWN_IMAGE_TOKENS
    assert image_tokens(png(20000, 20000), "openai") == UNKNOWN_IMAGE_TOKENS  # 400 Mpx: Pillow's bomb error
    assert 0 < image_tokens(png(850, 1100), "anthropic") != UNKNOWN_IMAGE_TOKENS


@pytest.mark.parametrize("kind", ["openai", "anthropic", "gemini"])
def test_no_usage_from_the_server_is_estimated_and_flagged(kind):
    with fp.FakeProvider(kind, [fp.text("The revenue was 7.5 million euros.", usage=False), fp.text("x")]) as p:
        b = backend(p)
        estimated, counted = b.decide(history(2), TOOLS, False), b.decide(history(2), TOOLS, False)
    assert estimated.estimated and not counted.estimated and counted.usage == madqa.Usage(1000, 20)
    images = 2 * (anthropic_rule(850, 1100) if kind == "anthropic" else 0)
    assert estimated.usage.prompt_tokens > max(images, 500)  # two page images and the prompt's text
    assert estimated.usage.completion_tokens == len("The revenue was 7.5 million euros.") // 4 + 1
    assert any("usage estimated" in n for n in estimated.raw["notes"])
    assert KEY not in repr(estimated)


def test_litellms_context_window_error_is_a_context_length_limit_whatever_its_words():
    import litellm

    error = litellm.ContextWindowExceededError("input too big for this deployment", model="gpt-4o-mini",
                                               llm_provider="openai")
    b = madqa_backend(mock_responses=[error])
    with pytest.raises(madqa.ServerLimitError) as caught:
        b.decide(history(), TOOLS, False)
    assert caught.value.limit == "context_length" and "input too big for this deployment" in str(caught.value)


def madqa_backend(**options):
    from madqa_plugins.litellm.litellm_backend import LiteLLMBackend

    return LiteLLMBackend("openai/gpt-4o-mini", {"sleep": lambda s: None, **options})


# --- a server that is not the model's API --------------------------------------------------------------------

WEB_PAGE = "<!doctype html><html><head><title>Open WebUI</title></head><body>sign in</body></html>"
EVENTS = ('data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
          "data: [DONE]\n\n")


@pytest.mark.parametrize("body, content_type, said", [
    (WEB_PAGE, "text/html", "sent a web page (HTML), not a model's reply: api_base should be the model server's API"),
    (EVENTS, "text/event-stream", "sent a streamed reply (server-sent events) although one JSON reply was asked for"),
])
def test_a_web_page_or_a_stream_at_api_base_is_named_and_not_retried(body, content_type, said):
    # litellm calls either "Empty or invalid response" with status 500: it was told "a server error (HTTP 500),
    # after 3 attempts", three times the same page
    with fp.FakeProvider("openai", [fp.raw(200, body, content_type)] * 3, model="openai/local") as p:
        with pytest.raises(madqa.BackendError) as caught:
            backend(p).decide(history(), TOOLS, False)
    message = str(caught.value)
    assert said in message and len(p.requests) == 1, message
    assert "HTTP 500" not in message and not any(w in message for w in LITELLM_WORDS)


def test_a_404_from_an_openai_compatible_server_without_v1_says_where_its_api_usually_is():
    with fp.FakeProvider("openai", [fp.raw(404, '{"detail":"Not Found"}', "application/json")] * 2,
                         model="openai/local") as p:
        root = p.url.removesuffix("/v1")
        with pytest.raises(madqa.BackendError) as caught:
            LiteLLMBackend("openai/local", {"api_base": root, "api_key": KEY}).decide(history(), TOOLS, False)
        assert f"api_base usually ends in /v1: {root}/v1" in str(caught.value)
        with pytest.raises(madqa.BackendError) as caught:  # with /v1 already: no such hint
            backend(p).decide(history(), TOOLS, False)
        assert "does not know the model or endpoint" in str(caught.value) and "usually ends" not in str(caught.value)


def test_an_ollama_model_with_no_server_running_says_where_it_looked(monkeypatch):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OLLAMA_API_BASE", f"http://127.0.0.1:{port}")  # litellm's address when no api_base is given
    with pytest.raises(madqa.BackendError) as caught:
        LiteLLMBackend("ollama_chat/qwen2.5vl", {"max_attempts": 1, "native_tools": True, "vision": True}).decide(
            history(), TOOLS, False)
    message = str(caught.value)
    assert "could not be reached" in message and f"nothing answers at http://127.0.0.1:{port}" in message
    assert "ollama serve" in message and "--api-base" in message
