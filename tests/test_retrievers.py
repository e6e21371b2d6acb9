"""Retrievers other than Whoosh on small real indexes: tantivy (same query language), and how an
index follows the corpus when files are added and removed."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from madqa.corpus import Corpus
from madqa.index import ingest
from tests.conftest import make_pdf

pytest.importorskip("tantivy", reason="retriever tantivy needs the tantivy package (requirements.txt)")

PAGES = {
    "annual.pdf": ["The annual report shows revenue of 5 million.", "Operating costs and reports on staff."],
    "manual.pdf": ["Engine specifications: Bell 407 helicopter.", "Accessories for the Bell 429 model."],
    "letter.pdf": ["Date of incorporation: 12 March 2001.", "The company was incorporated in Delaware."],
}


def refs(result):
    return [(h.file, h.page) for h in result.hits]


@pytest.fixture
def corpus_root(tmp_path):
    root = tmp_path / "docs"
    for name, pages in PAGES.items():
        make_pdf(root / name, pages)
    return root


@pytest.fixture(params=["whoosh", "tantivy"])
def retriever(request, corpus_root, settings, registry):
    ingest(corpus_root, settings, registry, ocr="never")
    return registry.create("retriever", request.param, Corpus.open(corpus_root, settings.corpora_dir), {})


def test_same_query_language(retriever):
    assert refs(retriever.search('"annual report" AND revenue')) == [("annual.pdf", 1)]
    assert set(refs(retriever.search("revenue OR accessories"))) == {("annual.pdf", 1), ("manual.pdf", 2)}
    assert refs(retriever.search("Bell NOT accessories")) == [("manual.pdf", 1)]
    assert refs(retriever.search("Bell AND (407 OR helicopter)")) == [("manual.pdf", 1)]
    assert set(refs(retriever.search("Bell*"))) == {("manual.pdf", 1), ("manual.pdf", 2)}
    assert refs(retriever.search("incorporat?on")) == [("letter.pdf", 1)]
    exact = retriever.search('"annual report"')
    assert refs(exact) == [("annual.pdf", 1)] and exact.note is None
    loosened = retriever.search('"report annual"')
    assert refs(loosened) == [("annual.pdf", 1)] and "phrases loosened" in loosened.note
    hit = retriever.search("helicopter").hits[0]
    assert "helicopter" in hit.snippet and hit.score > 0


def test_same_fallbacks_and_notes(retriever):
    anyterm = retriever.search("incorporated reports")
    assert anyterm.note and "any" in anyterm.note
    assert {("annual.pdf", 2), ("letter.pdf", 2)} <= set(refs(anyterm))
    variants = retriever.search("specification")
    assert refs(variants) == [("manual.pdf", 1)] and "stemmed" in variants.note
    assert "(specification: " in variants.note and "report/reports" not in variants.note  # the query's own words
    none = retriever.search("zeppelin")
    assert none.hits == () and "no page matches" in none.note
    fielded = retriever.search("page:3 file:annual")  # words, not field queries
    assert refs(fielded) == [("annual.pdf", 1)] and "any" in fielded.note


@pytest.mark.parametrize("query", ["", "   ", "AND OR NOT", "the of", "*", "?*", '"', "((", "NOT revenue"])
def test_syntax_only_queries_give_a_message_not_an_error(retriever, query):
    result = retriever.search(query)
    assert result.hits == () and result.note


@hsettings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.sampled_from(list('abcBell "*?()-+:^~[]{}\\/!ANDORNOT01.')), max_size=60)
       | st.text(max_size=40))
def test_fuzzed_queries_never_raise(retriever, query):
    result = retriever.search(query)
    assert isinstance(result.hits, tuple) and (result.hits or result.note)


def test_tantivy_says_what_it_cannot_do(corpus_root, settings, registry):
    ingest(corpus_root, settings, registry, ocr="never")
    tantivy = registry.create("retriever", "tantivy", Corpus.open(corpus_root, settings.corpora_dir), {})
    result = tantivy.search('"annual rep*"')
    assert refs(result) == [("annual.pdf", 1)] and "wildcards inside a phrase" in result.note
    stem_first = registry.create("retriever", "tantivy", Corpus.open(corpus_root, settings.corpora_dir),
                                 {"analyzer": "stemming"})
    assert refs(stem_first.search("specification")) == [("manual.pdf", 1)]
    assert stem_first.search("specification").note is None


def test_tantivy_index_follows_added_changed_and_removed_files(corpus_root, settings, registry):
    ingest(corpus_root, settings, registry, ocr="never")
    make_pdf(corpus_root / "new.pdf", ["A zeppelin over the harbour."])
    (corpus_root / "letter.pdf").unlink()
    make_pdf(corpus_root / "annual.pdf", ["The annual report shows profit."])
    ingest(corpus_root, settings, registry, ocr="never")
    corpus = Corpus.open(corpus_root, settings.corpora_dir)
    tantivy = registry.create("retriever", "tantivy", corpus, {})
    assert refs(tantivy.search("zeppelin")) == [("new.pdf", 1)]
    assert tantivy.search("incorporation").hits == ()
    assert tantivy.search("revenue").hits == () and refs(tantivy.search("profit")) == [("annual.pdf", 1)]
    assert refs(tantivy.search("helicopter")) == [("manual.pdf", 1)]  # unchanged files carried over


def test_tantivy_builds_a_missing_index_on_first_open(corpus_root, settings, registry):
    import shutil

    ingest(corpus_root, settings, registry, ocr="never")
    corpus = Corpus.open(corpus_root, settings.corpora_dir)
    shutil.rmtree(corpus.retriever_dir("tantivy"))  # as if ingested before the plugin existed
    tantivy = registry.create("retriever", "tantivy", corpus, {})
    assert refs(tantivy.search("helicopter")) == [("manual.pdf", 1)]
    leftovers = [p.name for p in corpus.retriever_dir("tantivy").parent.iterdir() if p.name.startswith(".tmp")]
    assert leftovers == []


def test_tantivy_wildcards_keep_bm25_scores(corpus_root, settings, registry):
    make_pdf(corpus_root / "more.pdf", ["report report report report", "a report and some other words here"])
    ingest(corpus_root, settings, registry, ocr="never")
    tantivy = registry.create("retriever", "tantivy", Corpus.open(corpus_root, settings.corpora_dir), {})
    hits = tantivy.search("repor*", k=10).hits
    assert len({round(h.score, 4) for h in hits}) > 1 and hits[0].score > hits[-1].score  # ranked, not constant
    assert {("annual.pdf", 1), ("annual.pdf", 2)} <= set(refs(tantivy.search("repor*", k=10)))
    assert tantivy.search("zz*").hits == () and "no page matches" in tantivy.search("zz*").note
    assert refs(tantivy.search("*poration")) == [("letter.pdf", 1)]  # leading wildcard: regex scan
