"""The offline extractive baseline: question reading, span extraction per answer type, its
decisions (search again, never repeat, always answer when forced, deterministic), and a
held-out check through the real loop on fresh PDFs it has never seen."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pymupdf
import pytest

import madqa
from madqa.agent import Agent
from madqa.corpus import Corpus
from madqa.evaluation.metrics import anls_star
from madqa.index import ingest
from madqa.settings import Settings, load_config
from madqa.trace import Trace
from madqa_plugins.offline.offline_backend import OfflineBackend
from madqa_plugins.offline.offline_queries import candidate_queries
from madqa_plugins.offline.offline_question import analyze, split_parts
from madqa_plugins.offline.offline_reader import find_candidates
from madqa_plugins.offline.offline_spans import term_weights
from tests.conftest import DEMO_QUESTIONS

SEARCH = {"type": "function", "function": {"name": "search_documents"}}
ANSWER = {"type": "function", "function": {"name": "submit_answer"}}


def best(question: str, text: str) -> str:
    """The top candidate the extractor finds for ``question`` on one page of ``text``."""
    q = analyze(question)
    found = find_candidates(text, "doc.pdf", 1, q, term_weights(q, {}, 0))
    assert found, f"no candidate for {question!r}"
    return max(found, key=lambda c: c.score).value


# ------------------------------------------------------------------ reading the question


@pytest.mark.parametrize(("question", "kind"), [
    ("When was the contract signed?", "date"),
    ("In which year was the plant opened?", "year"),
    ("How much did the company pay for the licence?", "money"),
    ("What percentage of staff work remotely?", "percent"),
    ("How many branches does the bank have?", "number"),
    ("Who signed the agreement?", "person"),
    ("What is the order number on the delivery note?", "code"),
    ("What does GDPR stand for?", "expansion"),
    ("Which company supplied the turbines?", "org"),
    ("How long is the warranty?", "quantity"),
    ("What is the project called?", "phrase"),
])
def test_expected_answer_kind(question, kind):
    assert analyze(question).kind == kind


def test_content_words_drop_question_words_and_keep_names_numbers_and_quotes():
    q = analyze('What was the revenue of Acme Corp in 2024 for "Project Falcon"?')
    assert {"revenue", "Acme", "Corp", "2024"} <= set(q.terms)
    assert not {"What", "was", "the", "of", "in"} & set(q.terms)
    assert q.phrases == ("Project Falcon",)
    assert q.target == ("revenue",)


def test_compound_questions_split_and_share_their_lead_in():
    parts = split_parts("On invoice X-1, what is the net amount, and what is the VAT rate?")
    assert parts == ["On invoice X-1, what is the net amount?", "On invoice X-1, what is the VAT rate?"]
    assert split_parts("What is the invoice number?") == ["What is the invoice number?"]
    assert analyze("Which two cities host a plant?").count == 2


# ------------------------------------------------------------------ span extraction per type


def test_date_year_money_percent_and_number():
    memo = "Board memo\nThe new warehouse opened on 14 March 2019 in Ghent.\nIt cost EUR 2.4 million to build."
    assert best("When did the new warehouse open?", memo) == "14 March 2019"
    assert best("In which year did the warehouse open?", memo) == "2019"
    assert best("How much did the warehouse cost to build?", memo) == "EUR 2.4 million"
    report = "Staff survey\nParticipation reached 87% of all employees.\nThe survey covered 412 employees at 9 sites."
    assert best("What percentage of employees participated in the survey?", report) == "87%"
    assert best("How many sites did the survey cover?", report) == "9"


def test_person_name_and_label_value_pairs():
    letter = "Dear customer,\nour records are attached.\nSincerely,\nPrepared by: Ingrid Holm, Records Office"
    assert best("Who prepared the records?", letter) == "Ingrid Holm"
    form = "ORDER FORM\nOrder number: ORD-88213 Order date: 5 May 2022\nCustomer: Vantage Tools Ltd\nCarrier: DHL Express"
    assert best("What is the order number?", form) == "ORD-88213"
    assert best("When was the order placed?", form) == "5 May 2022"
    assert best("Which carrier ships the order?", form) == "DHL Express"


def test_table_cell_by_row_label_and_year_column():
    table = ("Key figures\nMetric 2022 2023 2024\nRevenue 1,200 1,450 1,730\nNet income 210 260 305\n"
             "Employees 50 61 70\nThe figures are audited.")
    assert best("What was the revenue in 2023?", table) == "1,450"
    assert best("How many employees were there in 2024?", table) == "70"
    assert best("What was net income in 2022?", table) == "210"


def test_acronym_expansion_and_short_phrase():
    manual = "Connectivity\nThe unit speaks the Simple Network Management Protocol (SNMP) on port 161."
    assert best("What does SNMP stand for?", manual) == "Simple Network Management Protocol"
    sheet = "Site details\nVenue: Old Corn Exchange, Main Hall\nCapacity: 400 seated"
    assert best("What is the venue?", sheet) == "Old Corn Exchange, Main Hall"


def test_the_question_own_words_are_never_the_answer():
    q = analyze("What was revenue in 2024?")
    values = {c.value for c in find_candidates("Revenue 2024 was 17.5 million", "d.pdf", 1, q, {"revenue": 1.0})}
    assert "2024" not in values


# ------------------------------------------------------------------ decisions


class FakeCorpus:
    """Just what the offline backend reads: page texts by (file, page)."""

    def __init__(self, pages: dict[tuple[str, int], str]) -> None:
        self.pages = pages
        self.documents = {f: SimpleNamespace(pages=p) for f, p in pages}
        self.page_count = len(pages)

    def page_text(self, file: str, page: int) -> str:
        return self.pages.get((file, page), "")

    def iter_pages(self):  # noqa: ANN201 - page records
        for (file, page), text in sorted(self.pages.items()):
            yield SimpleNamespace(file=file, page=page, text=text)


def shown(messages: list, query: str, n: int, pages: list[tuple[str, int]]) -> None:
    """Append what the loop appends after a search: the call, the tool text, the labelled pages."""
    messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{n}", "type": "function", "function": {"name": "search_documents",
                                                          "arguments": json.dumps({"query": query})}}]})
    messages.append({"role": "tool", "tool_call_id": f"c{n}",
                     "content": f"Found {len(pages)} pages\n" + "\n".join(f"- File: {f}, Page: {p}" for f, p in pages)})
    parts: list[dict] = []
    for f, p in pages:
        parts += [{"type": "text", "text": f"File: {f}, Page: {p}"},
                  {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]
    messages.append({"role": "user", "content": parts})


NOISE = {("a.pdf", 1): "Cafeteria menu\nSoup of the day and fresh bread.",
         ("b.pdf", 1): "Parking rules\nVisitors park in zone B.",
         ("c.pdf", 1): "Invoice\nInvoice number: INV-4471\nTotal due: USD 980.00"}


def test_first_decision_searches_the_content_words():
    backend = OfflineBackend(FakeCorpus(NOISE))
    decision = backend.decide([{"role": "system", "content": "s"},
                               {"role": "user", "content": "What is the total due on invoice INV-4471?"}],
                              [SEARCH, ANSWER], False)
    (call,) = decision.tool_calls
    assert call.name == "search_documents"
    assert call.arguments["query"] == "total due invoice INV-4471"
    assert "offline extractive baseline" in decision.text
    assert decision.usage == madqa.Usage(0, 0) and decision.cost_usd == 0.0


def test_searches_again_without_repeating_until_convincing_or_out_of_queries():
    backend = OfflineBackend(FakeCorpus(NOISE))
    messages = [{"role": "system", "content": "s"},
                {"role": "user", "content": "Who chaired the harbour safety committee in 2019?"}]
    queries = []
    for n in range(30):
        decision = backend.decide(messages, [SEARCH, ANSWER], False)
        call = decision.tool_calls[0]
        if call.name == "submit_answer":
            break
        queries.append(call.arguments["query"])
        shown(messages, call.arguments["query"], n, [("a.pdf", 1), ("b.pdf", 1)] if n == 0 else [])
    assert len(queries) >= 2, "nothing convincing on the first pages: it must search again"
    assert len({" ".join(q.lower().split()) for q in queries}) == len(queries), queries
    assert call.name == "submit_answer"


def test_answers_once_convinced_and_cites_the_page():
    backend = OfflineBackend(FakeCorpus(NOISE))
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "What is the total due on INV-4471?"}]
    shown(messages, "total due INV-4471", 0, [("a.pdf", 1), ("c.pdf", 1)])
    decision = backend.decide(messages, [SEARCH, ANSWER], False)
    assert decision.tool_calls[0].name == "submit_answer"
    assert decision.tool_calls[0].arguments == {"answer": ["USD 980.00"], "citations": [
        {"file": "c.pdf", "page": 1, "quote": "Total due: USD 980.00"}]}


def test_force_answer_always_answers_and_refuses_when_nothing_was_seen():
    backend = OfflineBackend(FakeCorpus(NOISE))
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "Who chaired the committee?"}]
    nothing = backend.decide(messages, [ANSWER], True)
    assert nothing.tool_calls[0].name == "submit_answer"
    assert nothing.tool_calls[0].arguments == {"answer": [], "citations": []}
    shown(messages, "chaired committee", 0, [("c.pdf", 1)])
    weak = backend.decide(messages, [ANSWER], True)
    assert weak.tool_calls[0].name == "submit_answer"


def test_decisions_are_deterministic():
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "What is the invoice number?"}]
    shown(messages, "invoice number", 0, [("a.pdf", 1), ("c.pdf", 1)])
    first = OfflineBackend(FakeCorpus(NOISE)).decide(messages, [SEARCH, ANSWER], False)
    again = OfflineBackend(FakeCorpus(NOISE)).decide(messages, [SEARCH, ANSWER], False)
    assert first == again
    assert first.tool_calls[0].arguments["answer"] == ["INV-4471"]


def test_query_plan_has_no_duplicates_and_uses_or_groups_and_synonyms():
    q = analyze("How many employees did Acme have in 2023?")
    plan = [query for query, _ in candidate_queries(q, term_weights(q, {}, 0))]
    assert plan[0] == "employees Acme 2023"
    assert any(" OR " in p for p in plan)
    assert any("staff" in p for p in plan)


def test_registered_as_the_offline_backend(registry):
    component = registry.get("backend", "offline")
    assert component.plugin == "madqa_plugins.offline.offline_backend"
    config = load_config("offline")
    assert (config.backend, config.model) == ("offline", "offline")
    with pytest.raises(madqa.SettingsError):
        registry.create("backend", "offline", "offline", {})  # made without its corpus


# ------------------------------------------------------------------ held out: fresh PDFs, the real loop


def _pdf(path: Path, lines: list[str | tuple[str, ...]]) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    y = 60.0
    for item in lines:
        if isinstance(item, tuple):  # a table row: one cell per column
            for n, cell in enumerate(item):
                page.insert_text((60 + n * 105 + (45 if n else 0), y), cell, fontsize=10)
            y += 18
        else:
            rest = page.insert_textbox(pymupdf.Rect(60, y, 540, y + 120), item, fontsize=10)
            y += 120 - rest + 6
    doc.save(path)
    doc.close()


HELD_OUT = [
    ("What is the invoice number of the Corvid Print Solutions invoice?", [["CPS-7781"]], "invoice_cps.pdf"),
    ("When is payment due for the Lakeside Dental Clinic invoice?", [["2 July 2021"]], "invoice_cps.pdf"),
    ("What is the total of the Corvid invoice?", [["EUR 4,312.50"], ["4,312.50"]], "invoice_cps.pdf"),
    ("What is the purchase order number on the Corvid invoice?", [["PO-5521"]], "invoice_cps.pdf"),
    ("What was the leakage rate in 2021?", [["12.9%"]], "utility_statistics.pdf"),
    ("How many customers did Meridian Water Utility serve in 2020?", [["119,950"]], "utility_statistics.pdf"),
    ("What was capital expenditure in 2022?", [["29.8"], ["EUR 29.8 million"]], "utility_statistics.pdf"),
    ("In which year was the leakage rate 14.2%?", [["2019"]], "utility_statistics.pdf"),
    ("Who sent the memo about the revised shift pattern?", [["Harriet Okonkwo"]], "memo_shifts.pdf"),
    ("What is the date of the revised shift pattern memo?", [["17 August 2023"]], "memo_shifts.pdf"),
    ("Who approved the change to the night shift?", [["Daniel Ferreira"]], "memo_shifts.pdf"),
    ("From which date does the new shift pattern apply?", [["4 September 2023"]], "memo_shifts.pdf"),
]


@pytest.fixture
def held_out_corpus(tmp_path: Path, registry) -> tuple[Corpus, Settings]:
    docs = tmp_path / "docs"
    docs.mkdir()
    _pdf(docs / "invoice_cps.pdf", [
        "Corvid Print Solutions GmbH, Hafenweg 3, Kiel", "INVOICE", "Invoice No.: CPS-7781",
        "Invoice date: 2 June 2021", "Customer: Lakeside Dental Clinic", "PO number: PO-5521",
        ("Item", "Qty", "Price", "Amount"), ("Brochures A5", "5,000", "0.42", "2,100.00"),
        ("Posters A1", "150", "9.75", "1,462.50"), ("Design work", "1", "750.00", "750.00"),
        "Total: EUR 4,312.50", "Payment due: 2 July 2021"])
    _pdf(docs / "utility_statistics.pdf", [
        "Meridian Water Utility - Operating statistics", ("Metric", "2019", "2020", "2021", "2022"),
        ("Water supplied (million m3)", "41.2", "40.8", "42.5", "43.9"),
        ("Customers served", "118,400", "119,950", "121,300", "123,020"),
        ("Leakage rate", "14.2%", "13.5%", "12.9%", "12.1%"),
        ("Capital expenditure (EUR million)", "22.4", "25.1", "31.7", "29.8"),
        "Leakage fell every year thanks to the district metering programme."])
    _pdf(docs / "memo_shifts.pdf", [
        "MEMORANDUM", "To: All site supervisors", "From: Harriet Okonkwo, Operations Director",
        "Date: 17 August 2023", "Subject: Revised shift pattern",
        "Starting on 4 September 2023, the night shift will end at 05:30 instead of 06:00. The change was approved "
        "by Daniel Ferreira after the consultation with the works council. Each site must nominate a shift "
        "coordinator by 25 August 2023."])
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    report = ingest(docs, settings, registry)
    assert report.files == 3 and not report.failures
    return Corpus.open(docs, settings.corpora_dir), settings


def test_held_out_questions_through_the_real_loop(held_out_corpus, registry):
    corpus, settings = held_out_corpus
    agent = Agent(corpus, load_config("offline"), registry, settings)
    results = []
    for n, (question, gold, file) in enumerate(HELD_OUT):
        row = Trace(question, agent.config, f"h{n}").consume(agent.run(question)).row()
        score = anls_star([a.lower() for a in row["answer"]], [[g.lower() for g in v] for v in gold])
        cited = {c["file"] for c in row["citations"]}
        results.append((score >= 0.5 and file in cited, question, row["answer"], row["iterations"]))
        assert row["model"] == "offline" and row["iterations"] <= agent.config.max_steps
        assert len({s["query"].lower() for s in row["search_history"]}) == len(row["search_history"])
        assert row["refusal"] == (not row["answer"])
    correct = sum(ok for ok, *_ in results)
    wrong = sum(1 for ok, _, answer, _ in results if answer and not ok)
    shown = "\n".join(f"{'ok ' if ok else 'BAD'} {q} -> {a} ({it} steps)" for ok, q, a, it in results)
    assert wrong == 0, shown  # precision first: what it cannot answer surely, it refuses
    assert correct >= 6, shown


def test_demo_questions_accuracy_floor(demo_corpus, demo_settings, registry):
    """A regression floor on the bundled demo questions: precision first (right / answered), then coverage."""
    agent = Agent(demo_corpus, load_config("offline"), registry, demo_settings)
    rows = [json.loads(line) for line in DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    correct = answered = steps = 0
    for row in rows:
        trace = Trace(row["question"], agent.config, row["id"]).consume(agent.run(row["question"]))
        answer = [a.lower() for a in trace.row()["answer"]]
        answered += bool(answer)
        correct += anls_star(answer, [[g.lower() for g in v] for v in row["answer_variants"]]) >= 0.5
        steps += trace.iterations
    assert correct >= 0.75 * answered, f"{correct} right of {answered} answered"
    assert correct >= 0.5 * len(rows), f"{correct}/{len(rows)} demo questions"
    assert steps / len(rows) <= agent.config.max_steps


def test_a_page_store_that_cannot_be_read_is_an_error_not_a_refusal():
    """Page texts the backend cannot read raise IndexDamagedError (the question's error), never '' (a refusal)."""
    from madqa_plugins.offline.offline_backend import corpus_stats

    class Damaged(FakeCorpus):
        def page_text(self, file: str, page: int) -> str:
            raise madqa.IndexDamagedError("the page store is damaged")

        def iter_pages(self):  # noqa: ANN201
            raise madqa.IndexDamagedError("the page store is damaged")

    with pytest.raises(madqa.IndexDamagedError):
        corpus_stats(Damaged(NOISE))
    backend = OfflineBackend(Damaged(NOISE))
    backend._stats = corpus_stats(FakeCorpus(NOISE))  # only the shown page fails to read
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "What is the total due on INV-4471?"}]
    shown(messages, "total due INV-4471", 0, [("c.pdf", 1)])
    with pytest.raises(madqa.IndexDamagedError):
        backend.decide(messages, [SEARCH, ANSWER], False)
