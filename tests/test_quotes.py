"""Supporting quotes: carried per citation, checked against the cited page's text (text layer and
OCR), flagged when not there, written into prediction rows the official harness still reads, and
counted by ``madqa eval``."""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest

from madqa.agent import ANSWER_TOOL, SYSTEM_PROMPT, Agent
from madqa.answer import match_key, normalize_citations, quote_on_page
from madqa.corpus import Corpus
from madqa.evaluation.metrics import anls_star
from madqa.evaluation.report import evaluate, format_table
from madqa.index import ingest
from madqa.settings import load_config
from madqa.trace import Trace
from tests.conftest import make_pdf, make_scanned_pdf


@pytest.fixture
def corpus(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "fin" / "report.pdf", ["Revenue in 2024 was 7.5 million euros, up from 6.9 million.",
                                           "Headcount was 120 employees."])
    doc = pymupdf.open()  # a word hyphenated at a line break, as real text layers have them
    page = doc.new_page()
    page.insert_text((72, 100), "The FINAL settle-", fontsize=12)
    page.insert_text((72, 116), "ment was paid in March.", fontsize=12)
    doc.save(root / "hyphen.pdf")
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir)


def run(corpus, registry, settings, script, question="What was the revenue in 2024?"):
    config = load_config("offline").with_overrides(backend="scripted")
    agent = Agent(corpus, config, registry, settings, {"script": script})
    return Trace(question, config, "q1").consume(agent.run(question))


# ------------------------------------------------------------------ normalisation


def test_matching_ignores_case_whitespace_ligatures_and_hyphenation():
    page = "The ﬁnal settle-\nment   was PAID\nin March."
    assert quote_on_page("the final settlement was paid in march", page)
    assert quote_on_page("The  final\tsettlement was paid", page)
    assert not quote_on_page("the final settlement was refused", page)
    assert not quote_on_page("   ", page) and not quote_on_page("...", page)  # nothing to look for
    assert match_key("Eﬀective ﬁle") == "effectivefile"


def test_citations_keep_a_trimmed_quote_and_flag_odd_ones():
    cites, flags = normalize_citations([
        {"file": "a.pdf", "page": 1, "quote": "  Revenue   was\n7.5 million "},
        {"file": "a.pdf", "page": 2, "quote": 42},
        {"file": "a.pdf", "page": 3, "quote": "x" * 500},
        {"file": "a.pdf", "page": 4},
    ])
    assert cites[0] == {"file": "a.pdf", "page": 1, "quote": "Revenue was 7.5 million"}
    assert "quote" not in cites[1] and "quote" not in cites[3] and len(cites[2]["quote"]) == 400
    assert any("type int" in f for f in flags) and any("cut to 400" in f for f in flags)


def test_the_model_is_asked_for_a_short_exact_quote():
    item = ANSWER_TOOL["function"]["parameters"]["properties"]["citations"]["items"]
    assert "quote" in item["properties"] and "quote" in item["required"]
    assert "verbatim" in item["properties"]["quote"]["description"]
    assert '"quote"' in SYSTEM_PROMPT and "verbatim" in SYSTEM_PROMPT


# ------------------------------------------------------------------ the loop checks quotes


def test_a_quote_on_the_cited_page_is_verified_and_written_into_the_row(corpus, registry, settings):
    trace = run(corpus, registry, settings, [
        {"search": "revenue 2024"},
        {"answer": ["7.5 million euros"],
         "citations": [{"file": "fin/report.pdf", "page": 1, "quote": "revenue in 2024 was 7.5 MILLION euros"}]},
    ])
    row = trace.row()
    assert row["citations"] == [{"file": "fin/report.pdf", "page": 1, "quote": "revenue in 2024 was 7.5 MILLION euros"}]
    assert row["quote_check"] == {"citations": 1, "quotes": 1, "verified": 1}
    assert not any("quote" in f for f in row["flags"])
    assert trace.answer.quotes_found == (True,)


