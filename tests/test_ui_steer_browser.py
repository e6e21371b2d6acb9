"""Steer in headless Chromium: the agent's next tool call is shown before it runs, and a person approves it,
edits it, then answers in the model's place; the row scores against the demo question's gold answer.
Screenshots: ``test-artifacts/steer-<what>.png``."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from tests.browser_support import TIMEOUT_MS, Visitors, pytestmark, shot  # noqa: F401 - pytestmark marks the module

QUESTION = "What was the employee turnover rate in 2023?"


def test_steer_approve_edit_and_answer_and_the_row_scores(visitors: Visitors) -> None:
    page = visitors.open(1440, 900)
    page.locator("#ask-question textarea").fill(QUESTION)
    page.locator("#steer").get_by_text("Steer: see each tool call before it runs").click()
    page.locator("#steer-start").click()
    proposal = page.locator("#steer-proposal")
    expect(proposal).to_contain_text("search_documents", timeout=TIMEOUT_MS)  # shown before it runs
    chat = page.locator("#steer-chat")
    expect(chat).not_to_contain_text("Search 1")  # nothing searched yet
    calls = page.locator("#steer-calls textarea")
    calls.fill(json.dumps([{"name": "search_documents", "arguments": {"query": "zebra xylophone"}}]))
    page.locator("#steer-edit").click()  # edit: the person's query runs instead of the model's
    expect(chat).to_contain_text("edited the model's call")
    expect(chat).to_contain_text("Search 1: zebra xylophone")
    expect(proposal).to_contain_text("step 2")  # nothing found: the model proposes its own search again
    expect(proposal).to_contain_text("search_documents")
    page.locator("#steer-approve").click()  # approve: the model's search runs as proposed
    expect(chat).to_contain_text("approved the model's call")
    expect(proposal).to_contain_text("step 3")
    expect(proposal).to_contain_text("submit_answer")
    shot(page, "steer-proposal-1440")
    page.locator("#steer-answer textarea").fill("8.1%")
    page.locator("#steer-citations textarea").fill("finance/annual_report_2024.pdf, 9")
    page.locator("#steer-answer-button").click()  # answer: the person answers in the model's place
    expect(chat).to_contain_text("answered in the model's place")
    expect(chat).to_contain_text("Answered by the person beside the agent (Steer)")  # not the model's badge
    score = page.locator("#steer-score")
    expect(score).to_contain_text("right")
    expect(score).to_contain_text("2 changes by you")
    expect(proposal).to_contain_text("Done")
    expect(page.locator("#steer-approve")).to_be_disabled()
    expect(page.locator("#steer-rows").get_by_role("cell", name="steered.jsonl")).to_be_visible()
    shot(page, "steer-answered-1440")
    # the steered row scores in Evaluate, with the same report as a run of the tab
    page.get_by_role("tab", name="Evaluate").click()
    page.locator("#eval-score-rows").get_by_text("Score prediction rows").click()
    page.locator("#eval-score-button").click()
    scored = page.locator("#eval-scored")
    expect(scored).to_contain_text("1 row scored against")
    expect(scored).to_contain_text("accuracy 1.0")
    expect(page.locator("#eval-scored-metrics")).to_contain_text("share of scored answers with ANLS*")
    shot(page, "steer-scored-in-evaluate-1440")
