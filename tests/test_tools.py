"""Agent tools as plugins: the paper's tools and the navigation tools through the loop, a third-party tool
from docs/plugins.md, the text protocol listing the offered tools, and Steer's seam in the loop."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

from madqa.agent import Agent
from madqa.corpus import Corpus
from madqa.errors import PluginError, SettingsError
from madqa.index import ingest
from madqa.plugins import collect, get_plugin_manager
from madqa.settings import PipelineConfig, load_config
from madqa.tool_text import TEXT_PROTOCOL, text_protocol
from madqa.trace import Trace
from madqa.types import ProposedCalls, SteerReply, ToolCall
from tests.conftest import make_pdf

REPO = Path(__file__).resolve().parent.parent
NAVIGATION = ("search_documents", "show_pages", "list_documents", "document_outline", "open_page", "next_pages",
              "search_in")


def _manual(path: Path) -> Path:
    """A six-page manual with bookmarks: Installation (p. 2), Configuration (p. 4), Limits (p. 6)."""
    pages = ["Acme Widget Manual. Version 3.", "Installation. Unpack the widget.", "Plug it in and wait.",
             "Configuration. The timeout is set in widget.conf.", "The default timeout is 42 seconds.",
             "Limits. At most 9 widgets per rack."]
    make_pdf(path, pages)
    doc = pymupdf.open(path)
    doc.set_toc([[1, "Installation", 2], [1, "Configuration", 4], [2, "Timeouts", 5], [1, "Limits", 6]])
    doc.saveIncr()
    doc.close()
    return path


def _headed(path: Path) -> Path:
    """A PDF without bookmarks whose sections are set in a larger font."""
    doc = pymupdf.open()
    for title, body in (("Overview", "This guide covers the pump."), ("Maintenance", "Oil the pump every month."),
                        ("Warranty", "The warranty lasts two years.")):
        page = doc.new_page()
        page.insert_text((54, 80), title, fontsize=20)
        page.insert_textbox(pymupdf.Rect(54, 100, 558, 788), body + " " + "Body text. " * 30, fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path)
    return path


@pytest.fixture
def manuals(tmp_path, settings, registry):  # noqa: ANN001, ANN201
    root = tmp_path / "manuals"
    _manual(root / "widget.pdf")
    _headed(root / "pump.pdf")
    make_pdf(root / "other.pdf", ["The default timeout of the gadget is 7 seconds."])
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir)


def _run(corpus, registry, settings, script, tools=NAVIGATION, **kwargs):  # noqa: ANN001, ANN003, ANN202
    config = load_config("offline").with_overrides(backend="scripted", tools=tools)
    agent = Agent(corpus, config, registry, settings, {"script": script})
    return Trace("What is the default timeout?", config, "q").consume(agent.run("What is the default timeout?",
                                                                                 **kwargs)), agent.backend


def _call(name, **arguments):  # noqa: ANN001, ANN003, ANN202
    return {"tool": name, "arguments": arguments}  # the scripted backend's one-call shorthand


def _tool_results(backend, n):  # noqa: ANN001, ANN202
    return [m["content"] for m in backend.calls[n]["messages"] if m["role"] == "tool"]


def test_the_default_and_every_preset_offer_the_papers_tools(corpus, registry, settings):
    _, backend = _run(corpus, registry, settings, [{"answer": []}], tools=("search_documents", "show_pages"))
    from madqa.prompts import system_prompt
    assert backend.calls[0]["messages"][0]["content"] == system_prompt(False)  # the paper's prompt, unchanged
    assert PipelineConfig().tools == ("search_documents", "show_pages")
    for name in ("offline", "gpt-4.1-mini", "claude-sonnet-4.5"):
        assert load_config(name).tools == ("search_documents", "show_pages")


def test_navigation_tools_outline_then_open_then_turn_the_page(manuals, registry, settings):
    trace, backend = _run(manuals, registry, settings, [
        _call("list_documents"), _call("document_outline", file="widget"), _call("open_page", file="widget.pdf", page=4),
        _call("next_pages", file="widget.pdf", page=4, count=1),
        {"answer": ["42 seconds"], "citations": [{"file": "widget.pdf", "page": 5, "quote": "The default timeout is 42 seconds."}]},
    ])
    offered = {t["function"]["name"] for t in backend.calls[0]["tools"]}
    assert offered == {*NAVIGATION, "submit_answer"}
    system = backend.calls[0]["messages"][0]["content"]
    assert "you may use these tools: list_documents, document_outline, open_page, next_pages, search_in" in system
    listing = _tool_results(backend, 1)[0]
    assert "- widget.pdf: 6 pages, text; title: Acme Widget Manual. Version 3." in listing and "3 documents" in listing
    outline = _tool_results(backend, 2)[1]
    assert "its bookmarks" in outline and "- Configuration (page 4)" in outline and "  - Timeouts (page 5)" in outline
    tools = [s for s in trace.steps if s.type == "tool"]
    assert [t.name for t in tools] == ["list_documents", "document_outline", "open_page", "next_pages"]
    assert tools[2].new_pages[0].page == 4 and tools[3].new_pages[0].page == 5
    assert backend.calls[3]["messages"][-1]["content"][0]["text"] == "File: widget.pdf, Page: 4"  # the page as an image
    row = trace.row()
    assert row["answer"] == ["42 seconds"] and row["error"] is None and row["search_history"] == []
    assert [s["type"] for s in row["trajectory"]].count("tool") == 4


def test_outline_from_font_sizes_when_a_pdf_has_no_bookmarks(manuals, registry, settings):
    _, backend = _run(manuals, registry, settings, [_call("document_outline", file="pump.pdf"), {"answer": []}])
    outline = _tool_results(backend, 1)[0]
    assert "headings found by font size" in outline
    assert [line.strip() for line in outline.splitlines()[1:]] == [
        "- Overview (page 1)", "- Maintenance (page 2)", "- Warranty (page 3)"]


def test_search_in_searches_one_document_and_is_recorded_as_a_search(manuals, registry, settings):
    trace, _ = _run(manuals, registry, settings, [_call("search_in", file="widget.pdf", query="default timeout"),
                                                  {"answer": []}])
    search = trace.searches[0]
    assert search.tool == "search_in" and search.hits and {h.file for h in search.hits} == {"widget.pdf"}
    assert trace.row()["search_history"][0]["query"] == "default timeout"


def test_a_tools_mistakes_are_observations_the_model_reads(manuals, registry, settings):
    trace, backend = _run(manuals, registry, settings, [
        {"tool_calls": [{"name": "open_page", "arguments": {"file": "widget.pdf", "page": 99}},
                        {"name": "open_page", "arguments": {"file": "nope.pdf", "page": 1}},
                        {"name": "open_page", "arguments": {"file": "widget.pdf"}},
                        {"name": "next_pages", "arguments": {"file": "widget.pdf", "page": 2}}]},
        {"answer": []}])
    results = _tool_results(backend, 1)
    assert "widget.pdf has 6 pages; there is no page 99" in results[0]
    assert "'nope.pdf' is not a document of this collection" in results[1]
    assert "open_page needs 'page', a whole number" in results[2]
    assert "has not been shown yet" in results[3]
    assert [s.where for s in trace.steps if s.type == "error"] == ["tool"] * 4


def test_pages_shown_by_tools_in_one_turn_are_bounded(manuals, registry, settings):
    calls = [{"name": "open_page", "arguments": {"file": "widget.pdf", "page": p}} for p in range(1, 7)]
    trace, backend = _run(manuals, registry, settings, [{"tool_calls": calls}, {"answer": []}])
    shown = [s for s in trace.steps if s.type == "tool" and s.pages]
    assert len(shown) == 5 and "at most 5 pages a turn" in _tool_results(backend, 1)[5]


def test_a_tool_not_offered_is_unknown_and_a_config_names_only_registered_tools(manuals, registry, settings):
    trace, _ = _run(manuals, registry, settings, [_call("open_page", file="widget.pdf", page=1), {"answer": []}],
                    tools=("search_documents",))
    assert any(s.type == "error" and "unknown tool 'open_page'" in s.message for s in trace.steps)
    with pytest.raises(PluginError, match="unknown tool 'teleport'"):
        Agent(manuals, load_config("offline").with_overrides(tools=("teleport",)), registry, settings)
    with pytest.raises(SettingsError, match="distinct tool names"):
        PipelineConfig(tools=("open_page", "open_page")).validate()


def test_the_text_protocol_lists_the_offered_tools(manuals, registry):
    assert text_protocol([]) == TEXT_PROTOCOL
    agent_tools = [registry.create("tool", n, manuals, {}) for n in ("open_page", "search_in")]
    schemas = [{"type": "function", "function": {"name": n, "description": registry.get("tool", n).description,
                                                 "parameters": t.parameters}}
               for n, t in zip(("open_page", "search_in"), agent_tools, strict=True)]
    text = text_protocol(schemas)
    assert text.startswith(TEXT_PROTOCOL) and '{"tool": "<name>", "arguments": {...}}' in text
    assert "- open_page(file: string, page: integer): Open one page" in text
    from madqa.tool_text import read_tool_calls
    assert [(c.name, c.arguments) for c in read_tool_calls('{"tool": "open_page", "arguments": {"file": "a.pdf", '
                                                           '"page": 2}}', ["open_page"])] == [
        ("open_page", {"file": "a.pdf", "page": 2})]


def _docs_tool(folder: Path) -> Path:
    """The one-file tool of docs/plugins.md, copied out of the docs into ``folder``."""
    docs = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(# \$MADQA_PLUGINS_DIR/page_text.py\n.*?)```", docs, re.S).group(1)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "page_text.py").write_text(code, encoding="utf-8")
    return folder


def test_a_tool_written_from_the_docs_is_listed_and_used_by_the_scripted_backend(manuals, settings, tmp_path):
    folder = _docs_tool(tmp_path / "plugins")
    registry = collect(get_plugin_manager(folder, entry_points=False))
    component = registry.get("tool", "read_page_text")
    assert component.plugin == "page_text.py (MADQA_PLUGINS_DIR)"
    trace, backend = _run(manuals, registry, settings, [_call("read_page_text", file="widget.pdf", page=5),
                                                        {"answer": ["42 seconds"]}],
                          tools=("search_documents", "read_page_text"))
    assert "read_page_text" in {t["function"]["name"] for t in backend.calls[0]["tools"]}
    assert "The default timeout is 42 seconds." in _tool_results(backend, 1)[0]
    assert [s.name for s in trace.steps if s.type == "tool"] == ["read_page_text"]
    listed = subprocess.run([sys.executable, "-m", "madqa", "plugins"], capture_output=True, text=True, timeout=120,
                            env={"MADQA_PLUGINS_DIR": str(folder), "MADQA_HOME": str(tmp_path / "home"),
                                 "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}, cwd=REPO)
    assert listed.returncode == 0, listed.stderr
    line = next(ln for ln in listed.stdout.splitlines() if "read_page_text" in ln)
    assert line.split()[:2] == ["tool", "read_page_text"] and "page_text.py" in line


# --- Steer: the seam a person uses between the model's decision and the tool call ---------------------


def _steered(corpus, registry, settings, script, replies):  # noqa: ANN001, ANN202
    config = load_config("offline").with_overrides(backend="scripted", tools=NAVIGATION)
    agent = Agent(corpus, config, registry, settings, {"script": script})
    run = agent.run_steered("What is the default timeout?")
    trace, proposals, reply = Trace("What is the default timeout?", config, "q"), [], None
    while True:
        try:
            step = run.send(reply) if proposals or trace.steps else next(run)
        except StopIteration:
            return trace, proposals
        reply = None
        if isinstance(step, ProposedCalls):
            proposals.append(step)
            reply = replies.pop(0)
        else:
            trace.steps.append(step)


def test_steer_approve_edit_and_answer_are_recorded_and_score(manuals, registry, settings):
    edit = SteerReply(calls=(ToolCall("open_page", {"file": "widget.pdf", "page": 5}),))
    answer = SteerReply(answer={"answer": ["42 seconds"], "citations": [{"file": "widget.pdf", "page": 5}]})
    trace, proposals = _steered(manuals, registry, settings, [
        _call("document_outline", file="widget.pdf"), _call("open_page", file="widget.pdf", page=4),
        {"answer": ["7 seconds"], "citations": [{"file": "other.pdf", "page": 1}]}], [None, edit, answer])
    assert [p.calls[0].name for p in proposals] == ["document_outline", "open_page", "submit_answer"]
    steer = [s for s in trace.steps if s.type == "steer"]
    assert [s.action for s in steer] == ["approve", "edit", "answer"]
    opened = next(s for s in trace.steps if s.type == "tool" and s.name == "open_page")
    assert opened.arguments == {"file": "widget.pdf", "page": 5} and opened.by == "person"
    row = trace.row()
    assert row["answer"] == ["42 seconds"] and row["citations"] == [{"file": "widget.pdf", "page": 5}]
    assert [s["action"] for s in row["trajectory"] if s["type"] == "steer"] == ["approve", "edit", "answer"]
    assert json.loads(json.dumps(row))["error"] is None


def test_steer_replace_runs_another_tool(manuals, registry, settings):
    replace = SteerReply(calls=(ToolCall("search_in", {"file": "widget.pdf", "query": "timeout"}),))
    trace, _ = _steered(manuals, registry, settings, [_call("list_documents"), {"answer": []}], [replace, None])
    assert [s.action for s in trace.steps if s.type == "steer"] == ["replace", "approve"]
    assert trace.searches[0].tool == "search_in"


# --- the offline baseline browses; the report counts what each tool did --------------------------------


def test_the_offline_baseline_offered_navigation_reads_the_outline_then_opens_the_section(tmp_path, registry,
                                                                                          settings):
    root = tmp_path / "pumps"
    path = make_pdf(root / "pump.pdf", ["Pump manual. Overview: this pump needs lubrication, see its chapter.",
                                        "Safety notes. Switch the pump off first.",
                                        "Chapter 3. Use oil of grade SAE 30 every month."])
    doc = pymupdf.open(path)
    doc.set_toc([[1, "Overview", 1], [1, "Safety", 2], [1, "Lubrication", 3]])  # the word is only in the outline
    doc.saveIncr()
    doc.close()
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    config = load_config("offline-navigation")
    assert set(NAVIGATION) == set(config.tools)
    question = "How often is lubrication due?"
    trace = Trace(question, config, "q").consume(Agent(corpus, config, registry, settings).run(question))
    done = [s.tool if s.type == "search" else s.name for s in trace.steps if s.type in ("search", "tool")]
    assert done[:3] == ["search_documents", "document_outline", "open_page"], done
    opened = next(s for s in trace.steps if s.type == "tool" and s.name == "open_page")
    assert opened.arguments == {"file": "pump.pdf", "page": 3}  # the "Lubrication" chapter, from the bookmarks
    assert opened.new_pages[0].page == 3
    assert "next_pages" not in done  # the chapter is the document's last page: no page to turn to


def test_the_report_counts_calls_per_tool_pages_by_navigation_and_first_step_success(manuals, registry, settings):
    from madqa.evaluation.report import evaluate

    trace, _ = _run(manuals, registry, settings, [
        _call("document_outline", file="widget.pdf"), _call("open_page", file="widget.pdf", page=5),
        _call("search_documents", query="unpack"),
        {"answer": ["42 seconds"], "citations": [{"file": "widget.pdf", "page": 5}]}])
    gold = [{"id": "q", "question": "What is the default timeout?", "answer_variants": [["42 seconds"]],
             "evidence": [{"document": "widget.pdf", "page": 5}]}]
    overall = evaluate([trace.row()], gold)["overall"]
    assert overall["accuracy"] == 1.0
    assert dict(overall["tool_calls"]) == {"document_outline": 1, "open_page": 1, "search_documents": 1,
                                           "submit_answer": 1}
    assert overall["pages_by_navigation"] == 1 and overall["gold_pages_by_navigation"] == 1
    assert overall["first_step_success"] == 1.0  # the first call that showed pages (open_page) showed the gold page
    assert overall["first_query_success"] == 0.0  # the paper's figure counts only the search, which came later


def test_the_trajectory_diff_shows_tool_calls(manuals, registry, settings):
    from madqa.evaluation.diff import diff_runs, format_diff

    browsed, _ = _run(manuals, registry, settings, [
        _call("search_documents", query="timeout"), _call("document_outline", file="widget.pdf"),
        _call("open_page", file="widget.pdf", page=5), {"answer": ["42 seconds"]}])
    searched, _ = _run(manuals, registry, settings, [_call("search_documents", query="timeout"), {"answer": ["7"]}],
                       tools=("search_documents", "show_pages"))
    gold = [{"id": "q", "question": "What is the default timeout?", "answer_variants": [["42 seconds"]],
             "evidence": [{"document": "widget.pdf", "page": 5}]}]
    result = diff_runs([browsed.row()], [searched.row()], gold)
    q = result["questions"][0]
    assert q["a_calls"] == ["timeout", "→ document_outline file=widget.pdf", "→ open_page file=widget.pdf page=5"]
    assert q["b_calls"] == ["timeout"] and q["first_different_call"] == 2 and q["first_different_query"] is None
    text = format_diff(result, ("browse", "search"))
    assert "* 2 → document_outline file=widget.pdf" in text


def test_the_docs_tool_shows_in_the_plugins_tab(settings, tmp_path):
    from madqa.ui.plugins import components_frame

    registry = collect(get_plugin_manager(_docs_tool(tmp_path / "plugins"), entry_points=False))
    frame = components_frame(registry)
    row = frame[frame["name"] == "read_page_text"].iloc[0]
    assert (row["kind"], row["plugin"], row["available"]) == ("tool", "page_text.py (MADQA_PLUGINS_DIR)", "yes")
    assert set(NAVIGATION) <= set(frame[frame["kind"] == "tool"]["name"])


def test_a_tools_bug_ends_the_question_as_an_error_row_naming_the_tool(manuals, settings, tmp_path):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "broken.py").write_text('''import madqa

class Broken:
    parameters = {"type": "object", "properties": {}}

    def run(self, state, arguments):
        return {}["missing"]

@madqa.hookimpl
def register_tools(register):
    register("broken", lambda host, options: Broken(), "always fails", takes_host=True)
''', encoding="utf-8")
    registry = collect(get_plugin_manager(folder, entry_points=False))
    trace, _ = _run(manuals, registry, settings, [_call("broken"), {"answer": ["x"]}], tools=("broken",))
    row = trace.row()
    assert row["answer"] == [] and row["error"] == "the tool broken raised KeyError: 'missing'"
    assert "Traceback" in next(s.message for s in trace.steps if s.type == "error" and s.where == "tool broken")


def test_tool_and_steer_steps_read_in_the_chat_escaped():
    from madqa.types import PageRef, SteerStep, ToolStep
    from madqa.ui.messages import step_message, thumbnail_caption

    step = ToolStep(2, "open_page", {"file": "a_<b>.pdf", "page": 3}, "Opened below: File: a_<b>.pdf, Page: 3",
                    (PageRef("a_<b>.pdf", 3),), (PageRef("a_<b>.pdf", 3),), by="person")
    message = step_message(step)
    import html

    assert html.unescape(message["metadata"]["title"]).startswith('Tool 2: open_page {"file": "a_<b>.pdf"')
    assert "<b>" not in message["metadata"]["title"]
    assert "changed by the person steering" in message["content"]
    assert "**Showed:** a\\_\\<b\\>\\.pdf p\\.3 (1 new)" in message["content"]  # escaped outside the code span
    assert thumbnail_caption(PageRef("x/a.pdf", 3), step) == "p.3 · a.pdf (open_page, step 2)"
    steer = step_message(SteerStep(3, "answer", (ToolCall("search_documents", {"query": "q"}),),
                                   (ToolCall("submit_answer", {"answer": ["8.1%"]}),)))
    assert html.unescape(steer["metadata"]["title"]) == "Person · step 3: answered in the model's place"
    assert "Ran instead" in steer["content"] and "submit_answer" in steer["content"]
    from madqa.cli.common import describe_step  # the CLI's view of the same steps
    assert describe_step(step).startswith('[2] open_page {"file": "a_<b>.pdf", "page": 3}: shown: a_<b>.pdf p.3')
    assert describe_step(SteerStep(3, "answer", (), (ToolCall("submit_answer", {}),))) == "[3] person: answer submit_answer"
