"""Abbreviations mined from page text, stored at ingest, read back per corpus generation."""

from __future__ import annotations

import sqlite3

import pytest

from madqa.abbreviations import TABLE, mine
from madqa.corpus import PAGES_DB, Corpus
from madqa.index import ingest
from tests.conftest import make_pdf


@pytest.mark.parametrize("text, pairs", [
    ("Each visit ends with a Field Service Report (FSR) signed by the customer.", [("FSR", "Field Service Report")]),
    ("FSR (Field Service Report) forms are kept for ten years.", [("FSR", "Field Service Report")]),
    ("wear the required Personal Protective Equipment (PPE) at all times", [("PPE", "Personal Protective Equipment")]),
    ("destroyed by Electrostatic Discharge (ESD).", [("ESD", "Electrostatic Discharge")]),
    ("Earnings Before Interest and Taxes (EBIT) rose; Capital Expenditure (CapEx) fell.",
     [("EBIT", "Earnings Before Interest and Taxes"), ("CapEx", "Capital Expenditure")]),
    ("the Bank of England (BoE) said", [("BoE", "Bank of England")]),
    ("the annual general\nmeeting (AGM) of shareholders", [("AGM", "annual general meeting")]),
    ("the MTBF (mean time between failures) is 4,000 h", [("MTBF", "mean time between failures")]),
])
def test_definitions_in_both_orders_are_found(text, pairs):
    assert mine(text) == pairs


@pytest.mark.parametrize("text", [
    "Revenue in 2024 (EUR) rose.", "The firm is based in Texas (USA).", "Operating income (EBIT) was 15,005.",
    "Dr. Miriam Hollenbeck (CEO) attended.", "See page 3 (Table 2) and item (ii).", "Sales in the quarter (Q3).",
    "Unit price (EUR) 1,890.00", "ABC (see below) applies.", "Kestrel Dynamics (Germany) reported.",
])
def test_parentheses_that_define_nothing_are_not_pairs(text):
    assert mine(text) == []


def test_ingest_stores_pairs_and_carries_them_over_for_unchanged_files(tmp_path, settings, registry):
    docs = tmp_path / "docs"
    make_pdf(docs / "a.pdf", ["Each visit ends with a Field Service Report (FSR).", "No definitions here."])
    make_pdf(docs / "b.pdf", ["Wear Personal Protective Equipment (PPE)."])
    ingest(docs, settings, registry)
    first = Corpus.open(docs, settings.corpora_dir)
    assert first.abbreviations() == [("FSR", "Field Service Report", "a.pdf", 1),
                                     ("PPE", "Personal Protective Equipment", "b.pdf", 1)]
    make_pdf(docs / "b.pdf", ["Wear Personal Protective Equipment (PPE).", "Mean Time To Repair (MTTR)."])
    ingest(docs, settings, registry)
    second = Corpus.open(docs, settings.corpora_dir)
    assert second.generation != first.generation
    assert [r[0] for r in second.abbreviations()] == ["FSR", "PPE", "MTTR"]


def test_a_generation_without_the_table_is_mined_when_asked(tmp_path, settings, registry):
    docs = tmp_path / "docs"
    make_pdf(docs / "a.pdf", ["A Field Service Report (FSR) is written per visit."])
    ingest(docs, settings, registry)
    corpus = Corpus.open(docs, settings.corpora_dir)
    with sqlite3.connect(corpus.gen_dir / PAGES_DB) as db:  # as an ingest before this table existed left it
        db.execute(f"DROP TABLE {TABLE}")
    assert Corpus.open(docs, settings.corpora_dir).abbreviations() == [("FSR", "Field Service Report", "a.pdf", 1)]
    make_pdf(docs / "b.pdf", ["Nothing."])
    ingest(docs, settings, registry)  # a.pdf is copied from the old generation: its pairs are mined then
    assert Corpus.open(docs, settings.corpora_dir).abbreviations() == [("FSR", "Field Service Report", "a.pdf", 1)]
