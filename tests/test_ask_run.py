"""What a question of the Ask tab does, without a running app: its updates (``madqa.ui.ask_run``) for a follow-up
after the collection was switched mid-chat, an answer from a collection still indexing, pages that cannot be drawn,
a model that cannot be reached. The scripted backend answers; the corpus is a real one made in a fixture."""

from __future__ import annotations

from typing import Any

from madqa.collection_index import IndexState
from madqa.conversation import ChatTurn
from madqa.settings import load_config
from madqa.types import PageRef
from madqa.ui.ask_run import AskQuestion, answer_question
from madqa.ui.context import AppContext

REVENUE = [{"search": "revenue 2024"},
           {"answer": ["7.5 million"], "citations": [{"file": "report.pdf", "page": 1}]}]


class Sessions:
    """The part of ``SessionStore`` a question uses: one corpus under every key, shared collections by key."""

    def __init__(self, corpus: Any, shared: dict[str, Any] | None = None) -> None:
        self._corpus = corpus
        self.shared = shared or {}

    def key_of(self, session: Any) -> str:
        return session["corpus"]

    def corpus(self, session: Any, key: str | None = None) -> Any:
        return self._corpus

    def shared_collection(self, key: str) -> Any:
        return self.shared[key]


class Indexing:
    """A shared collection with 1 of 9 files searchable, still indexing; searchable after ``waits`` waits."""

    name = "reports"

    def __init__(self, waits: int = 0) -> None:
        self.waits = waits

    def wait_searchable(self, timeout: float | None = None) -> bool:
        self.waits -= 1
        return self.waits < 0

    def state(self) -> IndexState:
        return IndexState(files=9, indexed_files=1, pages=3, indexing=True)


def context(corpus: Any, settings: Any, registry: Any, shared: dict[str, Any] | None = None) -> AppContext:
    return AppContext(settings, registry, Sessions(corpus, shared), {}, "offline")  # type: ignore[arg-type]


def asked(text: str, key: str = "mine", script: list[dict[str, Any]] | None = None, **fields: Any) -> AskQuestion:
    config = load_config("offline").with_overrides(backend="scripted")
    return AskQuestion(text, config, {"script": list(script or REVENUE)}, {"corpus": key}, **fields)


def contents(update: Any) -> str:
    text = "\n".join(f"{m.get('metadata', {}).get('title', '')} {m['content']}" for m in update.chat)
    return text.replace("\\", "")  # the Markdown escapes of the notes


def answer(update: Any) -> str:
    """The answer's message (the last in the chat), its Markdown unescaped enough to read."""
    return update.chat[-1]["content"].replace("\\", "")


def test_a_question_streams_its_steps_and_ends_with_its_turn_and_the_pages_it_saw_and_cited(corpus, settings, registry):
    updates = list(answer_question(context(corpus, settings, registry), asked("What was the revenue in 2024?")))
    first, last = updates[0], updates[-1]
    assert first.first and not any(u.first for u in updates[1:])  # the box and the viewer are cleared once
    assert "Starting" in contents(first) and first.chat[0] == {"role": "user", "content": "What was the revenue in 2024?"}
    assert all(u.turns is None for u in updates[:-1])
    assert [(t.question, t.answer, t.citations, t.collection) for t in last.turns] == [
        ("What was the revenue in 2024?", ("7.5 million",), (PageRef("report.pdf", 1),), "mine")]
    assert ["mine", "report.pdf", 1] in last.seen_refs and len(last.seen) == len(last.seen_refs)
    assert last.cited_refs == [["mine", "report.pdf", 1, [[], ["7.5 million"]]]] and len(last.cited) == 1
    assert answer(last).startswith("**Answer:** 7.5 million")


def test_a_follow_up_goes_with_the_earlier_turns_of_the_same_collection(corpus, settings, registry):
    earlier = (ChatTurn("What was the revenue?", "What was the revenue?", ("7.5 million",), collection="mine"),)
    updates = list(answer_question(context(corpus, settings, registry),
                                   asked("And in 2023?", history=({"role": "user", "content": "x"},), turns=earlier)))
    assert "a follow-up: 1 earlier turn go with it" in contents(updates[0])
    assert len(updates[-1].turns) == 2
    assert updates[0].chat[0] == {"role": "user", "content": "x"}  # the chat so far stays above


def test_after_a_switch_of_collection_mid_chat_the_question_is_asked_on_its_own_and_says_so(corpus, settings, registry):
    earlier = (ChatTurn("What did the memo approve?", "What did the memo approve?", ("the budget",), collection="demo"),)
    updates = list(answer_question(context(corpus, settings, registry), asked("What was the revenue?", turns=earlier)))
    note = "asked on its own, not as a follow-up: the earlier turns of this chat searched demo, this question your uploads"
    assert note in contents(updates[0]) and "go with it" not in contents(updates[0])
    assert answer(updates[-1]).startswith("**Answer:** 7.5 million") and note in answer(updates[-1])  # in its flags too
    assert [t.question for t in updates[-1].turns] == ["What was the revenue?"]  # the other collection's turns dropped


def test_an_answer_from_a_collection_still_indexing_says_how_much_was_searched(corpus, settings, registry):
    ctx = context(corpus, settings, registry, {"reports": Indexing(waits=2)})
    updates = list(answer_question(ctx, asked("What was the revenue?", key="reports")))
    waiting = [u for u in updates if "Waiting for the collection" in contents(u)]
    assert len(waiting) == 2 and not any(u.first for u in waiting)
    partial = "reports is still being indexed: searching 1 of 9 files (3 pages) indexed so far"
    assert partial in contents(updates[0]) and partial in answer(updates[-1])
    assert updates[-1].turns[-1].collection == "reports"
    assert updates[-1].cited_refs[0][0] == "reports"


def test_a_page_that_cannot_be_drawn_gets_no_picture_but_the_answer_stands(corpus, settings, registry, monkeypatch):
    import madqa.ui.ask_run as ask_run

    def no_disk(corpus: Any, ref: PageRef, *args: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ask_run, "page_file", no_disk)
    last = list(answer_question(context(corpus, settings, registry), asked("What was the revenue?")))[-1]
    assert last.seen == [] and last.cited == [] and last.cited_refs == []
    assert last.turns[-1].answer == ("7.5 million",) and answer(last).startswith("**Answer:** 7.5 million")


def test_a_model_that_cannot_be_reached_is_said_up_front_and_nothing_runs(corpus, settings, registry, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = load_config("offline").with_overrides(name="gpt", backend="litellm", model="gpt-4o-mini")
    question = AskQuestion("What was the revenue?", config, {}, {"corpus": "mine"})
    updates = list(answer_question(context(corpus, settings, registry), question))
    assert len(updates) == 1 and updates[0].first and updates[0].turns is None
    assert "The model cannot be reached." in contents(updates[0]) and updates[0].seen == []


def test_a_corpus_that_cannot_be_opened_ends_the_question_with_a_problem_not_a_crash(settings, registry):
    from madqa.errors import CorpusError

    class Gone(Sessions):
        def corpus(self, session: Any, key: str | None = None) -> Any:
            raise CorpusError("your uploads were deleted")

    ctx = AppContext(settings, registry, Gone(None), {}, "offline")  # type: ignore[arg-type]
    updates = list(answer_question(ctx, asked("What was the revenue?")))
    assert "your uploads were deleted" in contents(updates[-1])
    assert updates[-1].turns is not None and updates[-1].turns[-1].failed  # the turn is kept, with no answer
