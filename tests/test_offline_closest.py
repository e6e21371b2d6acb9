"""Issue 29: the offline reader answers only when sure; otherwise it offers the closest passages.

Typed answers take candidates of their own type only; a refusal carries the pages and lines that
came closest (``closest_passages``), checked on their pages by the loop, shown in the chat with the
lines highlighted, and never scored as an answer."""

from __future__ import annotations

import json
from dataclasses import replace

import pymupdf

from madqa.agent import Agent
from madqa.answer import read_passages
from madqa.highlight import locate, text_layer_words
from madqa.settings import load_config
from madqa.trace import Trace
from madqa.types import AnswerStep, ItemCheck, PageRef, Passage
from madqa.ui.messages import answer_message, citation_marks
from madqa_plugins.offline.offline_backend import OfflineBackend
from madqa_plugins.offline.offline_question import analyze
from madqa_plugins.offline.offline_reader import find_candidates
from madqa_plugins.offline.offline_spans import term_weights
from tests.test_offline_backend import ANSWER, SEARCH, FakeCorpus, shown


def values(question: str, text: str) -> list[str]:
    """Every candidate value the reader proposes for ``question`` on one page of ``text``, best first."""
    q = analyze(question)
    found = find_candidates(text, "doc.pdf", 1, q, term_weights(q, {}, 0))
    return [c.value for c in sorted(found, key=lambda c: -c.score)]


# ------------------------------------------------------------------ answer types


def test_a_port_is_never_a_piece_of_a_url():
    text = "The server listens on port 8443 by default.\nDocs: https://example.org/2021/guide/443/index.html"
    assert analyze("Which port does the server listen on?").kind == "port"
    found = values("Which port does the server listen on?", text)
    assert found[0] == "8443"
    assert "2021" not in found and "443" not in found


def test_a_count_is_a_whole_number_never_a_date_or_a_version():
    text = "Release 5.4 (12 March 2021) samples the function at 100 points by default."
    found = values("How many points does it sample the function at?", text)
    assert "5.4" not in found and "12" not in found and "2021" not in found
    assert found[0] in ("100", "100 points")


def test_a_factor_is_a_multiple_not_a_percentage():
    text = "The new engine is 3.5x faster than before; memory use fell by 12%."
    assert analyze("What speed-up factor does the new engine give?").kind == "factor"
    assert values("What speed-up factor does the new engine give?", text)[0] == "3.5x"
    assert "12%" not in values("What speed-up factor does the new engine give?", text)


def test_a_person_is_a_name_not_a_product():
    text = "The manual was written by Alice Hartmann for PlotMaster Pro."
    found = values("Who wrote the manual?", text)
    assert found[0] == "Alice Hartmann"
    assert "PlotMaster Pro" not in found


def test_an_isbn_is_a_code():
    assert analyze("What is the ISBN of the dictionary?").kind == "code"


# ------------------------------------------------------------------ refusing with the closest passages

PAGES = {("manual.pdf", 4): "Network settings\nThe proxy forwards requests to the backend pool.\n"
                            "Timeouts are set per backend in the pool section.",
         ("manual.pdf", 9): "Index\nbackend, 4\nproxy, 4"}


def test_a_refusal_offers_the_matching_lines_of_the_pages_read():
    backend = OfflineBackend(FakeCorpus(PAGES), abstain_threshold=0.99)
    messages = [{"role": "system", "content": "s"},
                {"role": "user", "content": "How many seconds does the proxy wait for the backend pool?"}]
    shown(messages, "proxy backend pool", 0, [("manual.pdf", 4), ("manual.pdf", 9)])
    decision = backend.decide(messages, [SEARCH, ANSWER], True)
    args = decision.tool_calls[0].arguments
    assert args["answer"] == [] and args["citations"] == []
    first = args["closest_passages"][0]
    assert (first["file"], first["page"]) == ("manual.pdf", 4)
    assert "The proxy forwards requests to the backend pool." in first["lines"]
    assert all(line in PAGES[("manual.pdf", 4)] for line in first["lines"])
    assert "closest passages on manual.pdf p.4" in decision.text


def test_the_loop_keeps_only_passages_on_pages_seen_and_lines_on_their_page():
    corpus = FakeCorpus(PAGES)
    corpus.has_page = lambda file, page: (file, page) in PAGES  # type: ignore[attr-defined]
    payload = {"answer": [], "closest_passages": [
        {"file": "manual.pdf", "page": 4, "lines": ["The proxy forwards requests to the backend pool.",
                                                    "A line that is on no page."]},
        {"file": "manual.pdf", "page": 9, "lines": ["backend, 4"]},  # never shown
        {"file": "manual.pdf", "page": "4", "lines": ["proxy"]},  # malformed
    ]}
    kept = read_passages(payload, corpus, {PageRef("manual.pdf", 4)})
    assert kept == (Passage("manual.pdf", 4, ("The proxy forwards requests to the backend pool.",)),)


def test_a_closest_passages_result_is_a_refusal_in_the_row_and_the_chat(demo_corpus, demo_settings, registry):
    config = load_config("offline").with_overrides(options={"backend": {"abstain_threshold": 0.999}})
    agent = Agent(demo_corpus, config, registry, demo_settings)
    question = "What VAT rate is applied on invoice WF-2024-0817?"
    trace = Trace(question, config, "q1").consume(agent.run(question))
    row = trace.row()
    assert row["answer"] == [] and row["refusal"] is True and row["citations"] == []
    assert row["closest_passages"], "a refusal after reading pages offers its closest passages"
    passage = row["closest_passages"][0]
    assert passage["file"] == "finance/invoice_wf_2024_0817.pdf" and passage["lines"]
    json.dumps(row)  # the row stays plain JSON
    message = answer_message(trace.answer, "demo")
    assert "closest passages" in message["content"]
    value = message["options"][0]["value"]
    quotes, _ = citation_marks(value)
    assert quotes == passage["lines"]
    pdf = pymupdf.open(demo_corpus.root / passage["file"])
    boxes, missing = locate(text_layer_words(pdf[passage["page"] - 1]), quotes)
    assert boxes and not missing, "the matching lines are highlighted on the page"


