"""The context policy: what each request re-sends, as a pure function, and through the real loop."""

from __future__ import annotations

import pytest

import madqa
from madqa.agent import Agent
from madqa.context import ContextOptions, ModelTurn, ShownPage, ToolTurn, build_messages, excerpt
from madqa.settings import load_config
from madqa.trace import Trace
from madqa.types import PageRef

PNG = b"\x89PNG\r\n\x1a\n page"


def page(file: str, n: int, text: str = "", image: bytes | None = PNG) -> ShownPage:
    return ShownPage(PageRef(file, n), image, "image/png", text or f"Page {n} of {file} talks about revenue.",
                     ("revenue",))


def history(steps: int, per_step: int = 2) -> list:
    """``steps`` searches, each showing ``per_step`` new pages."""
    turns: list = []
    for it in range(1, steps + 1):
        turns.append(ModelTurn(it, None, ((f"c{it}", "search_documents", '{"query": "q"}'),)))
        turns.append(ToolTurn(it, f"c{it}", f"Found {per_step} pages", tuple(page(f"d{it}.pdf", n)
                                                                              for n in range(1, per_step + 1))))
    return turns


def images(messages: list[dict]) -> list[dict]:
    return [p for m in messages if isinstance(m.get("content"), list) for p in m["content"]
            if p.get("type") == "image_url"]


def texts(messages: list[dict]) -> str:
    return "\n".join(p["text"] if isinstance(p, dict) else str(p) for m in messages
                     for p in (m["content"] if isinstance(m.get("content"), list) else [m.get("content") or ""])
                     if not isinstance(p, dict) or p.get("type") == "text")


def test_default_sends_each_image_once_then_an_excerpt():
    messages = build_messages("sys", "q?", history(3), ContextOptions())
    assert len(images(messages)) == 2  # the newest step's pages only
    assert [m["role"] for m in messages] == ["system", "user"] + ["assistant", "tool", "user"] * 3
    earlier = messages[4]["content"]
    assert len(earlier) == 1 and earlier[0]["text"].startswith("Pages shown earlier")
    assert 'File: d1.pdf, Page: 2: "Page 2 of d1.pdf talks about revenue."' in earlier[0]["text"]
    assert messages[-1]["content"][0] == {"type": "text", "text": "File: d3.pdf, Page: 1"}


def test_images_kept_and_max_images_per_request():
    assert len(images(build_messages("s", "q", history(3), ContextOptions(images_kept=1)))) == 4
    assert len(images(build_messages("s", "q", history(3), ContextOptions(images_kept=5)))) == 6
    capped = build_messages("s", "q", history(3), ContextOptions(images_kept=5, max_images_per_request=1))
    assert len(images(capped)) == 1
    newest = capped[-1]["content"]  # the newest step's first page gets the one image, the next its text
    assert newest[0]["text"] == "File: d3.pdf, Page: 1" and newest[1]["type"] == "image_url"
    assert newest[2]["text"].startswith("File: d3.pdf, Page: 2\nPage 2 of d3.pdf")


def test_without_vision_pages_go_as_text_labelled_the_same_way():
    messages = build_messages("s", "q", history(2), ContextOptions(text_chars=20), vision=False)
    assert images(messages) == []
    assert messages[-1]["content"][0]["text"] == "File: d2.pdf, Page: 1\nPage 1 of d2.pdf ta…"  # 20 characters


def test_detail_and_format_of_images():
    messages = build_messages("s", "q", history(1), ContextOptions(detail="low"))
    assert images(messages)[0]["image_url"]["detail"] == "low"
    assert images(messages)[0]["image_url"]["url"].startswith("data:image/png;base64,")


def test_the_re_sent_prefix_is_stable_and_marked_for_caching():
    """Request n+1 repeats request n up to the marked message, byte for byte."""
    options = ContextOptions()
    for steps in range(1, 5):
        now = build_messages("s", "q", history(steps), options, cache=True)
        later = build_messages("s", "q", history(steps + 1), options, cache=True)
        marked = [i for i, m in enumerate(now) if "cache_control" in m or (
            isinstance(m.get("content"), list) and any("cache_control" in p for p in m["content"]))]
        assert marked[0] == 0 and len(marked) <= 4  # the system prompt, then the end of the stable prefix
        end = marked[-1]
        assert now[end]["role"] == "tool" and now[end + 1]["content"][1]["type"] == "image_url"
        strip = [{k: v for k, v in m.items() if k != "cache_control"} for m in now[1:end + 1]]
        assert [{k: v for k, v in m.items() if k != "cache_control"} for m in later[1:end + 1]] == strip
    assert "cache_control" not in str(build_messages("s", "q", history(2), options))  # only when asked


