"""The UI's pure functions: agent steps -> chat messages, citation values, upload names, tables."""

from __future__ import annotations

import html
import json
import re

import pytest

from madqa.types import AnswerStep, ErrorStep, Hit, ModelStep, PageRef, SearchStep, ToolCall, Usage
from madqa.ui.compare_summary import summary_rows
from madqa.ui.corpus import page_ranges
from madqa.ui.messages import (
    StepChat,
    answer_message,
    citation_value,
    hide_paths,
    md_code,
    md_escape,
    model_message,
    parse_citation_value,
    pending_message,
    redact,
    search_message,
    step_message,
    user_message,
)
from madqa.ui.sessions import new_session, safe_upload_name, shorten_name, valid_token

HITS = (Hit("finance/report.pdf", 6, 12.5, "Total revenue 148,612"), Hit("sales/q4.pdf", 2, 3.25, ""))


def search(**changes: object) -> SearchStep:
    base = dict(iteration=1, query="total revenue", executed_query="total revenue", hits=HITS,
                new_pages=(PageRef("finance/report.pdf", 6),), elapsed_s=0.0123)
    base.update(changes)
    return SearchStep(**base)  # type: ignore[arg-type]


def test_a_search_is_a_collapsed_thought_with_the_query_and_the_pages() -> None:
    message = search_message(search())
    assert message["role"] == "assistant"
    meta = message["metadata"]
    assert meta["title"] == "Search 1: total revenue"
    assert meta["status"] == "done" and meta["log"] == "2 hits · 1 new" and meta["duration"] == 0.012
    content = message["content"]
    assert "**Query as written:** `total revenue`" in content
    assert "Run as" not in content  # not rewritten
    assert "new: **finance/report\\.pdf p\\.6**" in content and "score 12.50" in content
    assert "sales/q4\\.pdf p\\.2** · score 3.25 · seen before" in content
    assert "Total revenue 148,612" in content


def test_a_rewritten_query_shows_both_forms_and_the_notes() -> None:
    message = search_message(search(executed_query="revenue OR sales", strategy_note="added synonyms",
                                    retriever_note="matched any term", error="page 3 could not be shown"))
    content = message["content"]
    assert "**Query as written:** `total revenue`" in content
    assert "**Run as:** `revenue OR sales`" in content
    assert "added synonyms" in content and "matched any term" in content and "could not be shown" in content


def test_a_search_with_no_hits_says_so_and_long_queries_are_shortened() -> None:
    message = search_message(search(query="x" * 300, executed_query="x" * 300, hits=(), new_pages=()))
    assert "No pages found." in message["content"]
    assert len(message["metadata"]["title"]) <= 90 and message["metadata"]["title"].endswith("…")


def test_a_model_note_lists_its_tool_calls_tokens_and_cost() -> None:
    step = ModelStep(2, "I should look for the income statement.",
                     (ToolCall("search_documents", {"query": "income `statement`"}),), Usage(1200, 34), 0.0021, 1.5)
    message = model_message(step)
    assert message["metadata"]["title"] == "Model · step 2"
    assert message["metadata"]["log"] == "1,234 tokens · $0.0021"
    assert "→ search_documents `` income `statement` ``" in message["content"]
    forced = model_message(ModelStep(10, None, (), Usage(), None, 0.0, forced_answer=True))
    assert forced["metadata"]["title"].endswith("must answer now") and "(no text)" in forced["content"]
    assert "log" not in forced["metadata"]


def test_an_answer_has_clickable_citations() -> None:
    step = AnswerStep(3, ("148,612",), (PageRef("finance/report.pdf", 6), PageRef("sales/q4.pdf", 2)),
                      flags=("citation p.99 is out of range",))
    message = answer_message(step, "mine")
    assert "metadata" not in message  # a plain message, not a thought
    assert message["content"].startswith("**Answer:** 148,612")
    assert "⚑ citation p\\.99 is out of range" in message["content"]
    labels = [o["label"] for o in message["options"]]
    assert labels == ["📄 finance/report.pdf · p.6", "📄 sales/q4.pdf · p.2"]
    assert parse_citation_value(message["options"][0]["value"]) == ("mine", PageRef("finance/report.pdf", 6))


def test_a_refusal_has_no_options() -> None:
    message = answer_message(AnswerStep(10, (), (), flags=("no answer",), refusal=True))
    assert "No answer" in message["content"] and "options" not in message