def test_a_quote_on_no_page_is_flagged(corpus, registry, settings):
    trace = run(corpus, registry, settings, [
        {"search": "revenue"},
        {"search": "headcount"},
        {"answer": ["7.5 million"], "citations": [
            {"file": "fin/report.pdf", "page": 2, "quote": "Revenue in 2025 was 9.1 million"},  # on no page
            {"file": "fin/report.pdf", "page": 1},
        ]},
    ])
    row = trace.row()
    assert row["quote_check"] == {"citations": 2, "quotes": 1, "verified": 0}
    flag = next(f for f in row["flags"] if f.startswith("quote not found"))
    assert "fin/report.pdf, Page: 2" in flag and "Revenue in 2025" in flag
    assert "citation of fin/report.pdf p.1 carries no quote" in row["flags"]
    assert not any("moved" in f for f in row["flags"])
    assert row["citations"][1] == {"file": "fin/report.pdf", "page": 1}  # no quote given: no key
    answer = next(s for s in row["trajectory"] if s["type"] == "answer")
    assert answer["quotes_found"] == [False, None]


def test_a_citation_off_by_one_moves_to_the_page_its_quote_is_on(corpus, registry, settings):
    trace = run(corpus, registry, settings, [
        {"search": "revenue"},
        {"search": "headcount"},
        {"answer": ["7.5 million"], "citations": [
            {"file": "fin/report.pdf", "page": 2, "quote": "Revenue in 2024 was 7.5 million"},  # it is on p.1
        ]},
    ])
    row = trace.row()
    assert row["citations"] == [{"file": "fin/report.pdf", "page": 1, "quote": "Revenue in 2024 was 7.5 million"}]
    assert row["quote_check"] == {"citations": 1, "quotes": 1, "verified": 1}
    assert "citation moved from p.2 to p.1: its quote is on that page" in row["flags"]
    assert not any(f.startswith("quote not found") for f in row["flags"])


def test_a_hyphenated_text_layer_confirms_the_plain_quote(corpus, registry, settings):
    trace = run(corpus, registry, settings, [
        {"search": "paid March"},
        {"answer": ["March"], "citations": [{"file": "hyphen.pdf", "page": 1,
                                              "quote": "The final settlement was paid in March."}]},
    ], question="When was the final settlement paid?")
    assert trace.answer.citations and trace.answer.quotes_found == (True,)


def test_a_quote_is_checked_against_the_ocr_text_of_a_scanned_page(tmp_path, settings, registry):
    root = tmp_path / "scans"
    make_scanned_pdf(root / "scan.pdf", "Invoice 4471\nTotal amount due: 1,250.00 EUR\nPayable within 30 days.")
    ingest(root, settings, registry, ocr="auto")
    corpus = Corpus.open(root, settings.corpora_dir)
    assert corpus.page_source("scan.pdf", 1) == "ocr"
    trace = run(corpus, registry, settings, [
        {"search": "total amount due"},
        {"answer": ["1,250.00 EUR"], "citations": [{"file": "scan.pdf", "page": 1,
                                                     "quote": "Total amount due: 1,250.00 EUR"}]},
    ], question="What is the total amount due?")
    assert trace.answer.quotes_found == (True,), corpus.page_text("scan.pdf", 1)


# ------------------------------------------------------------------ the files that leave


