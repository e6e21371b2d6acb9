"""Documents as evidence (issue 42): a question naming a document prefers it; hybrid keeps BM25's head."""

from __future__ import annotations

import pytest

from madqa import Hit
from madqa.corpus import Corpus
from madqa.index import ingest
from madqa_plugins.dense.hybrid import keep_head
from madqa_plugins.text import documents
from tests.conftest import make_pdf

pytest.importorskip("tantivy", reason="retriever tantivy needs the tantivy package (requirements.txt)")

# two look-alike documents of one product: the same words, one named a quick reference in its file name
PAGES = {
    "zoo/zoo-faq.pdf": ["Zoo FAQ", "The day the epoch 1970 began on was a Thursday."],
    "zoo/zoo-quickref.pdf": ["Zoo", "Dates: the day the epoch 1970 began on was a Thursday, in the listings."],
}


def test_a_query_word_names_a_document_by_its_path_or_title():
    described = documents.describe("rasmol/refcard.pdf", "RasMol Quick Reference Card")
    assert {"rasmol", "refcard", "quick", "reference", "card"} <= described
    assert documents.names("card", documents.describe("rasmol/refcard.pdf", ""))  # a part of a word
    assert documents.names("quick", documents.describe("zoo/zoo-quickref.pdf", ""))
    assert documents.names("reference", documents.describe("music/pmx-ref.pdf", ""))  # an abbreviation
    assert not documents.names("manual", documents.describe("rasmol/refcard.pdf", ""))


def test_only_words_telling_the_documents_apart_move_pages():
    ranked = [(3.0, ("a/manual.pdf", 1)), (2.0, ("a/refcard.pdf", 2)), (1.0, ("a/manual.pdf", 5))]
    describe = {"a/manual.pdf": frozenset({"a", "manual"}), "a/refcard.pdf": frozenset({"a", "refcard"})}.__getitem__

    def run(words, weight=0.5):
        return [item[1] for _, item in documents.prefer_named(ranked, words, lambda r: r[1][0], lambda r: r[0],
                                                                describe, weight)]

    assert run(["colour", "card"]) == [("a/refcard.pdf", 2), ("a/manual.pdf", 1), ("a/manual.pdf", 5)]
    assert run(["colour", "card"], weight=0) == [r[1] for r in ranked]  # the option off: unchanged
    assert run(["colour", "a"]) == [r[1] for r in ranked]  # too short, and naming every document anyway


@pytest.mark.parametrize("name", ["whoosh", "tantivy"])
def test_the_named_document_comes_first(tmp_path, settings, registry, name):
    root = tmp_path / "docs"
    for file, pages in PAGES.items():
        make_pdf(root / file, pages)
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    question = "Which day did the epoch 1970 begin on, according to the zoo quick reference?"
    assert registry.create("retriever", name, corpus, {}).search(question, 1).hits[0].file == "zoo/zoo-quickref.pdf"
    off = registry.create("retriever", name, corpus, {"documents": 0}).search(question, 1)
    assert off.hits[0].file == "zoo/zoo-faq.pdf"  # BM25 alone: the FAQ's short page repeating the words wins


def test_hybrid_keeps_bm25_first_pages_in_order():
    a, b, c, d = (Hit("f.pdf", n, 0.0) for n in (1, 2, 3, 4))
    fused = [(0.5, d, [1]), (0.4, b, [0, 1]), (0.3, a, [0]), (0.2, c, [0])]
    out = keep_head(fused, [a, b, c], 2)
    assert [h.page for _, h, _ in out] == [1, 2, 4, 3]
    assert [s for s, *_ in out] == sorted((s for s, *_ in out), reverse=True)
    assert keep_head(fused, [a, b, c], 0) == fused
