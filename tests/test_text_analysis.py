"""The analysis both BM25 retrievers share: short and punctuated tokens survive, queries agree with pages."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from madqa.corpus import Corpus
from madqa.errors import PluginError
from madqa.index import ingest
from madqa_plugins.text import proximity, query_language
from madqa_plugins.text.text_analysis import analyze, compound_parts, query_tokens
from tests.conftest import make_pdf


@pytest.mark.parametrize(("text", "tokens"), [
    ("Use -v or --no-color", ["use", "-v", "v", "--no-color", "no", "color"]),
    ("the image/png type", ["image/png", "image", "png", "type"]),
    ("C, C++ and C#", ["c", "c++", "c", "c#", "c"]),
    ("version 2.0 of clause 6", ["version", "2.0", "2", "0", "clause", "6"]),
    ("max_steps and os.path", ["max_steps", "max", "steps", "os.path", "os", "path"]),
    ("a docu-\nment", ["document"]),
    ("gnuplot's terminal, don't", ["gnuplot", "terminal", "don"]),
    ("page:3 (x) a - b", ["page", "3", "x", "b"]),
])
def test_short_and_punctuated_tokens(text, tokens):
    assert analyze(text) == tokens


def test_query_words_keep_compounds_whole():
    assert query_tokens("--no-color") == ["--no-color"]
    assert query_tokens("image/png,") == ["image/png"]
    assert query_tokens("foo,bar") == ["foo", "bar"]
    assert compound_parts("image/png") == ["image", "png"]


@hsettings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abcXYZ019 .,/+#@_-'éßİ\n\tthe and of A")), max_size=80)
       | st.text(max_size=60))
def test_a_query_word_is_always_an_index_token_of_the_same_text(text):
    """What a query word becomes is among the tokens the same word is indexed as (one analyzer)."""
    for word in text.split():
        assert set(query_tokens(word)) <= set(analyze(word)), word


def test_plain_queries_are_told_from_the_query_language():
    assert query_language.plain_terms("What does the -v option do?") == ["-v", "option"]
    assert query_language.plain_terms("gnuplot set terminal png") == ["gnuplot", "set", "terminal", "png"]
    for structured in ('"set terminal" png', "a OR b", "term*", "a (b c)", "NOT x y", "colo?r terminal"):
        assert query_language.plain_terms(structured) is None, structured
    assert query_language.plain_terms("single") is None  # one word: the query language as written


PAGES = {
    "spec.pdf": ["Clause 6: files of type image/png are images.", "Run it with -v for verbose output.",
                 "Option --no-color turns colours off.", "Written in C++ and C; needs version 2.0 or later.",
                 "Set max_steps in config.toml to limit the loop."],
    "other.pdf": ["Clause 7 covers image files in general.", "The png format and the image viewer.",
                  "The letter v and a colour chart.", "Version 3 of the C library.", "Steps, at most ten."],
}


def _corpus_of(request, tmp_path, settings, registry, pages: dict[str, list[str]]) -> Corpus:
    """``pages`` (file name -> page texts) as PDFs, ingested, for the retriever ``request.param``."""
    if request.param == "tantivy":
        pytest.importorskip("tantivy")
    root = tmp_path / "docs"
    for name, texts in pages.items():
        make_pdf(root / name, texts)
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir)


@pytest.fixture(params=["whoosh", "tantivy"])
def retriever(request, tmp_path, settings, registry):
    return registry.create("retriever", request.param, _corpus_of(request, tmp_path, settings, registry, PAGES), {})


@pytest.mark.parametrize(("query", "page"), [
    ("6", 1), ("image/png", 1), ("-v", 2), ("--no-color", 3), ("C++", 4), ("2.0", 4), ("max_steps", 5),
    ("config.toml", 5), ('"type image/png"', 1), ("clause 6", 1),
])
def test_short_and_punctuated_tokens_are_found(retriever, query, page):
    hits = retriever.search(query, k=3).hits
    assert hits and (hits[0].file, hits[0].page) == ("spec.pdf", page), (query, hits)


def test_a_compound_the_pages_never_write_searches_its_parts(retriever):
    hits = retriever.search("image/viewer", k=3).hits  # no page writes it: image AND viewer
    assert hits and (hits[0].file, hits[0].page) == ("other.pdf", 2)
    assert "image/png" in retriever.search("image/png").hits[0].snippet  # snippets read as written


RANKED = {
    "a.pdf": ["The verbose option prints every step of the plot.",
              "Terminal png writes images " + " ".join(f"filler{i}" for i in range(60))],
    "b.pdf": ["PNG png png: png, png by png.", "Colours of the plot border."],
}


@pytest.fixture(params=["whoosh", "tantivy"])
def ranked(request, tmp_path, settings, registry):
    return registry.create("retriever", request.param, _corpus_of(request, tmp_path, settings, registry, RANKED), {})


def test_a_question_typed_as_is_finds_its_page(ranked):
    """A strict AND of every word ('what', 'does', 'verbosely'...) matches nothing; the question still
    ranks the page holding most of its words first, and says that no page held them all."""
    result = ranked.search("What does the verbose option print in a plot border?")
    assert (result.hits[0].file, result.hits[0].page) == ("a.pdf", 1)
    assert "every word" in result.note


def test_pages_with_every_keyword_rank_first(ranked):
    """BM25 alone puts the short page repeating 'png' first; the page with both words comes first."""
    result = ranked.search("terminal png")
    assert (result.hits[0].file, result.hits[0].page) == ("a.pdf", 2) and result.note is None
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    ored = ranked.search("terminal OR png")  # the query language keeps its meaning
    assert ored.hits[0].file == "b.pdf" and {(h.file, h.page) for h in ored.hits} == {("a.pdf", 2), ("b.pdf", 1)}


NEAR = {
    "near.pdf": ["The default line width is 0.5bp. " + " ".join(f"filler{i}" for i in range(3))],
    "far.pdf": ["Line and line here. Default words there. Width, width."],
    "adjacent.pdf": ["Line width, line width, line width."],  # no "default": below every page holding all three
}


@pytest.fixture(params=["whoosh", "tantivy"])
def near(request, tmp_path, settings, registry):
    corpus = _corpus_of(request, tmp_path, settings, registry, NEAR)
    return lambda **options: registry.create("retriever", request.param, corpus, options)


def test_a_question_ranks_the_page_writing_its_words_side_by_side_first(near):
    """BM25 alone prefers the short page repeating 'line' and 'width' apart; the proximity bonus puts
    the page writing 'default line width' first, and a page lacking a word stays below both."""
    question = "What is the default line width?"
    assert [h.file for h in near(proximity=0).search(question).hits] == ["far.pdf", "near.pdf", "adjacent.pdf"]
    assert [h.file for h in near().search(question).hits] == ["near.pdf", "far.pdf", "adjacent.pdf"]
    hits = near().search(question).hits
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # the query language is untouched: a phrase, an OR and a NOT mean what they did
    assert {h.file for h in near().search('"line width"').hits} == {"near.pdf", "adjacent.pdf"}
    assert [h.file for h in near().search("default AND NOT filler0").hits] == ["far.pdf"]
    assert {h.file for h in near().search("default OR width").hits} == {"near.pdf", "far.pdf", "adjacent.pdf"}


def test_proximity_must_not_be_negative(near):
    with pytest.raises(PluginError, match="proximity"):
        near(proximity=-1)


@pytest.mark.parametrize(("text", "found"), [
    ("the default line width", 2), ("width of the line, by default", 2), ("line-width", 1),
    ("outline widths by default", 0), ("line\nwidth", 1), ("the line is wide; width", 0),
])
def test_pairs_side_by_side(text, found):
    assert proximity.pairs_found(text, proximity.pairs(["default", "line", "width"])) == found


def test_ligatures_are_spelt_out_in_pages_and_queries():
    assert analyze("the conﬁguration ﬁle is ﬂoating, eﬀort and oﬃce") == \
        analyze("the configuration file is floating, effort and office")
    assert query_tokens("conﬁguration") == query_tokens("configuration")


def _ligature_pdf(path):  # noqa: ANN001, ANN202 - a text layer holding ligature characters, as TeX writes them
    import pymupdf

    path.parent.mkdir(parents=True, exist_ok=True)
    doc = pymupdf.open()
    page = doc.new_page()
    font = pymupdf.Font("tiro")  # MuPDF's own Times: it has the ﬁ ﬂ ﬀ glyphs
    page.insert_font(fontname="F0", fontbuffer=font.buffer)
    page.insert_text((72, 72), "Edit the conﬁguration ﬁle to set the ﬂoating point eﬀort.", fontname="F0", fontsize=11)
    doc.new_page().insert_text((72, 72), "Another page about the plot border.")
    doc.save(path)
    doc.close()
    return path


@pytest.mark.parametrize("name", ["whoosh", "tantivy"])
def test_a_text_layer_with_ligatures_is_stored_spelt_out_and_found(name, tmp_path, settings, registry):
    import pymupdf

    if name == "tantivy":
        pytest.importorskip("tantivy")
    pdf = _ligature_pdf(tmp_path / "docs" / "tex.pdf")
    assert "\ufb01" in pymupdf.open(pdf)[0].get_text()  # the PDF itself writes the ligature
    ingest(tmp_path / "docs", settings, registry, ocr="never")
    corpus = Corpus.open(tmp_path / "docs", settings.corpora_dir)
    assert "configuration file to set the floating point effort" in corpus.page_text("tex.pdf", 1)
    hits = registry.create("retriever", name, corpus, {}).search("configuration file", k=3).hits
    assert [(h.file, h.page) for h in hits] == [("tex.pdf", 1)]


def test_a_generation_stored_with_ligatures_reads_and_searches_spelt_out(tmp_path, settings, registry):
    """What an older madqa stored (ligatures in the page store, an index of analysis 3) is read spelt out
    and its index rebuilt with the current analysis on first open, without reading the PDFs again."""
    import json
    import sqlite3

    from madqa.corpus import PAGES_DB
    from madqa_plugins.whoosh import whoosh_bm25

    make_pdf(tmp_path / "docs" / "old.pdf", ["Edit the configuration file first.", "The plot border."])
    ingest(tmp_path / "docs", settings, registry, ocr="never")
    corpus = Corpus.open(tmp_path / "docs", settings.corpora_dir)
    with sqlite3.connect(corpus.gen_dir / PAGES_DB) as db:
        db.execute("UPDATE pages SET text=? WHERE page=1", ("Edit the conﬁguration ﬁle ﬁrst.",))
    (corpus.retriever_dir("whoosh") / whoosh_bm25.MARKER).write_text(json.dumps({"analysis": 3}), encoding="utf-8")
    corpus.close()
    corpus = Corpus.open(tmp_path / "docs", settings.corpora_dir)
    assert corpus.page_text("old.pdf", 1) == "Edit the configuration file first."
    assert [p.text for p in corpus.iter_pages()][0] == "Edit the configuration file first."
    hits = registry.create("retriever", "whoosh", corpus, {}).search("configuration file", k=3).hits
    assert [(h.file, h.page) for h in hits] == [("old.pdf", 1)] and "configuration file" in hits[0].snippet
    marker = json.loads((corpus.retriever_dir("whoosh") / whoosh_bm25.MARKER).read_text(encoding="utf-8"))
    assert marker["analysis"] == 4


def test_stemmed_note_names_the_querys_own_variants():
    import madqa

    note = madqa.stemmed_note({"reports": ["report", "reporting", "reports"], "the": ["the"]})
    assert note == "no page matched exactly; matched stemmed variants (reports: report, reporting)"
    many = madqa.stemmed_note({f"w{i}": [f"v{i}"] for i in range(6)}, phrases_loosened=True, most=2)
    assert many.endswith("(w0: v0; w1: v1; …), phrases loosened to words")
    assert "query's words" in madqa.stemmed_note({})


def test_plural_and_article():
    from madqa.text import plural, with_article

    assert [plural(1, "search"), plural(2, "search"), plural(1, "config"), plural(3, "config")] == [
        "1 search", "2 searches", "1 config", "3 configs"]
    assert plural(2, "index", "indexes") == "2 indexes" and plural(1200, "page") == "1,200 pages"
    assert with_article("OpenAI") == "an OpenAI" and with_article("Gemini") == "a Gemini"
