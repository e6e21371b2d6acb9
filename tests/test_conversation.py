"""Follow-up questions: the context text, the standalone rewrite, and what the loop sends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

import madqa
from madqa import backend_capabilities
from madqa.agent import ASKED_AS, Agent
from madqa.conversation import (
    CONTEXT_HEAD,
    ChatTurn,
    add_turn,
    conversation_context,
    next_question,
    standalone_question,
)
from madqa.plugins import collect, get_plugin_manager
from madqa.settings import load_config
from madqa.trace import Trace
from madqa.types import AnswerStep, PageRef
from madqa_plugins.scripted import ScriptedBackend
from tests.conftest import DEMO_DOCS, REPO


def answered(question: str, answer: str, file: str = "r.pdf", page: int = 1, quote: str | None = None,
             turns: tuple[ChatTurn, ...] = ()) -> tuple[ChatTurn, ...]:
    step = AnswerStep(2, (answer,), (PageRef(file, page),), quotes=(quote,))
    return add_turn(turns, question, step)


@pytest.mark.parametrize(("earlier", "follow_up", "expected"), [
    ("What was the revenue in 2024?", "and in 2023?", "What was the revenue in 2023?"),
    ("What was the revenue in 2024?", "What about 2022?", "What was the revenue in 2022?"),
    ("What VAT rate is applied on invoice WF-2024-0817?", "and on WF-2024-0901?",
     "What VAT rate is applied on invoice WF-2024-0901?"),
    ("What was Kestrel Dynamics' revenue in 2024?", "and Acme Corp?", "What was Acme Corp revenue in 2024?"),
    ("What was the revenue in 2024?", "and the EBIT?", "What was the revenue in 2024 (EBIT)?"),
    ("What was the revenue in 2024?", "How many staff did the company have at the end of 2024?",
     "How many staff did the company have at the end of 2024?"),  # a full question stands alone
])
def test_standalone_question_takes_the_follow_ups_changes(earlier, follow_up, expected):
    assert standalone_question(answered(earlier, "x"), follow_up) == expected


def test_standalone_builds_on_the_last_standalone_question():
    turns = answered("What was the revenue in 2024?", "7.5")
    turns = answered("and in 2023?", "7.1", turns=turns)
    assert turns[-1].standalone == "What was the revenue in 2023?"
    assert standalone_question(turns, "and 2022?") == "What was the revenue in 2022?"
    assert standalone_question((), "and 2022?") == "and 2022?"  # no earlier turn: as typed


def test_context_names_earlier_turns_their_pages_and_quotes_and_is_bounded():
    turns: tuple[ChatTurn, ...] = ()
    for year in range(2015, 2025):
        turns = answered(f"What was the revenue in {year}?", f"{year} million", "fin/report.pdf", year - 2010,
                         quote=f"Revenue in {year} was high", turns=turns)
    text = conversation_context(turns)
    assert text.startswith(CONTEXT_HEAD) and "show_pages" in text
    assert "File: fin/report.pdf, Page: 14" in text and '"Revenue in 2024 was high"' in text
    assert "2020 million" not in text  # only the last turns
    assert len(conversation_context(turns, max_chars=400)) <= 400
    assert "2024 million" in conversation_context(turns, max_chars=400)  # the newest kept first


def test_a_failed_turn_is_said_not_passed_as_an_answer():
    turns = add_turn((), "What was the revenue in 2024?", None)
    assert "the run failed" in conversation_context(turns)


def test_next_question_per_backend_kind():
    turns = answered("What was the revenue in 2024?", "7.5")
    reading = next_question(turns, "and in 2023?", True)
    assert reading.question == "and in 2023?" and reading.context and "Q1: What was the revenue" in reading.context
    plain = next_question(turns, "and in 2023?", False)
    assert plain.question == "What was the revenue in 2023?" and plain.context is None
    assert next_question((), "Hi?", True).context is None


class ReadingScripted(ScriptedBackend):
    reads_conversation = True


class ReadingPlugin:
    @madqa.hookimpl
    def register_backends(self, register: madqa.Register) -> None:
        register("reading-scripted", lambda host, options: ReadingScripted(options["script"]), "test", takes_host=True)


def test_the_loop_sends_the_earlier_turns_to_a_backend_that_reads_them(corpus, settings):
    pm = get_plugin_manager(entry_points=False)
    pm.register(ReadingPlugin())
    registry = collect(pm)
    assert backend_capabilities(registry.create("backend", "reading-scripted", "m", {"script": []})).reads_conversation
    assert not backend_capabilities(registry.create("backend", "scripted", "m", {"script": []})).reads_conversation
    turns = answered("What was the revenue in 2024?", "7.5 million", "report.pdf", 1, quote="Revenue in 2024")
    config = load_config("offline").with_overrides(backend="reading-scripted")
    script: list[dict[str, Any]] = [{"answer": ["x"], "citations": []}]
    agent = Agent(corpus, config, registry, settings, {"script": script})
    trace = Trace("and in 2023?", config).consume(agent.run("and in 2023?", conversation=turns))
    assert not any(f.startswith(ASKED_AS) for f in trace.steps[-1].flags)  # asked as typed
    messages = agent.backend.calls[0]["messages"]
    assert [m["role"] for m in messages[:3]] == ["system", "user", "user"]
    assert "Q1: What was the revenue in 2024?" in messages[1]["content"]
    assert "File: report.pdf, Page: 1" in messages[1]["content"] and messages[2]["content"] == "and in 2023?"


def test_a_backend_that_reads_no_context_gets_the_standalone_question(corpus, registry, settings):
    turns = answered("What was the revenue in 2024?", "7.5 million")
    config = load_config("offline").with_overrides(backend="scripted")
    agent = Agent(corpus, config, registry, settings, {"script": [{"answer": ["x"], "citations": []}]})
    trace = Trace("and in 2023?", config).consume(agent.run("and in 2023?", conversation=turns))
    users = [m["content"] for m in agent.backend.calls[0]["messages"] if m["role"] == "user"]
    assert users == ["What was the revenue in 2023?"]
    assert trace.steps[-1].flags[0] == f"{ASKED_AS}What was the revenue in 2023?"  # said, not hidden



def test_a_question_that_stands_alone_after_an_answer_is_not_flagged_as_a_follow_up(corpus, registry, settings):
    """A new full question after an answer is sent as typed; the answer said "a follow-up, asked as a standalone
    question: <the same question>", as if the earlier turns had changed it."""
    turns = answered("What was the revenue in 2024?", "7.5 million")
    config = load_config("offline").with_overrides(backend="scripted")
    agent = Agent(corpus, config, registry, settings, {"script": [{"answer": ["x"], "citations": []}]})
    question = "What is the delivery deadline for order PO-7731?"
    trace = Trace(question, config).consume(agent.run(question, conversation=turns))
    users = [m["content"] for m in agent.backend.calls[0]["messages"] if m["role"] == "user"]
    assert users == [question]
    assert not any(f.startswith(ASKED_AS) for f in trace.steps[-1].flags)

