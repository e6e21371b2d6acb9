"""Models and servers as people run them, through litellm's real client against each provider's fake
(OpenAI-compatible, Anthropic, Gemini, Ollama): every behaviour ends right (the answer, exit 0), as an
honest refusal, or as a failed row whose error names the cause. Never a wrong answer, never a failure
counted as a score. The loop's side of issue 24; the backend's side is in test_litellm_*.py."""

from __future__ import annotations

import pytest

from tests import fake_behaviours as fb
from tests import fake_providers as fp

pytestmark = pytest.mark.slow  # four providers x a dozen behaviours, each a short multi-step question

CITE = [{"file": "report.pdf", "page": 1, "quote": "Revenue in 2024 was 7.5 million euros."}]
ANSWER = fp.answer(["7.5 million euros"], CITE)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return fp.corpus_env(tmp_path_factory.mktemp("matrix"))


def ask(env, provider, **backend):
    return fp.ask(env, provider, **{"retry_base_delay": 0.01, "retry_max_delay": 0.05, "overload_delay": 0.01,
                                    **backend})


def answered(row):
    assert row["error"] is None, row["error"]
    assert row["answer"] == ["7.5 million euros"] and not row["refusal"]
    assert row["citations"] == [{"file": "report.pdf", "page": 1, "quote": CITE[0]["quote"]}]


def failed(row, *words):
    assert row["answer"] == [] and row["refusal"] is False and row["error"]
    for word in words:
        assert word in row["error"], row["error"]


@pytest.mark.parametrize("kind", fp.KINDS)
@pytest.mark.parametrize("shape", list(fp.TEXT_REPLY_KINDS))
def test_tool_calls_written_as_text_are_run(env, kind, shape):
    with fp.FakeProvider(kind, [fp.TEXT_REPLY_KINDS[shape]("revenue 2024"), ANSWER]) as p:
        row = ask(env, p)
    answered(row)
    assert row["search_history"][0]["query"] == "revenue 2024"
    assert all(c.ok for c in p.checks), [c for c in p.checks if not c.ok]


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_prose_answer_gets_a_repair_turn(env, kind):
    with fp.FakeProvider(kind, [fp.search("revenue 2024"), fp.prose_answer("7.5 million euros"), ANSWER]) as p:
        row = ask(env, p)
    # the prose came before the last step: the loop asked for a tool call, and the model answered
    answered(row)


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_refusal_written_as_text_is_a_refusal(env, kind):
    with fp.FakeProvider(kind, [fp.search("revenue 2024"), fp.refusal_as_answer()]) as p:
        row = ask(env, p)
    assert row["refusal"] is True and row["answer"] == [] and row["error"] is None


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_model_that_will_not_stop_searching_fails_naming_it(env, kind):
    with fp.FakeProvider(kind, [fp.search(f"revenue {n}") for n in range(8)]) as p:
        row = ask(env, p)
    failed(row, "when it had to answer")
    assert len(p.requests) == 7  # six steps (max_steps) and one repair turn


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_cut_reply_fails_naming_max_tokens(env, kind):
    with fp.FakeProvider(kind, [fp.search("revenue 2024"), fp.cut(), fp.cut()]) as p:
        row = ask(env, p)
    failed(row, "backend.max_tokens", "finish_reason length")
    assert fb.CUT_TEXT not in row["answer"]


@pytest.mark.parametrize("kind", [k for k in fp.KINDS if k != "ollama"])  # Ollama has no content filter
def test_a_filtered_reply_fails_naming_the_filter(env, kind):
    with fp.FakeProvider(kind, [fp.search("revenue 2024"), fp.filtered()]) as p:
        row = ask(env, p)
    failed(row, "content filter")


@pytest.mark.parametrize("kind", fp.KINDS)
def test_an_overloaded_server_fails_with_its_status_named(env, kind):
    with fp.FakeProvider(kind, [fp.overloaded(kind)] * 3) as p:
        row = ask(env, p)
    failed(row, "overloaded")
    assert "litellm" not in row["error"] and "Exception" not in row["error"]


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_server_with_an_image_limit_still_answers(env, kind):
    server = fb.Server(max_images=1)
    with fp.FakeProvider(kind, [fp.search("revenue OR budget"), ANSWER, ANSWER], server=server) as p:  # 2 pages
        row = ask(env, p)
    answered(row)
    assert len(fb.images_of(p.kind, p.requests[-1]["body"])) == 1
    assert any("at most 1 image(s) per request" in f for f in row["flags"])


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_text_only_model_gets_page_text_and_answers(env, kind):
    with fp.FakeProvider(kind, [fp.search("revenue"), ANSWER, ANSWER], server=fb.Server(vision=False)) as p:
        row = ask(env, p)
    answered(row)
    assert not fb.images_of(p.kind, p.requests[-1]["body"])


# --- issue 37: what real servers and proxies send, over a whole question ------------------------------------


@pytest.mark.parametrize("flavour", ["vllm", "llamacpp"])
def test_a_server_refusing_a_named_tool_choice_still_answers_at_the_forced_step(env, flavour):
    from madqa_plugins.litellm import litellm_protocol as protocol

    protocol.forget()
    server = fb.Server(named_choice=False, flavour=flavour)
    with fp.FakeProvider("openai", [fp.search("revenue 2024"), ANSWER], server=server,
                         model="openai/local-model") as p:
        row = ask(env, p, max_steps_=2)  # the second step is the forced answer
    protocol.forget()
    answered(row)
    assert p.requests[-2]["body"].get("tool_choice") and "tool_choice" not in p.requests[-1]["body"]


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_rejected_key_fails_naming_its_variable_and_the_option(env, kind):
    with fp.FakeProvider(kind, [fp.error(401, "invalid api key")]) as p:
        row = ask(env, p)
    failed(row, "rejected the API key", fb.KEY_VARIABLES[kind], "backend.api_key_env")


@pytest.mark.parametrize("kind", fp.KINDS)
def test_an_answer_under_final_answer_and_sources_is_read_and_flagged(env, kind):
    import json

    arguments = {"final_answer": "7.5 million euros", "sources": [
        {"document": "report.pdf", "page_number": 1, "quote": CITE[0]["quote"]}]}
    with fp.FakeProvider(kind, [fp.search("revenue 2024"), fp.raw_call("submit_answer", json.dumps(arguments))]) as p:
        row = ask(env, p)
    answered(row)
    assert {"answer read from final_answer", "citations read from sources", "citation file read from document",
            "citation page read from page_number"} <= set(row["flags"])


@pytest.mark.parametrize("kind", fp.KINDS)
def test_a_proxy_html_error_page_fails_named_as_such(env, kind):
    page = fb.html_page(502, "502 Bad Gateway")
    with fp.FakeProvider(kind, [fp.raw(502, page, "text/html")] * 4) as p:
        row = ask(env, p, max_attempts=2)
    failed(row, '"502 Bad Gateway") from something in front of the model server')
