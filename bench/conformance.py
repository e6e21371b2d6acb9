"""The provider conformance matrix: provider x rule x result, as a Markdown table.

    python bench/conformance.py            # about a minute per provider on an idle machine

Each provider's fake server (tests/fake_providers.py) checks every request of a full multi-step
question (three searches, a show_pages, an answer; once with images, once as a text-only model)
against that provider's documented request rules, then plays the error replies (429 with
Retry-After, 400 with a reason, 500, a hang past backend.timeout, arguments that are not JSON),
then how the litellm backend meets each real-world server behaviour (tests/fake_behaviours.py): a
refusal of tools, server limits, cut and filtered replies, overloads, broken bodies, no usage; and what
real servers and the proxies in front of them send (a refused named tool_choice, Gemini's retryDelay, a
rejected key, a timeout, a body cut mid-reply, HTML error pages, a 402, an error object in a 200, a stream of
only [DONE]). The same scenarios are tests in tests/test_providers.py, tests/test_litellm_negotiation.py,
tests/test_litellm_limits.py and tests/test_litellm_servers.py; this prints what they found.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import madqa  # noqa: E402
from madqa_plugins.litellm import litellm_protocol as protocol  # noqa: E402
from tests import fake_behaviours as fb  # noqa: E402
from tests import fake_providers as fp  # noqa: E402
from tests.litellm_fakes import TOOLS, backend, history, sent_tools  # noqa: E402

full_question = fp.full_question


def corpus_env() -> tuple[Any, Any, Any]:
    return fp.corpus_env(tempfile.mkdtemp(prefix="madqa-conformance-"))


def ask(env: tuple[Any, Any, Any], provider: fp.FakeProvider, **backend: Any) -> dict[str, Any]:
    return fp.ask(env, provider, api_key="sk-conformance-key", **{"retry_max_delay": 1.0, **backend})


def rule_cells(checks: list[fp.Check]) -> dict[str, str]:
    cells = {}
    for rule in fp.RULES:
        mine = [c for c in checks if c.rule == rule]
        if not mine:
            cells[rule] = "n/a"
            continue
        bad = [c for c in mine if not c.ok]
        cells[rule] = (f"pass ({len(mine)} requests)" if not bad
                       else f"FAIL {len(bad)}/{len(mine)}: {bad[0].detail[:80]}")
    return cells


def errors(env: tuple[Any, Any, Any], kind: str) -> dict[str, str]:
    out = {}
    with fp.FakeProvider(kind, [fp.error(429, "slow down", **{"Retry-After": "0.5"}), *full_question()]) as p:
        row = ask(env, p)
        waited = p.times[1] - p.times[0]
    out["429 + Retry-After 0.5 s"] = (f"retried after {waited:.2f} s, answered" if row["answer"] and waited >= 0.5
                                      else f"FAIL: {row['error']}, waited {waited:.2f} s")
    reason = "Unrecognized request argument supplied: logprobs"
    with fp.FakeProvider(kind, [fp.search("revenue"), fp.error(400, reason)]) as p:
        row = ask(env, p)
    out["400 with a reason"] = ("reason shown, not retried" if reason in (row["error"] or "") and len(p.requests) == 2
                                else f"FAIL: {row['error']}")
    with fp.FakeProvider(kind, [fp.error(500, "internal trouble")] * 3) as p:
        row = ask(env, p)
    out["500"] = (f"{len(p.requests)} attempts, then reported" if "server error" in (row["error"] or "")
                  else f"FAIL: {row['error']}")
    with fp.FakeProvider(kind, [fp.hang(8)] * 2) as p:
        started = time.monotonic()
        row = ask(env, p, timeout=1, max_attempts=2)
        elapsed = time.monotonic() - started
    out["hang, timeout=1 s, 2 attempts"] = (f"ended in {elapsed:.1f} s" if "did not answer in time" in
                                            (row["error"] or "") else f"FAIL: {row['error']}")
    if kind == "openai":
        with fp.FakeProvider(kind, [fp.raw_call("search_documents", '{"query": "revenue'), *full_question()]) as p:
            row = ask(env, p)
        repaired = "not valid JSON" in p.requests[1]["body"]["messages"][-1].get("content", "")
        out["tool arguments not JSON"] = ("one repair turn, then answered" if repaired and row["answer"]
                                          else f"FAIL: {row['error']}")
    else:
        out["tool arguments not JSON"] = "n/a (arguments are a JSON object on this wire)"
    return out


def _decide(kind: str, replies: list[fp.Reply], server: fb.Server | None = None, images: int = 1,
            **options: Any) -> tuple[Any, fp.FakeProvider, Any, list[float]]:
    """(decision or the error raised, the provider, the backend, the waits) of one backend turn."""
    protocol.forget()
    sleeps: list[float] = []
    model = "openai/local-model" if kind == "openai" and server is not None and server.flavour != "openai" else None
    with fp.FakeProvider(kind, replies, server=server, model=model) as p:
        b = backend(p, sleeps, **options)
        try:
            outcome: Any = b.decide(history(images), TOOLS, False)
        except madqa.BackendError as exc:
            outcome = exc
    return outcome, p, b, sleeps


def _limit(kind: str, server: fb.Server, images: int = 1) -> str:
    outcome, p, b, _ = _decide(kind, [], server, images)
    if not isinstance(outcome, madqa.ServerLimitError):
        return f"FAIL: {outcome!r}"[:120]
    value = f", {outcome.value}" if outcome.value is not None else ""
    vision = "; supports_vision now False" if not b.supports_vision else ""
    return f"ServerLimitError({outcome.limit}{value}) after {len(p.requests)} request{vision}"


def behaviours(kind: str) -> dict[str, str]:
    """How the backend meets each real-world behaviour, as one cell per row."""
    out: dict[str, str] = {}
    flavour = "vllm" if kind == "openai" else "openai"  # (the flavour only changes the openai kind's wording)
    refusing = fb.Server(tools=False, flavour=flavour) if kind != "anthropic" else None
    if refusing is not None:
        outcome, p, b, _ = _decide(kind, [fp.json_search("revenue")], refusing)
        # the backend reports the text protocol's reply as written; the loop reads the search from it
        ok = (not isinstance(outcome, Exception) and len(p.requests) == 2 and not sent_tools(p.requests[1])
              and not b.supports_tools
              and [c.name for c in madqa.read_tool_calls(outcome.text or "", ["search_documents"])] == [
                  "search_documents"])
        out["server refuses tools"] = ("same turn again in the JSON-in-text protocol, searched; learned for the "
                                       "process" if ok else f"FAIL: {outcome!r}"[:120])
    else:
        out["server refuses tools"] = "n/a (every Claude model takes tools)"
    if kind == "openai":
        outcome, p, b, _ = _decide(kind, [fp.json_search("revenue")], fb.Server(tools=False, flavour="llamacpp"))
        out["llama.cpp without --jinja"] = ("text protocol, same turn, 2 requests" if not isinstance(outcome, Exception)
                                            and len(p.requests) == 2 else f"FAIL: {outcome!r}"[:120])
    else:
        out["llama.cpp without --jinja"] = "n/a"
    if kind == "ollama":
        outcome, p, b, _ = _decide(kind, [fp.json_search("revenue")], fb.Server(capabilities=("completion", "vision")))
        out["/api/show lacks tools"] = ("text protocol from the first request (source: server)"
                                        if not sent_tools(p.requests[0]) else "FAIL: tools sent")
    else:
        out["/api/show lacks tools"] = "n/a"
    out["image-count limit"] = (_limit(kind, fb.Server(max_images=1, flavour=flavour), images=2) if kind != "gemini"
                                else "n/a (3,000 images per request)")
    out["text-only model gets images"] = (_limit(kind, fb.Server(vision=False, flavour=flavour))
                                          if kind in ("openai", "ollama") else "n/a (every model takes images)")
    out["image too large"] = (_limit(kind, fb.Server(max_image_bytes=1000)) if kind != "ollama"
                              else "n/a (no documented limit)")
    out["context exceeded"] = (_limit(kind, fb.Server(context_tokens=100, flavour=flavour)) if kind != "ollama"
                               else "n/a (Ollama truncates the prompt silently to num_ctx)")
    outcome, p, _, _ = _decide(kind, [fp.cut(), fp.search("revenue")], max_tokens=300)
    out["reply cut at max_tokens"] = (f"asked again with max_tokens 600: {outcome.finish_reason}"
                                      if not isinstance(outcome, Exception) else f"FAIL: {outcome!r}"[:120])
    outcome, p, _, _ = _decide(kind, [fp.cut(), fp.cut()])
    out["still cut after the retry"] = (f"finish_reason {outcome.finish_reason} (the loop fails the question)"
                                        if not isinstance(outcome, Exception) else f"FAIL: {outcome!r}"[:120])
    if kind != "ollama":
        outcome, p, _, _ = _decide(kind, [fp.filtered()])
        notes = [n for n in (outcome.raw.get("notes") or []) if "content filter" in n] if not isinstance(
            outcome, Exception) else []
        out["content filter"] = (f"finish_reason {outcome.finish_reason}; {notes[0]}" if notes
                                 else f"FAIL: {outcome!r}"[:120])
    else:
        out["content filter"] = "n/a (Ollama has none)"
    outcome, p, _, sleeps = _decide(kind, [fp.overloaded(kind)] * 3, overload_delay=0.2, retry_base_delay=0.01)
    out["overloaded"] = (f"{str(outcome).split(',')[0].split(' at api_base ')[-1]}; "
                         f"{len(p.requests)} attempts, waits {', '.join(f'{w:.2f}' for w in sleeps)} s "
                         "(overload_delay 0.2)")[:140]
    outcome, p, _, _ = _decide(kind, [fp.truncated_body(), fp.search("revenue")])
    out["200 with a cut-off body"] = ("unreadable reply body, retried, answered" if not isinstance(outcome, Exception)
                                      and len(p.requests) == 2 else f"FAIL: {outcome!r}"[:120])
    if kind != "ollama":
        outcome, p, _, _ = _decide(kind, [fp.text("The revenue was 7.5 million.", usage=False)], images=2)
        out["no usage in the reply"] = (f"estimated {outcome.usage.total_tokens} tokens, flagged" if not isinstance(
            outcome, Exception) and outcome.estimated else f"FAIL: {outcome!r}"[:120])
    else:
        out["no usage in the reply"] = "litellm counts the text itself (not flagged as an estimate)"
    out.update(servers(kind))
    shapes = []
    for name, make in fp.TEXT_REPLY_KINDS.items():
        outcome, p, _, _ = _decide(kind, [make("revenue")])
        shapes.append(name if not isinstance(outcome, Exception) and outcome.text and not outcome.tool_calls else
                      f"{name} FAILED")
    out["tool calls written as text"] = "reported as text (the loop parses them): " + ", ".join(shapes)
    protocol.forget()
    return out


def _said(outcome: Any, *words: str) -> str:
    """The cell of a turn that must fail naming ``words``: the words found, or FAIL with the message."""
    text = str(outcome)
    if isinstance(outcome, madqa.BackendError) and all(w in text for w in words):
        return "; ".join(words)
    return f"FAIL: {text}"[:140]


def _answered(outcome: Any, p: fp.FakeProvider, note: str) -> str:
    return (f"{note}, {len(p.requests)} requests, answered" if not isinstance(outcome, Exception)
            and outcome.tool_calls else f"FAIL: {outcome!r}"[:140])


def servers(kind: str) -> dict[str, str]:
    """The behaviours of issue 37: what real servers and the proxies in front of them send (tests/
    test_litellm_servers.py plays the same)."""
    out: dict[str, str] = {}
    if kind == "openai":
        protocol.forget()
        with fp.FakeProvider(kind, [fp.answer(["1"], [])], server=fb.Server(named_choice=False, flavour="vllm"),
                             model="openai/local-model") as p:
            decision = backend(p).decide(history(0), TOOLS, True)
        out["named tool_choice refused"] = _answered(decision, p, "same turn without tool_choice, learned")
    else:
        out["named tool_choice refused"] = "n/a (the provider takes a named tool)"
    if kind == "gemini":
        outcome, p, _, sleeps = _decide(kind, [fp.raw(429, fb.gemini_quota("3s"), "application/json"),
                                               fp.search("x")], retry_max_delay=30)
        out["429 RESOURCE_EXHAUSTED, retryDelay 3s"] = _answered(outcome, p, f"waited {sleeps[0]:.1f} s" if sleeps
                                                                 else "no wait")
    else:
        out["429 RESOURCE_EXHAUSTED, retryDelay 3s"] = "n/a (Gemini's body)"
    outcome, *_ = _decide(kind, [fp.error(401, "invalid api key")])
    out["401"] = _said(outcome, fb.KEY_VARIABLES[kind], "backend.api_key_env")
    outcome, *_ = _decide(kind, [fp.hang(3)], timeout=1, max_attempts=1)
    out["timeout names the option"] = _said(outcome, "backend.timeout is 1 s")
    outcome, p, _, _ = _decide(kind, [fp.cut_mid_body(), fp.search("x")], images=0)
    out["body cut mid-reply"] = _answered(outcome, p, "the reply was cut off mid-body, retried")
    outcome, *_ = _decide(kind, [fp.raw(413, fb.html_page(413, "413 Request Entity Too Large"), "text/html")],
                          images=0)
    out["413 HTML page, no image"] = _said(outcome, "HTML page (HTTP 413", "the request was too large")
    outcome, p, _, _ = _decide(kind, [fp.raw(502, fb.html_page(502, "502 Bad Gateway"), "text/html"),
                                      fp.search("x")], images=0)
    out["502 HTML page from a proxy"] = _answered(outcome, p, "named, retried")
    if kind == "openai":
        outcome, p, _, _ = _decide(kind, [fp.raw(402, fb.CREDITS, "application/json")] * 2)
        out["402 no credits (OpenRouter)"] = _said(outcome, "no credits or quota left") + f", {len(p.requests)} request"
        outcome, p, _, _ = _decide(kind, [fp.raw(200, fb.DONE_ONLY, "text/event-stream")] * 2)
        out["a stream of only [DONE]"] = _said(outcome, "streamed reply") + f", {len(p.requests)} request"
    else:
        out["402 no credits (OpenRouter)"] = out["a stream of only [DONE]"] = "n/a (OpenAI-compatible proxies)"
    if kind in ("openai", "anthropic"):
        outcome, p, _, _ = _decide(kind, [fp.raw(200, fb.ERROR_IN_200, "application/json"), fp.search("x")])
        out["200 with an error object"] = _answered(outcome, p, "retried")
    else:
        out["200 with an error object"] = "n/a (OpenAI-compatible proxies)"
    protocol.forget()
    return out


def main() -> None:
    env = corpus_env()
    table: dict[str, dict[str, str]] = {}
    for kind in fp.KINDS:
        with fp.FakeProvider(kind, full_question()) as p:
            row = ask(env, p)
        with fp.FakeProvider(kind, full_question()) as q:
            text_row = ask(env, q, vision=False)
        cells = rule_cells(p.checks + q.checks)
        cells["full question answered"] = "yes" if row["answer"] == ["62,500"] and not row["error"] else "NO"
        cells["text-only model answered"] = "yes" if text_row["answer"] == ["62,500"] else "NO"
        cells.update(errors(env, kind))
        cells.update(behaviours(kind))
        table[f"{kind} ({fp.MODELS[kind]})"] = cells
        print(f"{kind} done", file=sys.stderr)
    providers = list(table)
    rows = list(next(iter(table.values())))
    print("| rule | " + " | ".join(providers) + " |")
    print("|---|" + "---|" * len(providers))
    for rule in rows:
        print(f"| {rule} | " + " | ".join(table[p].get(rule, "n/a") for p in providers) + " |")


if __name__ == "__main__":
    main()