def test_an_answer_says_what_was_checked_the_quote_and_the_answer_apart():
    step = AnswerStep(1, ("19%",), (PageRef("a.pdf", 1),), quotes=("VAT 19%",), quotes_found=(True,))
    text = answer_message(step, "demo")["content"]
    assert "quote found on the page" in text and "answer found" not in text  # no check made: no answer mark
    checked = replace(step, checks=(ItemCheck("19%", "cited", PageRef("a.pdf", 1)),))
    assert "✓ answer found on p. 1" in answer_message(checked, "demo")["content"]
    wrong = replace(step, checks=(ItemCheck("19%", "unseen"),))
    text = answer_message(wrong, "demo")["content"]
    assert "✗ answer not on the cited page" in text and "✓ answer" not in text


# ------------------------------------------------------------------ tables of words, word forms


def test_a_table_of_words_is_read_by_row_and_column():
    """The cell at the row the question names and the column it asks for (cells set apart by gaps,
    as the text-layer reader lays out a table), not the same kind of cell on another row."""
    page = ("Table 3: units with special names\n"
            "Name  Expression in  Symbol  Expression in\n"
            "SI base units  SI derived units\n"
            "newton  m kg s-2  N  m kg s-2\n"
            "pascal  m-1 kg s-2  Pa  N m-2\n"
            "weber  m2 kg s-2 A-1  Wb  m2 kg s-2 A-1\n"
            "tesla  kg s-2 A-1  T  Wb m-2\n")
    assert values("What is the symbol of the unit weber?", page)[0] == "Wb"
    assert values("What is the symbol of the unit pascal?", page)[0] == "Pa"


def test_a_past_participle_stems_as_its_present_does():
    from madqa_plugins.offline.offline_spans import stem

    assert stem("applied") == stem("applies") == stem("apply")
    assert stem("carried") == stem("carries")


def test_the_cli_prints_a_refusal_with_its_closest_passages():
    from madqa.cli.common import describe_step

    step = AnswerStep(2, (), (), refusal=True,
                      closest_passages=(Passage("finance/invoice.pdf", 1, ("VAT 19%  2,149.66",)),))
    text = describe_step(step)
    assert "(no answer: refusal)" in text
    assert "closest passage, finance/invoice.pdf p.1: VAT 19%  2,149.66" in text


def test_a_two_column_table_gives_the_setting_of_the_row_asked():
    """A table of two columns (a term and its setting) is read like any table of words: the cell on
    the row the question names, under the column it asks for; the prose below it is no row."""
    page = ("Options  Initial values\n"
            "\\gutterwidth  2em\n"
            "\\captionskip  \\medskipamount\n"
            "\\figurerule  0.4pt\n"
            "Table 2: Layout parameters\n"
            "\\gutterwidth is the space between the two columns of the layout.\n")
    assert values("What is the initial value of \\captionskip?", page)[0] == "\\medskipamount"
    assert values("What is the initial value of \\figurerule?", page)[0] == "0.4pt"


def test_a_header_split_over_lines_and_wrapped_cells_keep_their_columns():
    """A header whose last word sits on a line of its own ("Code" under "Station"), and rows whose
    cells wrap onto a one-cell line, still give each cell its column; a one-letter cell is a cell
    (its gap is not swallowed by the next one); the header line itself is never an answer, nor a
    span joining two cells."""
    page = ("Gauge stations  Km  Station  River  Operator\n"
            "Code\n"
            "A  12  GX-4  Lower Aare  Canton Aargau\n"
            "B  27  FR-9  Saane, upper  Canton Fribourg\n"
            "reach\n"
            "C  41  BE-2  Emme  Canton Bern\n")
    q = "What is the station code of the gauge at km 27?"
    assert values(q, page)[0] == "FR-9"
    assert values("At which km is the gauge on the Emme?", page)[0] == "41"
    assert not any("  " in v or v in ("Km", "Station", "River", "Operator", "Code") for v in values(q, page)[:5])


def test_a_header_abbreviation_names_the_asked_attribute():
    from madqa_plugins.offline.offline_question import analyze
    from madqa_plugins.offline.offline_spans import label_match

    q = analyze("At which position is the glyph Anchor?")
    assert label_match("Pos", q) >= 0.8 and label_match("Chr", q) == 0


def test_the_kind_of_file_asked_for_picks_its_extension():
    from madqa_plugins.offline.offline_codes import file_kind_fit

    page = ("The distribution ships sample.cfg as a template and a font map file, extra.map, for dvips;\n"
            "copy the configuration file site.cfg to your home directory.")
    assert values("Which map file does the distribution ship for dvips?", page)[0] == "extra.map"
    assert file_kind_fit("site.cfg", {"configur", "file"}) == 1.0 or file_kind_fit("site.cfg", {"configuration"}) == 1.0
    assert file_kind_fit("extra.map", {"configuration"}) == 0.6
    assert file_kind_fit("extra.map", {"file"}) == 1.0  # no kind named: every file fits


def test_a_code_named_by_what_it_encodes_is_a_code():
    from madqa_plugins.offline.offline_question import analyze

    assert analyze("What is Norway's ISO currency code in the conversion table?").kind == "code"
    assert analyze("Which exit code does the tool return on a bad option?").kind == "code"
    assert analyze("Where does the source code live?").kind != "code"