def test_every_step_type_has_a_message_and_errors_are_redacted() -> None:
    secret = "sk-test-abcdef123456"
    error = step_message(ErrorStep(1, "backend", f"401: invalid key {secret}"), secrets=[secret])
    assert secret not in error["content"] and "\\*\\*\\*" in error["content"]
    assert error["metadata"]["title"] == "⚠ Problem in backend · step 1"
    assert step_message(search())["metadata"]["title"].startswith("Search")
    with pytest.raises(TypeError):
        step_message("not a step")  # type: ignore[arg-type]


def test_one_chat_builder_files_each_step_where_ask_and_compare_show_it() -> None:
    chat = StepChat("trace-0", "mine", "offline", "offline", ["sk-secret-123"], hint=False)  # as in Compare
    silent = ModelStep(1, "", (ToolCall("search_documents", {"query": "total revenue"}),), Usage(), None, 0.1)
    assert chat.add(silent)["metadata"]["title"] == "Searching" and chat.thoughts == []  # folded: the search shows it
    assert chat.add(search(iteration=2))["metadata"]["title"] == "Reading the pages"
    assert [m["metadata"]["parent_id"] for m in chat.thoughts] == ["trace-0"]
    answer = AnswerStep(3, ("148,612",), (PageRef("finance/report.pdf", 6),))
    assert chat.add(answer) is None and len(chat.steps) == 3
    badge = chat.after[-1]["content"]
    assert "148,612" in badge and "offline extractive baseline" in badge and "API key" not in badge
    assert chat.after[-1]["options"][0]["value"].startswith('{"corpus": "mine"')

    failed = StepChat("trace-1", "demo", "litellm", "openai/gpt-4.1-mini", ["sk-secret-123"])
    failed.add(ErrorStep(1, "backend", "401 bad key sk-secret-123"))
    failed.add(AnswerStep(1, (), (), failure="backend: 401"))
    assert len(failed.after) == 1 and "could not answer" in failed.after[0]["content"]
    assert "sk-secret-123" not in failed.after[0]["content"] and r"\*\*\*" in failed.after[0]["content"]
    failed.problem("boom at /srv/uploads/tok/a.pdf with sk-secret-123")
    failed.unreachable("no API key")
    assert "/srv" not in failed.after[1]["content"] and "sk-secret" not in failed.after[1]["content"]
    assert failed.after[2]["content"].startswith("⚠ **The model cannot be reached.**")


def test_user_and_pending_messages() -> None:
    assert user_message("Why?") == {"role": "user", "content": "Why?"}
    pending = pending_message("Searching", "revenue")
    assert pending["metadata"] == {"title": "Searching", "status": "pending"} and pending["content"] == "revenue"


@pytest.mark.parametrize("value", [
    "not json", "[]", json.dumps({"corpus": "demo", "file": "a.pdf", "page": 0}),
    json.dumps({"corpus": "demo", "file": "a.pdf", "page": True}), json.dumps({"corpus": 1, "file": "a.pdf", "page": 1}),
    json.dumps({"corpus": "demo", "file": "", "page": 1}), None,
])
def test_malformed_citation_values_are_refused(value: object) -> None:
    assert parse_citation_value(value) is None


def test_citation_values_round_trip_odd_file_names() -> None:
    ref = PageRef('dir/a "quoted", | name.pdf', 12)
    assert parse_citation_value(citation_value("demo", ref)) == ("demo", ref)


def test_questions_and_titles_are_inert_in_markdown_and_html() -> None:
    from madqa.ui.messages import inert, pending_message, user_message

    payload = '<img src=x onerror=alert(1)> [a](javascript:x) ![i](http://evil.example/p.png) https://evil.example'
    for shown in (user_message(payload)["content"], inert(payload),
                  search_message(search(query=payload))["metadata"]["title"],
                  pending_message(payload)["metadata"]["title"]):
        assert not any(ch in shown for ch in "<>[]()!") and "://" not in shown
        assert html.unescape(shown).startswith(("<img src=x", "Search 1: <img src=x"))  # reads as typed
    assert html.unescape(inert(payload)) == payload
    assert user_message("two\nlines")["content"] == "two  \nlines"


def test_error_texts_lose_the_folders_of_server_paths() -> None:
    """A library's message quotes the path it opened: the server's layout and, for an upload, the token."""
    token = new_session()["token"]
    leaked = f"Failed to open file '/srv/home/uploads/{token}/docs/a b.pdf' as type pdf; see ~/x/k and ./y/z.db"
    shown = hide_paths(leaked)
    assert token not in shown and "/srv" not in shown and "uploads" not in shown
    assert shown == "Failed to open file '…/a b.pdf' as type pdf; see …/k and …/z.db"
    kept = "the openai server at http://127.0.0.1:8000/v1 failed; and/or 1/2 of 3/4/5"  # URLs, fractions, words
    assert hide_paths(kept) == kept
    message = error_message_of(f"[Errno 28] No space left on device: '/var/madqa/uploads/{token}/x.pdf'")
    assert token not in json.dumps(message) and "x\\.pdf" in message["content"]


