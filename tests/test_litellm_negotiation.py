"""Protocol negotiation of the litellm backend, through litellm's real client against fake servers on
127.0.0.1: native tools or the JSON-in-text protocol, chosen from options, an Ollama server's
/api/show, what the process learned from a refusal (shared across threads), and said at WARNING
when guessed or learned.
"""

from __future__ import annotations

import json
import logging
import os
import threading

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import madqa  # noqa: E402
from madqa_plugins.litellm import litellm_protocol as protocol  # noqa: E402
from tests import fake_behaviours as fb  # noqa: E402
from tests import fake_providers as fp  # noqa: E402
from tests.litellm_fakes import TOOLS, backend, history, sent_tools, system_text  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_memo():
    protocol.forget()
    yield
    protocol.forget()


# --- what is known before the first request --------------------------------------------------------


def text_calls(decision: madqa.ModelDecision) -> list[tuple[str, dict]]:
    """The calls the loop reads from a text-protocol reply (the backend reports the text as written)."""
    assert decision.tool_calls == ()
    return [(c.name, c.arguments) for c in madqa.read_tool_calls(decision.text or "", ["search_documents"])]


def test_ollama_without_tools_capability_gets_the_text_protocol_from_the_start(caplog):
    caplog.set_level(logging.INFO, logger="madqa.litellm")
    server = fb.Server(capabilities=("completion", "vision"))
    with fp.FakeProvider("ollama", [fp.json_search("revenue 2024")], server=server) as p:
        b = backend(p)
        caps = b.capabilities()
        decision = b.decide(history(), TOOLS, False)
    assert p.shows >= 1 and caps["server_capabilities"] == ["completion", "vision"]
    assert (b.supports_tools, b.supports_vision) == (False, True)
    assert caps["protocol"] == "text" and caps["protocol_source"] == "server"
    assert len(p.requests) == 1 and not sent_tools(p.requests[0])
    assert '{\\"search\\": \\"<query>\\"}' in system_text("ollama", p.requests[0])
    assert text_calls(decision) == [("search_documents", {"query": "revenue 2024"})]
    assert any(r.levelno == logging.WARNING and "JSON-in-text" in r.getMessage() for r in caplog.records)


def test_ollama_without_vision_capability_gets_no_images():
    server = fb.Server(capabilities=("completion", "tools"))
    with fp.FakeProvider("ollama", [fp.search("revenue")], server=server) as p:
        b = backend(p)
        b.decide(history(), TOOLS, False)
    assert b.supports_tools and not b.supports_vision and b.capabilities()["vision_source"] == "server"
    assert fb.images_of("ollama", p.requests[0]["body"]) == [] and p.failures() == []


def test_options_win_over_the_server_and_skip_asking_it():
    server = fb.Server(capabilities=("completion",))
    with fp.FakeProvider("ollama", [fp.search("revenue")], server=server) as p:
        b = backend(p, native_tools=True, vision=True)
        shows = p.shows
        b.decide(history(), TOOLS, False)
    assert b.capabilities()["protocol_source"] == "option" and b.supports_tools and b.supports_vision
    assert sent_tools(p.requests[0]) and shows == 0


def test_an_unreachable_ollama_server_is_not_fatal():
    with fp.FakeProvider("ollama") as p:
        url = p.url
    b = protocol.ollama_capabilities(url, "ollama_chat/qwen2.5vl", timeout=0.5)
    assert b is None
    caps = protocol.choose("tools", None, url, "ollama_chat/qwen2.5vl", None, None)
    assert caps.value is True and caps.source == "assumed" and caps.guessed


def test_an_unknown_model_is_assumed_native_and_said_at_warning(caplog):
    caplog.set_level(logging.INFO, logger="madqa.litellm")
    with fp.FakeProvider("openai", model="openai/my-local-model") as p:
        b = backend(p)
    assert b.capabilities()["protocol_source"] == "assumed" and b.supports_tools
    warned = [r for r in caplog.records if r.levelno == logging.WARNING and "does not know model" in r.getMessage()]
    assert warned and "until the server refuses" in warned[0].getMessage()


# --- a refusal of tools: the same turn again in the text protocol, remembered --------------------------


REFUSING = [("ollama", fb.Server(tools=False), "does not support tools"),
            ("openai", fb.Server(tools=False, flavour="vllm"), "--enable-auto-tool-choice"),
            ("openai", fb.Server(tools=False, flavour="llamacpp"), "requires --jinja flag"),
            ("gemini", fb.Server(tools=False), "Function calling is not enabled")]


@pytest.mark.parametrize("kind,server,words", REFUSING, ids=["ollama", "vllm", "llama.cpp", "gemini"])
def test_a_refusal_of_tools_retries_the_same_turn_in_the_text_protocol(kind, server, words, caplog):
    caplog.set_level(logging.INFO, logger="madqa.litellm")
    model = {"openai": "openai/local-model"}.get(kind)
    with fp.FakeProvider(kind, [fp.json_search("revenue 2024")], server=server, model=model) as p:
        b = backend(p, native_tools=None)
        decision = b.decide(history(), TOOLS, False)
    assert len(p.requests) == 2, "one refusal, then the same turn in the text protocol (no retries of a 500)"
    assert sent_tools(p.requests[0]) and not sent_tools(p.requests[1])
    assert "<query>" in system_text(kind, p.requests[1])
    assert text_calls(decision) == [("search_documents", {"query": "revenue 2024"})]
    assert b.supports_tools is False and b.capabilities()["protocol_source"] == "learned"
    assert words in b.capabilities()["protocol_reason"] and "tools" in b.capabilities()["missing"]
    assert "now gets the JSON-in-text protocol" in b.capabilities()["message"]
    assert any("refused tool calls" in n for n in [*decision.raw["notes"], caplog.text])
    assert any(r.levelno == logging.WARNING and words in r.getMessage() for r in caplog.records)
    assert protocol.learned(p.url, p.model)["tools"][0] is False


