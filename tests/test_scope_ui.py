"""The app's faces of a scope without a browser: You search's file: terms, the picker's value, the line under a
scoped answer (the browser side: tests/test_scope_browser.py)."""

from __future__ import annotations

from madqa.settings import load_config
from madqa.types import AnswerStep, PageRef
from madqa.ui.human import human_search, start_game
from madqa.ui.messages import StepChat, md_escape
from madqa.ui.scope_picker import chosen_scope, scope_line


def test_you_search_takes_file_terms_as_the_agents_search_does(corpus, registry):
    config = load_config("offline")
    retriever = registry.create("retriever", config.retriever, corpus, {})
    game = start_game({"id": "q", "question": "When was revenue discussed?"}, config)
    everywhere = human_search(game, corpus, retriever, "2024", 5)
    assert {h.file for h in everywhere.hits} == {"report.pdf", "memo.pdf"}
    scoped = human_search(game, corpus, retriever, "2024 file:MEMO", 5)
    assert {h.file for h in scoped.hits} == {"memo.pdf"} and scoped.executed_query == "2024"
    assert scoped.query == "2024 file:MEMO"  # the trajectory keeps what the person typed
    unknown = human_search(game, corpus, retriever, "2024 file:budget.pdf", 5)
    assert unknown.hits == () and "'budget.pdf' is not a document" in unknown.error and "memo.pdf" in unknown.error


def test_the_pickers_value_is_the_files_chosen_and_the_answer_says_so():
    assert chosen_scope(None) == () and chosen_scope([]) == ()
    assert chosen_scope("memo.pdf") == ("memo.pdf",)
    assert chosen_scope(["memo.pdf", "memo.pdf", " ", "a/b.pdf"]) == ("memo.pdf", "a/b.pdf")
    assert scope_line(()) == ""
    assert scope_line(("a_b.pdf",)) == f"🔎 _Searched only: {md_escape('a_b.pdf')}._"  # a name is never Markdown
    chat = StepChat("t", "demo", "offline", "offline", scope_note=scope_line(("memo.pdf",)))
    chat.add(AnswerStep(1, ("x",), (PageRef("memo.pdf", 1),), (), (), False))
    assert chat.after[0]["content"].endswith(scope_line(("memo.pdf",)))
    plain = StepChat("t", "demo", "offline", "offline")
    plain.add(AnswerStep(1, ("x",), (), (), (), False))
    assert "Searched only" not in plain.after[0]["content"]
