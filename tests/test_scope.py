"""Scope: one document or a chosen set searched, by any retriever, chosen beside the question or in the query."""

from __future__ import annotations

import pytest

import madqa
from madqa.agent import Agent
from madqa.scope import combine, parse_scope, resolve_files, search_scoped
from madqa.settings import load_config
from madqa.trace import Trace
from madqa.types import Hit, PageRef, SearchResult, SearchStep
from tests.conftest import two_file_corpus

DOCS = ("fin/report.pdf", "memo.pdf", "Annual Report 2024.pdf")


class Unaware:
    """A third party's retriever that knows nothing of scopes: every page, by number, whatever the query."""

    def __init__(self, refs: list[PageRef]) -> None:
        self.refs, self.asked = refs, []

    def search(self, query: str, k: int) -> SearchResult:
        self.asked.append(k)
        return SearchResult(tuple(Hit(r.file, r.page, 1.0 / (n + 1)) for n, r in enumerate(self.refs[:k])), query)


class Filtering(Unaware):
    filters_files = True

    def search(self, query: str, k: int, files: frozenset[str] | None = None) -> SearchResult:  # type: ignore[override]
        self.asked.append((k, files))
        refs = [r for r in self.refs if files is None or r.file in files]
        return SearchResult(tuple(Hit(r.file, r.page, 1.0) for r in refs[:k]), query)


def test_file_terms_come_out_of_the_query_resolved_to_the_corpus_names():
    scoped = parse_scope('revenue file:report.pdf 2024 file:"annual report 2024"', DOCS)
    assert scoped.query == "revenue 2024"
    assert scoped.files == ("fin/report.pdf", "Annual Report 2024.pdf")
    assert parse_scope("revenue 2024", DOCS) == madqa.ScopedQuery("revenue 2024", ())
    assert resolve_files(["MEMO"], DOCS) == ("memo.pdf",)


def test_an_unknown_file_is_a_clear_error_listing_the_documents():
    with pytest.raises(madqa.ScopeError, match="'budget.pdf' is not a document.*memo.pdf"):
        parse_scope("file:budget.pdf cost", DOCS)


def test_a_chosen_scope_and_the_query_names_intersect():
    assert combine((), ()) is None
    assert combine(("memo.pdf",), ()) == ("memo.pdf",)
    assert combine(("memo.pdf", "fin/report.pdf"), ("memo.pdf",)) == ("memo.pdf",)
    with pytest.raises(madqa.ScopeError, match="outside the chosen scope"):
        combine(("memo.pdf",), ("fin/report.pdf",))


def test_a_retriever_that_ignores_scopes_is_filtered_by_the_core():
    refs = [PageRef("a.pdf", n) for n in range(1, 29)] + [PageRef("b.pdf", 1), PageRef("b.pdf", 2)]
    plain = Unaware(refs)
    result = search_scoped(plain, "q", 3, {"b.pdf"})
    assert [h.ref for h in result.hits] == [PageRef("b.pdf", 1), PageRef("b.pdf", 2)]
    assert plain.asked == [30]  # asked for more, then filtered
    assert "cannot search within files" in (result.note or "")
    assert [h.ref for h in search_scoped(plain, "q", 2, None).hits] == refs[:2]


def test_a_retriever_that_filters_gets_the_files():
    refs = [PageRef("a.pdf", n) for n in range(1, 30)] + [PageRef("b.pdf", 1)]
    filtering = Filtering(refs)
    result = search_scoped(filtering, "q", 3, {"b.pdf"})
    assert [h.ref for h in result.hits] == [PageRef("b.pdf", 1)] and result.note is None
    assert filtering.asked == [(3, frozenset({"b.pdf"}))]


@pytest.fixture
def corpus(tmp_path, settings, registry):
    return two_file_corpus(tmp_path / "docs", settings, registry, report="fin/report.pdf")


def _run(corpus, registry, settings, script, question="When was the budget approved?", **kwargs):
    config = load_config("offline").with_overrides(backend="scripted")
    agent = Agent(corpus, config, registry, settings, {"script": script})
    return Trace(question, config, "q1").consume(agent.run(question, **kwargs)), agent.backend


def test_the_agent_searches_only_the_scope_and_is_told_it(corpus, registry, settings):
    trace, backend = _run(corpus, registry, settings, [{"search": "2024"}, {"answer": ["x"], "citations": []}],
                          scope=["report"])
    search = next(s for s in trace.steps if isinstance(s, SearchStep))
    assert search.hits and {h.ref.file for h in search.hits} == {"fin/report.pdf"}
    messages = backend.calls[0]["messages"]
    told = messages[0]["content"]  # in the system prompt: the question stays the first user message
    assert messages[0]["role"] == "system" and "limited to one document" in told and "fin/report.pdf" in told
    assert [m["content"] for m in messages if m["role"] == "user"][0] == "When was the budget approved?"


def test_the_offline_baseline_answers_within_a_scope(corpus, registry, settings):
    config = load_config("offline")
    agent = Agent(corpus, config, registry, settings)
    question = "What was the revenue in 2024?"  # the memo says 2024 too, but not the revenue
    inside = Trace(question, config).consume(agent.run(question, scope=["report"]))
    assert inside.answer.answer == ("7.5",) and [c.file for c in inside.answer.citations] == ["fin/report.pdf"]
    outside = Trace(question, config).consume(agent.run(question, scope=["memo.pdf"]))
    assert not outside.answer.answer and {h.ref.file for s in outside.searches for h in s.hits} == {"memo.pdf"}


def test_file_terms_in_a_query_narrow_the_search(corpus, registry, settings):
    trace, _ = _run(corpus, registry, settings, [{"search": "2024 file:memo.pdf"},
                                                 {"search": "file:nothing.pdf 2024"},
                                                 {"answer": ["3 May 2024"], "citations": []}])
    first, second = [s for s in trace.steps if isinstance(s, SearchStep)]
    assert first.executed_query == "2024" and {h.ref.file for h in first.hits} == {"memo.pdf"}
    assert second.error and "nothing.pdf" in second.error and not second.hits


def test_a_scope_naming_no_document_is_refused_before_any_call(corpus, registry, settings):
    config = load_config("offline").with_overrides(backend="scripted")
    agent = Agent(corpus, config, registry, settings, {"script": []})
    with pytest.raises(madqa.ScopeError):
        next(agent.run("q", scope=["nothing.pdf"]))
