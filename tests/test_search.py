"""The Whoosh retriever's query language, fallbacks and robustness on a real index."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

import madqa
from madqa.corpus import Corpus
from madqa.index import ingest
from madqa_plugins.whoosh.whoosh_bm25 import _Builder
from tests.conftest import REPO, make_pdf

PAGES = {
    "annual.pdf": ["The annual report shows revenue of 5 million.", "Operating costs and reports on staff."],
    "manual.pdf": ["Engine specifications: Bell 407 helicopter.", "Accessories for the Bell 429 model."],
    "letter.pdf": ["Date of incorporation: 12 March 2001.", "The company was incorporated in Delaware."],
}


@pytest.fixture
def retriever(tmp_path, settings, registry):
    root = tmp_path / "docs"
    for name, pages in PAGES.items():
        make_pdf(root / name, pages)
    ingest(root, settings, registry, ocr="never")
    return registry.create("retriever", "whoosh", Corpus.open(root, settings.corpora_dir), {})


def refs(result):
    return [(h.file, h.page) for h in result.hits]


def test_boolean_phrases_and_wildcards(retriever):
    assert refs(retriever.search('"annual report" AND revenue')) == [("annual.pdf", 1)]
    assert set(refs(retriever.search("revenue OR accessories"))) == {("annual.pdf", 1), ("manual.pdf", 2)}
    assert refs(retriever.search("Bell NOT accessories")) == [("manual.pdf", 1)]
    assert set(refs(retriever.search("Bell*"))) == {("manual.pdf", 1), ("manual.pdf", 2)}
    assert refs(retriever.search("incorporat?on")) == [("letter.pdf", 1)]
    exact = retriever.search('"annual report"')
    assert refs(exact) == [("annual.pdf", 1)] and exact.note is None
    loosened = retriever.search('"report annual"')  # phrase order matters: no exact match, so loosened
    assert refs(loosened) == [("annual.pdf", 1)] and "phrases loosened" in loosened.note


def test_k_limits_and_scores_descend(retriever):
    result = retriever.search("the OR of OR Bell OR revenue OR incorporation", k=2)
    assert len(result.hits) == 2
    assert result.hits[0].score >= result.hits[1].score


def test_fallbacks_say_so(retriever):
    stemmed = retriever.search("incorporated reports")  # AND fails; stemmed variants match? no page has both
    assert stemmed.note and "any" in stemmed.note
    assert {("annual.pdf", 2), ("letter.pdf", 2)} <= set(refs(stemmed))
    variants = retriever.search("specification")  # only "specifications" is on the page
    assert refs(variants) == [("manual.pdf", 1)] and "stemmed" in variants.note
    assert "specification" in variants.note and "report/reports" not in variants.note  # the query's own words
    none = retriever.search("zeppelin")
    assert none.hits == () and "no page matches" in none.note


@pytest.mark.parametrize("query", ["", "   ", "AND OR NOT", "the of", "*", "?*", '"', "((", "NOT revenue"])
def test_syntax_only_queries_give_a_message_not_an_error(retriever, query):
    result = retriever.search(query)
    assert result.hits == () and result.note


def test_field_syntax_is_plain_text(retriever):
    fielded = retriever.search("page:3 file:annual")  # words, not field queries; only "annual" matches
    assert refs(fielded) == [("annual.pdf", 1)] and "any" in fielded.note
    assert refs(retriever.search("incorporation:")) == [("letter.pdf", 1)]


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.sampled_from(list('abcBell "*?()-+:^~[]{}\\/!ANDORNOT01')), max_size=60) | st.text(max_size=40))
def test_fuzzed_queries_never_raise(retriever, query):
    result = retriever.search(query)
    assert isinstance(result.hits, tuple)
    assert result.hits or result.note


def test_cli_search_json(tmp_path):
    root = tmp_path / "docs"
    make_pdf(root / "sub" / "a.pdf", ["nothing here", "the quarterly revenue table"])
    env = {**os.environ, "MADQA_HOME": str(tmp_path / "home")}
    proc = subprocess.run([sys.executable, "-W", "error", "-m", "madqa", "search", "--corpus", str(root),
                           "revenue", "-k", "3", "--json"], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    hits = json.loads(proc.stdout)
    assert [(h["file"], h["page"]) for h in hits] == [("sub/a.pdf", 2)]
    assert set(hits[0]) == {"file", "page", "score", "snippet"} and "revenue" in hits[0]["snippet"]


def test_stemming_analyzer_option(tmp_path, settings, registry):
    root = tmp_path / "docs"
    for name, pages in PAGES.items():
        make_pdf(root / name, pages)
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    stemming = registry.create("retriever", "whoosh", corpus, {"analyzer": "stemming"})
    variants = stemming.search("specification")  # matched as a variant from the first attempt: no note
    assert refs(variants) == [("manual.pdf", 1)] and variants.note is None
    assert set(refs(stemming.search("report"))) == {("annual.pdf", 1), ("annual.pdf", 2)}
    assert refs(stemming.search('"annual reports"')) == [("annual.pdf", 1)]  # phrase loosened, said so
    assert "phrases loosened" in stemming.search('"annual reports"').note
    with pytest.raises(madqa.PluginError, match="analyzer"):
        registry.create("retriever", "whoosh", corpus, {"analyzer": "klingon"})
    with pytest.raises(madqa.PluginError, match="unknown option boost"):  # no silently ignored options
        registry.create("retriever", "whoosh", corpus, {"boost": 2})


def test_an_index_with_other_analysis_is_rebuilt_not_searched(tmp_path, settings, registry):
    """An index written before the shared analysis (StandardAnalyzer tokens, no marker) would not find
    ``6`` or ``-v``: it is rebuilt from the stored page texts on first open."""
    from whoosh import analysis, fields, index

    root = tmp_path / "docs"
    make_pdf(root / "opts.pdf", ["Use -v for verbose output, see clause 6.", "Nothing else here."])
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    folder = corpus.retriever_dir("whoosh")
    for entry in folder.iterdir():
        entry.unlink()
    old = fields.Schema(file=fields.ID(stored=True), page=fields.NUMERIC(stored=True),
                        text=fields.TEXT(analyzer=analysis.StandardAnalyzer()))
    writer = index.create_in(str(folder), old).writer()
    for page in corpus.iter_pages():
        writer.add_document(file=page.file, page=page.page, text=page.text)
    writer.commit()
    retriever = registry.create("retriever", "whoosh", corpus, {})
    assert refs(retriever.search("-v")) == [("opts.pdf", 1)]
    assert refs(retriever.search("clause 6")) == [("opts.pdf", 1)]
    assert (folder / "madqa-whoosh.json").is_file()


def test_array_scoring_equals_whoosh(tmp_path, settings, registry):
    """Word/AND/OR queries are scored with numpy; scores and order must equal Whoosh's own."""
    from bench.corpus import make_corpus, make_queries

    root = tmp_path / "gen"
    make_corpus(root, pages=60, docs=6)
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    retriever = registry.create("retriever", "whoosh", corpus, {})
    state = retriever._open.thread_state()
    searcher, fast = state.searcher, state.fast
    queries = make_queries([p.text for p in corpus.iter_pages()], 120, seed=3) + ["revenue OR (engine AND tax)"]
    checked = 0
    for text in queries:
        parsed = _Builder(lambda t: True, any_term=False, loose=False).query(text)
        if parsed is None:
            continue
        for q in (parsed,):
            ours = fast.top(searcher, q, 7)
            if ours is None:
                continue
            theirs = [(r.score, r.docnum) for r in searcher.search(q, limit=7)]
            assert [d for _, d in ours] == [d for _, d in theirs], text
            assert [s for s, _ in ours] == pytest.approx([s for s, _ in theirs], rel=1e-9), text
            checked += 1
    assert checked > 60  # most generated queries take the array path


def test_an_ingest_over_an_older_index_rebuilds_it_with_every_page(tmp_path, settings, registry):
    """Adding a file to a corpus whose whoosh index has another analysis version must not keep only the
    new file's pages: the index is rebuilt from every page."""
    root = tmp_path / "docs"
    make_pdf(root / "old.pdf", ["Clause 6 lists the defaults."])
    ingest(root, settings, registry, ocr="never")
    folder = Corpus.open(root, settings.corpora_dir).retriever_dir("whoosh")
    (folder / "madqa-whoosh.json").write_text('{"analysis": 1}', encoding="utf-8")
    make_pdf(root / "new.pdf", ["Option -v prints more."])
    ingest(root, settings, registry, ocr="never")
    retriever = registry.create("retriever", "whoosh", Corpus.open(root, settings.corpora_dir), {})
    assert refs(retriever.search("clause 6")) == [("old.pdf", 1)]
    assert refs(retriever.search("-v")) == [("new.pdf", 1)]
