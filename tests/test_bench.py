"""The benchmark's pure parts: image-token rules against the providers' worked examples, word recovery,
and the corpus generator and query maker on a tiny corpus. No timings are asserted."""

from __future__ import annotations

import random

import pymupdf
import pytest

from bench import image_tokens
from bench.corpus import make_corpus, make_queries, page_counts
from bench.legibility import recovered_share
from bench.report import targets


@pytest.mark.parametrize("size,tokens", [((1024, 1024), 765), ((2048, 4096), 1105), ((512, 512), 255)])
def test_openai_tiles_matches_the_guide(size, tokens):
    assert image_tokens.openai_tiles(*size) == tokens


@pytest.mark.parametrize("size,patches", [((1024, 1024), 1024), ((1800, 2400), 1452)])
def test_openai_patches_matches_the_guide(size, patches):
    assert image_tokens.openai_patches(*size, multiplier=1) == patches
    assert image_tokens.openai_patches(*size) == round(patches * 1.62)


def test_anthropic_is_area_over_750_within_its_limits():
    assert image_tokens.anthropic(1000, 1000) == 1334  # ceil(1e6 / 750)
    assert image_tokens.anthropic(1092, 1092) == 1590  # the guide's table: ~1590
    assert image_tokens.anthropic(1700, 2200) <= 1600  # a 200-DPI Letter page is scaled down first


def test_gemini_tiles():
    assert image_tokens.gemini(384, 384) == 258
    assert image_tokens.gemini(600, 400) == 258
    assert image_tokens.gemini(1700, 2200) == 258 * 3 * 3
    assert set(image_tokens.tokens_per_page(900, 1200)) == set(image_tokens.SOURCES)


def test_recovered_share_counts_words_with_multiplicity():
    assert recovered_share("Revenue 2024 revenue", "REVENUE 2024") == pytest.approx(2 / 3)
    assert recovered_share("", "anything") == 1.0
    assert recovered_share("a b", "") == 0.0


def test_page_counts_sum_to_the_total():
    counts = page_counts(500, 20, random.Random(1))
    assert len(counts) == 20 and sum(counts) == 500 and min(counts) >= 1


def test_tiny_corpus_and_queries(tmp_path):
    make_corpus(tmp_path, pages=12, docs=3)
    pdfs = sorted(tmp_path.rglob("*.pdf"))
    assert len(pdfs) == 3 and sum(pymupdf.open(p).page_count for p in pdfs) == 12
    texts = [page.get_text() for p in pdfs for page in pymupdf.open(p)]
    queries = make_queries(texts, 40)
    assert len(queries) == 40 and all(q.strip() for q in queries)
    assert any(" OR " in q for q in queries) and any(q.startswith('"') for q in queries)


def test_targets_report_met_missed_and_unmeasured():
    result = {"ingest": {"pages_per_s": 350.0, "peak_rss_mb": 2000.0},
              "render": {"warm_ms_p50": 0.1, "warm_ms_p95": 0.2, "ref_ms_p50": 400.0, "cold_ms_p50": 50.0,
                         "budget_px": 1_200_000}}
    met = {t["target"]: t["met"] for t in targets(result)}
    assert met["ingest+index, text layer (pages/s)"] is True
    assert met["ingest peak memory (MB)"] is False
    assert met["repeated page vs reference (x faster)"] is True
    assert met["loop overhead (ms/step)"] is None


def test_a_corpus_is_the_same_made_in_one_process_or_two(tmp_path):
    make_corpus(tmp_path / "one", pages=20, docs=4)
    make_corpus(tmp_path / "two", pages=20, docs=4, workers=2)
    one, two = sorted((tmp_path / "one").rglob("*.pdf")), sorted((tmp_path / "two").rglob("*.pdf"))
    assert [p.name for p in one] == [p.name for p in two] and len(one) == 4
    for a, b in zip(one, two, strict=True):
        assert [pg.get_text() for pg in pymupdf.open(a)] == [pg.get_text() for pg in pymupdf.open(b)]


def test_plain_corpus_pages_read_back_as_text_with_the_generators_words(tmp_path):
    from bench.plain_pdf import make_plain_corpus, pdf_bytes

    make_plain_corpus(tmp_path, pages=30, docs=3)
    pdfs = sorted(tmp_path.rglob("*.pdf"))
    assert len(pdfs) == 3 and sum(pymupdf.open(p).page_count for p in pdfs) == 30
    words = [len(page.get_text().split()) for p in pdfs for page in pymupdf.open(p)]
    assert min(words) > 20 and sum(words) / len(words) > 150  # full pages of text, like bench/corpus.py's
    doc = pymupdf.open(stream=pdf_bytes([(300, 200, [(20, 30, 10, "a (tricky) back\\slash")])]), filetype="pdf")
    assert doc[0].get_text().strip() == "a (tricky) back\\slash" and doc[0].rect.width == 300


def test_search_identity_counts_the_queries_whose_results_differ():
    from bench.search_identity import compare

    a = {"whoosh": [["q1", [["a.pdf", 1, 2.5, "s"]], None], ["q2", [], "no page matches"]]}
    b = {"whoosh": [["q1", [["a.pdf", 1, 2.5, "s"]], None], ["q2", [["b.pdf", 3, 1.0, "t"]], None]]}
    assert compare(a, a) == ["whoosh: 2 queries, 2 identical (hits, scores, snippets, notes); 1 hits in all"]
    assert compare(a, b)[0].startswith("whoosh: 2 queries, 1 identical")