def test_the_text_protocol_turn_carries_the_history_as_text():
    with fp.FakeProvider("ollama", [fp.json_answer(["62,500"], [{"file": "report.pdf", "page": 1}])],
                         server=fb.Server(tools=False, capabilities=("completion", "tools", "vision"))) as p:
        b = backend(p)
        decision = b.decide(history(), TOOLS, True)
    messages = p.requests[1]["body"]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[2]["content"] == '{"search": "revenue"}' and p.failures() == []
    assert "answer now" in messages[-1]["content"]
    assert json.loads(decision.text)["answer"] == ["62,500"]


def test_what_one_backend_learns_every_backend_of_that_server_and_model_uses():
    server = fb.Server(tools=False, flavour="vllm")
    replies = [fp.json_search(f"q{n}") for n in range(4)]
    with fp.FakeProvider("openai", replies, server=server, model="openai/local-model") as p:
        early = backend(p)  # built before anything was learned: assumed native
        assert early.supports_tools
        found: list[object] = []
        worker = threading.Thread(target=lambda: found.append(backend(p).decide(history(), TOOLS, False)))
        worker.start()
        worker.join(60)
        learned_in_thread = len(p.requests)
        late = backend(p)  # built after: starts in the text protocol, said so
        early.decide(history(), TOOLS, False)
        late.decide(history(), TOOLS, False)
        elsewhere = backend(p, api_base=p.url.replace("127.0.0.1", "localhost"))  # another api_base: not learned
    assert learned_in_thread == 2 and found
    assert late.capabilities()["protocol"] == "text" and late.capabilities()["protocol_source"] == "learned"
    assert not early.supports_tools  # took it up on its next turn
    assert [sent_tools(r) for r in p.requests[2:]] == [False, False]
    assert elsewhere.supports_tools


def test_an_explicit_option_is_never_overridden_by_what_was_learned():
    protocol.learn("http://127.0.0.1:9/v1", "openai/local-model", "tools", False, "test")
    with fp.FakeProvider("openai", [fp.search("x")], model="openai/local-model") as p:
        protocol.learn(p.url, p.model, "tools", False, "does not support tools")
        b = backend(p, native_tools=True)
        b.decide(history(), TOOLS, False)
    assert b.supports_tools and sent_tools(p.requests[0])


def test_the_memo_is_safe_under_concurrent_learning():
    def learn(n: int) -> None:
        for i in range(200):
            protocol.learn(f"http://h{n}", "m", "tools", bool(i % 2), "r")
            protocol.learned(f"http://h{(n + 1) % 8}", "m")

    threads = [threading.Thread(target=learn, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(protocol.learned(f"http://h{n}", "m")["tools"] == (True, "r") for n in range(8))


# --- text as the model sent it ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", list(fp.TEXT_REPLY_KINDS))
def test_tool_calls_written_as_text_are_reported_as_text(shape):
    reply = fp.TEXT_REPLY_KINDS[shape]("revenue 2024")
    with fp.FakeProvider("openai", [reply]) as p:
        decision = backend(p).decide(history(), TOOLS, False)
    assert decision.tool_calls == () and decision.finish_reason == "stop"  # the loop reads them (madqa/tool_text.py)
    if shape == "think block":  # litellm itself moves a leading <think> block to reasoning_content
        assert decision.text.strip() == reply.text.split("</think>", 1)[1].strip()
    else:
        assert decision.text == reply.text


# --- a whole question: servers without tool calling answer with no option set ---------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return fp.corpus_env(tmp_path_factory.mktemp("negotiation"))


CITED = [{"file": "report.pdf", "page": 1}]


@pytest.mark.parametrize("kind,server,requests", [
    ("openai", fb.Server(tools=False, flavour="vllm"), 3),  # refused once, then two turns in text
    ("openai", fb.Server(tools=False, flavour="llamacpp"), 3),
    ("ollama", fb.Server(tools=False), 3),
    ("ollama", fb.Server(capabilities=("completion", "vision")), 2),  # /api/show said so: no refusal
], ids=["vllm", "llama.cpp", "ollama-refuses", "ollama-show"])
def test_a_server_without_tool_calling_answers_the_question(corpus, kind, server, requests):
    replies = [fp.json_search("revenue AND 2024"), fp.json_answer(["62,500"], CITED)]
    model = "openai/local-model" if kind == "openai" else None
    with fp.FakeProvider(kind, replies, server=server, model=model) as p:
        row = fp.ask(corpus, p)
    assert row["error"] is None and row["answer"] == ["62,500"], row["trajectory"][-3:]
    assert [c["page"] for c in row["citations"]] == [1]
    assert len(p.requests) == requests and p.failures() == []
    assert all("<query>" in system_text(kind, r) for r in p.requests[requests - 2:])