def test_excerpt_keeps_the_query_terms():
    text = "Intro words. " * 30 + "The revenue in 2024 was 7.5 million euros." + " Filler." * 40
    found = excerpt(text, ("revenue",), 80)
    assert "revenue in 2024" in found and found.startswith("…") and len(found) <= 80
    assert excerpt("short text", ("absent",), 80) == "short text"


@pytest.mark.parametrize("options,match", [
    ({"images_kep": 1}, "unknown option images_kep"), ({"image_format": "gif"}, "png, jpeg or webp"),
    ({"detail": "max"}, "low, high or auto"), ({"images_kept": -1}, "0 or more"), ({"cache": "yes"}, "auto, on"),
])
def test_bad_context_options_are_refused(options, match):
    with pytest.raises(madqa.MadqaError, match=match):
        ContextOptions.from_options(options)


# --- through the loop --------------------------------------------------------------------------------


def run(corpus, registry, settings, script, **context):
    options = {"context": context} if context else {}
    config = load_config("offline").with_overrides(backend="scripted", options=options)
    agent = Agent(corpus, config, registry, settings, {"script": script})
    question = "What was revenue per employee in 2024?"
    return Trace(question, config, "q").consume(agent.run(question)), agent.backend


def test_a_cross_page_question_can_get_a_page_back(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [
        {"search": "revenue"}, {"search": "headcount"}, {"search": "budget"},
        {"tool_calls": [{"name": "show_pages", "arguments": {"pages": [{"file": "report.pdf", "page": 1}]}}]},
        {"answer": ["7.5 million"], "citations": [{"file": "report.pdf", "page": 1, "quote": "Revenue in 2024 was 7.5 million"},
                                             {"file": "report.pdf", "page": 2, "quote": "Headcount was 120 employees"}]},
    ])
    counts = [len(images(c["messages"])) for c in backend.calls]
    assert counts == [0, 1, 1, 1, 1]  # never more than the newest pages; page 1 comes back on request
    back = backend.calls[4]["messages"]
    assert back[-1]["content"][0]["text"] == "File: report.pdf, Page: 1"
    assert back[-2] == {"role": "tool", "tool_call_id": "t4_0", "content": "Shown again below: File: report.pdf, Page: 1"}
    answer = trace.steps[-1]
    assert [c.page for c in answer.citations] == [1, 2] and not answer.flags
    assert "show_pages" in {t["function"]["name"] for t in backend.calls[0]["tools"]}


def test_show_pages_refuses_pages_that_do_not_exist(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [
        {"tool_calls": [{"name": "show_pages", "arguments": {"pages": [{"file": "nope.pdf", "page": 1}]}}]},
        {"tool_calls": [{"name": "show_pages", "arguments": {"pages": "report.pdf"}}]},
        {"answer": [], "citations": []},
    ])
    errors = [s for s in trace.steps if s.type == "error"]
    assert [e.where for e in errors] == ["tool", "tool"]
    assert 'no such page: {"file": "nope.pdf", "page": 1}' in errors[0].message
    assert "needs 'pages'" in errors[1].message and images(backend.calls[2]["messages"]) == []


def test_the_same_search_again_shows_its_pages_again(corpus, registry, settings):
    trace, backend = run(corpus, registry, settings, [
        {"search": "revenue"}, {"search": "budget"}, {"search": "revenue"},
        {"answer": ["7.5 million"], "citations": [{"file": "report.pdf", "page": 1}]}])
    assert [len(images(c["messages"])) for c in backend.calls] == [0, 1, 1, 1]
    assert backend.calls[3]["messages"][-1]["content"][0]["text"] == "File: report.pdf, Page: 1"
    assert trace.searches[2].new_pages == ()  # not new: the row's counts stay honest


def test_context_options_from_the_config_reach_the_loop(corpus, registry, settings):
    _, backend = run(corpus, registry, settings, [{"search": "revenue"}, {"search": "headcount"},
                                                  {"answer": ["x"], "citations": []}], images_kept=1, detail="high")
    assert len(images(backend.calls[2]["messages"])) == 2
    assert images(backend.calls[2]["messages"])[0]["image_url"]["detail"] == "high"
    config = load_config("offline").with_overrides(backend="scripted", options={"context": {"image_format": "jpeg"}})
    agent = Agent(corpus, config, registry, settings, {"script": [{"search": "revenue"}]})
    list(agent.run("q"))
    assert images(agent.backend.calls[1]["messages"])[0]["image_url"]["url"].startswith("data:image/jpeg;base64,")