def error_message_of(text: str) -> dict[str, object]:
    return step_message(ErrorStep(1, "search", text))


def test_markdown_helpers() -> None:
    assert md_escape("a*b_c [x](y) <b>") == "a\\*b\\_c \\[x\\]\\(y\\) \\<b\\>"
    assert md_code("plain") == "`plain`"
    assert md_code("has `tick`") == "`` has `tick` ``"
    assert md_code("`edge`").startswith("`` ") and md_code("`edge`").endswith(" ``")
    assert redact("key sk-abcdef and sk-abcdef", ["sk-abcdef"]) == "key *** and ***"
    assert redact("short key abc", ["abc"]) == "short key abc"  # too short to be a real secret


@pytest.mark.parametrize("name, expected", [
    ("report.pdf", "report.pdf"),
    ("../../etc/passwd", "passwd.pdf"),
    ("..\\..\\windows\\evil.PDF", "evil.pdf"),
    ("a..b.pdf", "a.b.pdf"),
    (".hidden.pdf", "hidden.pdf"),
    ("bad\x00na\x1fme\x7f.pdf", "badname.pdf"),
    ("semi;colon$and`tick.pdf", "semi_colon_and_tick.pdf"),
    ("Überblick 2024 (final).pdf", "Überblick 2024 (final).pdf"),
    ("", "document.pdf"),
    ("....", "document.pdf"),
    ("notes.txt", "notes.txt.pdf"),
    ("x" * 300 + ".pdf", "x" * 100 + ".pdf"),
])
def test_upload_names_are_sanitised(name: str, expected: str) -> None:
    assert safe_upload_name(name) == expected


def test_upload_names_are_unique_case_insensitively() -> None:
    taken = ["report.pdf", "Report (2).pdf"]
    assert safe_upload_name("REPORT.pdf", taken) == "REPORT (3).pdf"


def test_sessions_get_random_tokens() -> None:
    a, b = new_session(), new_session()
    assert a["token"] != b["token"] and valid_token(a["token"]) and a["corpus"] == "demo"
    assert not valid_token("../x") and not valid_token(None) and not valid_token("a" * 31)
    assert shorten_name("dir/" + "y" * 200 + ".pdf", 20).endswith("…")


def test_page_ranges() -> None:
    assert page_ranges([5, 1, 2, 3, 7, 8]) == "1-3, 5, 7-8"
    assert page_ranges([]) == ""


def test_the_compare_summary_scores_against_gold() -> None:
    row_a = {"config": "offline", "backend": "offline", "model": "offline", "answer": ["148,612"],
             "citations": [{"file": "f.pdf", "page": 6}], "iterations": 2,
             "search_history": [{"query": "total revenue"}, {"query": "revenue 2024"}],
             "usage": {"total_tokens": 0}, "cost_usd": 0.0, "latency_s": 0.25, "error": None}
    row_b = {**row_a, "config": "other", "answer": [], "citations": [], "search_history": [], "error": "backend: x"}
    table = summary_rows([row_a, row_b], {"answer_variants": [["148,612"], ["EUR 148.6 million"]]})
    rows = {line[0]: line[1:] for line in table}
    assert rows["answer"] == ["148,612", "(no answer)"]
    assert rows["citations"] == ["f.pdf p.6", "none"]
    assert rows["query drift"][0] == "0.500" and rows["query drift"][1] == "–"
    # a failed run has no score: never "0.000, wrong" (issue 24); one that never ran says so
    assert rows["ANLS*"] == ["1.000", "–"] and rows["right?"] == ["right", "failed"]
    not_run = {**row_b, "error": "not run: needs an API key"}
    assert {line[0]: line[1:] for line in summary_rows([row_a, not_run], {"answer_variants": [["148,612"]]})}[
        "right?"] == ["right", "not run"]
    wrong = {line[0]: line[1:] for line in summary_rows([row_a, {**row_b, "error": None}],
                                                         {"answer_variants": [["148,612"]]})}
    assert wrong["ANLS*"] == ["1.000", "0.000"] and wrong["right?"] == ["right", "wrong"]
    assert rows["error"] == ["", "backend: x"]
    assert rows["gold answer: 148,612 / EUR 148.6 million"] == ["", ""]  # once, not per column
    assert "tokens" not in rows and "cost (USD)" not in rows  # both zero: hidden
    with_tokens = {line[0] for line in summary_rows([{**row_a, "usage": {"total_tokens": 12}}, row_b])}
    assert "tokens" in with_tokens and "cost (USD)" not in with_tokens
    assert "ANLS*" not in {line[0] for line in summary_rows([row_a], None)}