def test_offline_follow_up_on_the_demo(demo_corpus, demo_settings, registry):
    """The offline baseline answers "and in 2024?" after the 2023 turnover question (page 9: 6.8% in 2024, 8.1% in 2023)."""
    agent = Agent(demo_corpus, load_config("offline"), registry, demo_settings)
    first = Trace("q", agent.config).consume(agent.run("What was the employee turnover rate in 2023?"))
    step = first.steps[-1]
    assert isinstance(step, AnswerStep) and step.answer == ("8.1%",)
    turns = add_turn((), "What was the employee turnover rate in 2023?", step)
    follow = Trace("q", agent.config).consume(agent.run("and in 2024?", conversation=turns))
    last = follow.steps[-1]
    assert isinstance(last, AnswerStep) and last.answer == ("6.8%",)
    assert last.citations and last.citations[0].page == step.citations[0].page


def test_madqa_chat_answers_a_follow_up_and_starts_over(demo_corpus, demo_settings):
    """Two lines and /new fed to `madqa chat` on the demo with the offline baseline: the follow-up answers
    from the same page; after /new the same follow-up has nothing to build on."""
    lines = "What was the employee turnover rate in 2023?\nand in 2024?\n/new\nand in 2024?\n"
    env = {**os.environ, "MADQA_HOME": str(demo_settings.home), "PYTHONPATH": str(REPO),
           "MADQA_CONFIG": "offline"}
    proc = subprocess.run([sys.executable, "-m", "madqa", "chat", "--corpus", str(DEMO_DOCS)], input=lines,
                          capture_output=True, text=True, cwd=REPO, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    answers = [line for line in proc.stdout.splitlines() if line.startswith("ANSWER:")]
    assert answers[:2] == ["ANSWER: 8.1%", "ANSWER: 6.8%"], proc.stdout
    assert f"flag: {ASKED_AS}What was the employee turnover rate in 2024?" in proc.stdout
    assert "(a new conversation)" in proc.stdout and len(answers) == 3
    assert proc.stdout.count(ASKED_AS) == 1  # after /new, "and in 2024?" is asked as typed


def test_multi_turn_question_set_runs_turns_in_order_each_its_own_row(demo_corpus, demo_settings, registry,
                                                                      tmp_path):
    from madqa.evaluation.questions import load_questions
    from madqa.evaluation.runner import read_done, run_batch, score_row

    file = tmp_path / "turns.jsonl"
    records = [
        {"id": "t2", "question": "and in 2024?", "conversation_id": "staff", "turn": 2,
         "answer_variants": [["6.8%"]]},
        {"id": "solo", "question": "What was the equity ratio at 31 December 2024?", "answer_variants": [["56.9%"]]},
        {"id": "t1", "question": "What was the employee turnover rate in 2023?", "conversation_id": "staff",
         "turn": 1, "answer_variants": [["8.1%"]]},
        {"id": "t1-again", "question": "x?", "conversation_id": "staff", "turn": 1},
        {"id": "bad", "question": "y?", "turn": 0},
    ]
    file.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    questions, problems = load_questions(file, unique_ids=True)
    assert [q["id"] for q in questions] == ["t2", "solo", "t1"]
    assert any("line 4" in p and "turn 1 of conversation 'staff'" in p for p in problems)
    assert any("line 5" in p and "'turn'" in p and "'conversation_id'" in p for p in problems)
    out = tmp_path / "pred.jsonl"
    rows = run_batch(questions, demo_corpus, load_config("offline"), registry, demo_settings, out_path=out)
    by_id = {r["id"]: r for r in rows}
    assert [r["id"] for r in rows] == ["t1", "t2", "solo"]  # turn 1 first: the conversation's order
    assert (by_id["t2"]["conversation_id"], by_id["t2"]["turn"]) == ("staff", 2) and "turn" not in by_id["solo"]
    assert by_id["t2"]["question"] == "and in 2024?"  # the row keeps the question as asked
    gold = {q["id"]: q for q in questions}
    assert all(score_row(r, gold[r["id"]]) for r in rows)  # each turn scored alone, against its own gold

    # resumed with turn 2 missing: turn 1's kept row is the conversation it follows
    kept, _, _ = read_done(out)
    out.write_text("".join(json.dumps(r) + "\n" for r in kept if r["id"] != "t2"), encoding="utf-8")
    again = run_batch(questions, demo_corpus, load_config("offline"), registry, demo_settings, out_path=out,
                      resume=True)
    assert {r["id"]: r["answer"] for r in again}["t2"] == ["6.8%"] and len(again) == 3