def official_read(path: Path, gold: list[dict]) -> list[dict]:
    """The official harness's reading of a prediction file (OxRML/MADQA eval/evaluate.py, re-stated):
    every non-blank line is ``json.loads``-ed; a row matches gold by ``question.strip()`` then ``id``;
    it reads ``answer`` and ``citations``, and a citation's page key is ``(file or document, page)``
    for every citation whose file or document is not None."""
    by_text = {g["question"].strip(): g for g in gold}
    by_id = {g["id"]: g for g in gold}
    out = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            result = json.loads(line)
            g = by_text.get(result.get("question", "").strip()) or by_id.get(result.get("id", ""))
            if g is None:
                continue
            cites = result.get("citations", [])
            pred = {(c.get("file") or c.get("document"), c.get("page")) for c in cites
                    if (c.get("file") or c.get("document")) is not None}
            gold_pages = {(e["document"], e["page"]) for e in g["evidence"]}
            steps = len(result.get("search_history", [])) or result.get("iterations", 0)
            out.append({"anls": anls_star(result.get("answer", ""), g["answer_variants"]),
                        "pages": pred, "tp": len(pred & gold_pages), "steps": steps})
    return out


def test_rows_with_quotes_still_read_by_the_official_harness(corpus, registry, settings, tmp_path):
    trace = run(corpus, registry, settings, [
        {"search": "revenue 2024"},
        {"answer": ["7.5 million euros"],
         "citations": [{"file": "fin/report.pdf", "page": 1, "quote": "Revenue in 2024 was 7.5 million euros"}]},
    ])
    path = tmp_path / "pred.jsonl"
    path.write_text(json.dumps(trace.row()) + "\n\n", encoding="utf-8")
    gold = [{"id": "q1", "question": "What was the revenue in 2024?", "answer_variants": [["7.5 million euros"]],
             "evidence": [{"document": "fin/report.pdf", "page": 1}]}]
    (read,) = official_read(path, gold)
    assert read == {"anls": 1.0, "pages": {("fin/report.pdf", 1)}, "tp": 1, "steps": 1}
    ours = evaluate([trace.row()], gold)["overall"]
    assert ours["accuracy"] == 1.0 and ours["page_f1"] == 1.0


def test_eval_reports_the_share_of_verified_quotes():
    gold = [{"id": f"q{i}", "question": f"Q{i}?", "answer_variants": [["a"]],
             "evidence": [{"document": "d.pdf", "page": 1}]} for i in range(4)]
    rows = [
        {"id": "q0", "question": "Q0?", "answer": ["a"], "citations": [{"file": "d.pdf", "page": 1, "quote": "x"}],
         "quote_check": {"citations": 1, "quotes": 1, "verified": 1}},
        {"id": "q1", "question": "Q1?", "answer": ["b"], "citations": [{"file": "d.pdf", "page": 1, "quote": "y"},
                                                                        {"file": "d.pdf", "page": 2, "quote": "z"}],
         "quote_check": {"citations": 2, "quotes": 2, "verified": 1}},
        {"id": "q2", "question": "Q2?", "answer": ["c"], "citations": [{"file": "d.pdf", "page": 1, "quote": "w"}],
         "quote_check": {"citations": 1, "quotes": 1, "verified": 0}},
        {"id": "q3", "question": "Q3?", "answer": [], "citations": [],
         "quote_check": {"citations": 0, "quotes": 0, "verified": 0}},
    ]
    overall = evaluate(rows, gold)["overall"]
    assert overall["quotes_verified"] == pytest.approx(2 / 4) and overall["quotes_n"] == 4
    assert overall["answers_with_verified_quote"] == pytest.approx(2 / 3)
    assert "quotes_verified" in format_table({"run": overall})
    no_check = evaluate([{k: v for k, v in r.items() if k != "quote_check"} for r in rows], gold)["overall"]
    assert no_check["quotes_verified"] is None and no_check["answers_with_verified_quote"] is None


def test_the_offline_backend_quotes_the_line_it_read(corpus, registry, settings):
    config = load_config("offline")
    agent = Agent(corpus, config, registry, settings)
    trace = Trace("How many employees were there?", config).consume(agent.run("How many employees were there?"))
    row = trace.row()
    assert row["answer"] == ["120"]
    assert row["citations"] == [{"file": "fin/report.pdf", "page": 2, "quote": "Headcount was 120 employees."}]
    assert row["quote_check"]["verified"] == 1