def test_model_text_keeps_its_lines_but_never_renders_links_or_images() -> None:
    step = ModelStep(1, "First line.\n\n![x](https://evil.example/?q=secret)\n[click](https://evil.example)",
                     (), Usage(), None, 0.0)
    content = model_message(step)["content"]
    assert content.startswith("First line\\.  \n")
    assert "![x](" not in content and "](https" not in content and "\\!\\[x\\]\\(https" in content


def test_plots_say_when_the_kuiper_curve_is_undefined():
    from madqa.ui.eval_plots import plots

    right = [{"effort": 2, "correct": True, "error_category": None}, {"effort": 3, "correct": True, "error_category": None}]
    mixed = [{"effort": 2, "correct": True, "error_category": None},
             {"effort": 5, "correct": False, "error_category": "wrong_page"}]
    accuracy, kuiper, errors, notes = plots({"all-right": right, "mixed": mixed})
    assert set(kuiper["config"]) == {"mixed"}
    assert notes == ["all-right: no Kuiper curve, every answer was right", "all-right: no wrong answer to decompose"]
    assert set(accuracy["config"]) == {"all-right", "mixed"}
    assert "wrong page" in set(errors["category"]) and not any("_" in c for c in errors["category"])


def test_a_plot_with_nothing_to_show_is_replaced_by_a_line_saying_why():
    from madqa.ui.eval_plots import nothing_to_plot, plots

    right = [{"effort": 2, "correct": True, "error_category": None}, {"effort": 3, "correct": True, "error_category": None}]
    _, kuiper, errors, notes = plots({"all-right": right})
    empty = nothing_to_plot(kuiper, errors, notes)
    assert empty["kuiper"].startswith("Kuiper curve — nothing to plot: all-right: no Kuiper curve, every answer was right")
    assert empty["errors"] == "Why answers were wrong — nothing to plot: no answer was wrong."
    mixed = [*right, {"effort": 5, "correct": False, "error_category": "wrong_page"}]
    _, kuiper, errors, notes = plots({"mixed": mixed})
    assert nothing_to_plot(kuiper, errors, notes) == {}  # both drawn
    _, kuiper, errors, notes = plots({"all-right": right, "mixed": mixed})
    assert nothing_to_plot(kuiper, errors, notes) == {}  # one config with something to show is enough


def test_step_ticks_are_whole_numbers_in_numeric_order():
    import pandas as pd

    from madqa.ui.eval_plots import step_ticks

    labels, order = step_ticks(pd.Series([10.0, 2.0, 1.0, 2.0]))
    assert labels == ["10", "2", "1", "2"] and order == ["1", "2", "10"]  # not "1", "10", "2"; never "7.5"


def test_metrics_table_puts_the_numbers_before_their_explanation():
    from madqa.ui.evaluate import headline_cards, metrics_frame

    results = {"offline": {"overall": {"n": 3, "accuracy": 0.5, "page_f1": 0.25, "evidence_recall": 1.0}}}
    frame = metrics_frame(results)
    assert list(frame.columns) == ["metric", "offline", "what it means"]
    row = frame[frame["metric"] == "accuracy"].iloc[0]
    assert row["offline"] == "0.5" and "ANLS*" in row["what it means"]
    cards = headline_cards({"<b>x</b>": results["offline"]})
    assert cards.count('class="eval-card"') == 3 and "&lt;b&gt;x&lt;/b&gt;" in cards and "<b>x</b>" not in cards


def test_config_panel_options_round_trip_and_errors():
    import gradio as gr

    from madqa.settings import PipelineConfig
    from madqa.ui.config_panel import options_text, parse_options_text, resolve_config
    from madqa.ui.policy import WebPolicy

    config = PipelineConfig(name="mine", options={"query_strategy": {"threshold": 0.6, "moves": "or,drop"}})
    text = options_text(config)
    assert text == 'query_strategy.moves="or,drop"\nquery_strategy.threshold=0.6'
    assert parse_options_text(text + "\n# a comment\n\n") == config.options
    values = ["mine", "offline", "offline", "whoosh", "none", "drift", 5, 10, 1.2,
              "retriever.analyzer=stemming", "", ""]
    from madqa.plugins import collect, get_plugin_manager
    from madqa.ui.policy import visitor_options

    # visitor options come from the plugins' declarations: a bare WebPolicy() allows none
    policy = WebPolicy(visitor_options=visitor_options(collect(get_plugin_manager(entry_points=False))))
    resolved, backend_options = resolve_config({"mine": config}, values, policy)
    assert resolved.part_options("retriever") == {"analyzer": "stemming"}
    assert resolved.part_options("query_strategy") == config.options["query_strategy"]
    assert "retriever.analyzer=stemming" in resolved.name and backend_options == {}
    with pytest.raises(gr.Error, match="PART.KEY=VALUE"):
        resolve_config({"mine": config}, [*values[:9], "threshold=0.5", "", ""], policy)
    with pytest.raises(gr.Error, match="cannot be set in the web app"):
        resolve_config({"mine": config}, [*values[:9], "retriever.max_windows=9", "", ""], policy)


def test_every_answer_names_its_citations_as_links_that_carry_their_values() -> None:
    from madqa.ui.citation_links import PREFIX, link_value

    step = AnswerStep(3, ("8.1%",), (PageRef("fin/a [b].pdf", 9),), quotes=("turnover 8.1%",))
    message = answer_message(step, "demo")
    links = re.findall(r"\]\((#madqa-cite=[^)]+)\)", message["content"])
    assert len(links) == 1 and links[0].startswith(PREFIX)
    assert link_value(links[0]) == message["options"][0]["value"]  # the link opens what the chip opens
    assert parse_citation_value(link_value(links[0])) == ("demo", PageRef("fin/a [b].pdf", 9))
    assert "below" not in message["content"]  # an earlier answer has no chips below it


def test_the_model_bar_names_the_baseline_by_its_own_label_and_a_keyless_model_as_unreachable() -> None:
    from madqa.plugins import collect, get_plugin_manager
    from madqa.settings import load_config
    from madqa.ui.model_bar import model_bar

    registry = collect(get_plugin_manager(entry_points=False))
    label = registry.get("backend", "offline").description
    offline = model_bar(registry, load_config("offline"))
    name, _, caveat = label.partition(":")
    assert md_escape(name) in offline and html.escape(caveat.strip()) in offline and "no API key needed" in offline
    keyless = model_bar(registry, load_config("gpt-4.1-mini"), {}, env={})
    assert md_escape("openai/gpt-4.1-mini") in keyless and "cannot be reached" in keyless
    assert md_escape("OPENAI_API_KEY") in keyless
    keyed = model_bar(registry, load_config("gpt-4.1-mini"), {}, env={"OPENAI_API_KEY": "sk-x"})
    assert "cannot be reached" not in keyed and md_escape("(backend litellm)") in keyed


def test_a_long_file_name_gets_places_to_wrap_between_its_parts_and_a_short_one_none() -> None:
    from madqa.types import PageRef
    from madqa.ui.messages import md_page_label

    assert md_page_label(PageRef("a_b.pdf", 3)) == "a\\_b\\.pdf p\\.3"
    long = md_page_label({"file": "reports/annual_report_2024-final.pdf", "page": 3})
    assert long == "reports/<wbr>annual\\_<wbr>report\\_<wbr>2024\\-<wbr>final\\.<wbr>pdf p\\.3"
    assert "<wbr>" not in md_page_label(PageRef("x" * 30 + "<wbr>.pdf", 1)).replace("\\.<wbr>", "")  # a name's own tag stays text


def test_a_stopped_question_no_longer_says_working_and_says_nothing_was_answered() -> None:
    from madqa.ui.messages import STOPPED, stopped_chat, trace_message

    trace = trace_message("trace-0", [], 1.2, done=False)
    chat = [user_message("q"), trace, pending_message("Searching", "revenue 2024")]
    shown = stopped_chat(chat)
    assert shown[1]["metadata"]["title"].startswith("Stopped · ") and "Working" not in shown[1]["metadata"]["title"]
    assert shown[2]["metadata"] == {"title": "Searching (stopped)", "status": "done"}
    assert shown[-1]["content"] == STOPPED and shown[0] == chat[0]
    assert all(m.get("metadata", {}).get("status") != "pending" for m in shown)
    finished = [user_message("q"), trace_message("trace-0", [], 1.2, done=True)]
    assert stopped_chat(finished) == finished  # Stop pressed as the answer came in: nothing to say
