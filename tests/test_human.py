""""You search": a person's searches and answer recorded as an agent's prediction row, scored the same
way; and in headless Chromium, a whole question played through the tab into a downloadable row that scores."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from madqa.evaluation.report import evaluate
from madqa.settings import load_config
from madqa.ui.human import human_answer, human_search, score_frame, start_game, summary_frame
from tests.browser_support import CHROMIUM, Visitors, shot
from tests.conftest import DEMO_QUESTIONS
from tests.test_ui_browser import tab

QUESTION = json.loads(DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines()[0])  # demo-001: revenue, p.6


def test_a_retrievers_own_error_is_shown_to_the_person_but_its_bug_is_not_a_search_with_no_pages():
    import madqa

    class Refusing:
        def search(self, query, k):
            raise madqa.SearchError("the query could not be parsed")

    class Broken:
        def search(self, query, k):
            raise AttributeError("'NoneType' object has no attribute 'hits'")

    game = start_game(QUESTION, load_config("offline"))
    step = human_search(game, None, Refusing(), "((", 5)
    assert step.error == "the query could not be parsed" and step.hits == () and game.searches == 1
    with pytest.raises(AttributeError):
        human_search(game, None, Broken(), "revenue", 5)
    assert game.searches == 1 and len(game.trace.steps) == 1  # the failed search is not recorded as one


def test_a_person_s_trajectory_is_an_agent_row_that_scores(demo_corpus, registry):
    config = load_config("offline")
    retriever = registry.create("retriever", config.retriever, demo_corpus, config.part_options("retriever"))
    game = start_game(QUESTION, config)
    first = human_search(game, demo_corpus, retriever, "zorblax", config.top_k)
    second = human_search(game, demo_corpus, retriever, "consolidated income statement revenue", config.top_k)
    again = human_search(game, demo_corpus, retriever, "consolidated income statement revenue", config.top_k)
    assert second.new_pages and not again.new_pages and again.hits == second.hits
    gold = ("finance/annual_report_2024.pdf", 6)
    assert gold in {(h.file, h.page) for h in second.hits}
    labels = [ref.label() for ref in game.seen]
    row = human_answer(game, demo_corpus, "148,612\n", ["File: finance/annual_report_2024.pdf, Page: 6",
                                                       "File: nowhere.pdf, Page: 1"])
    assert "File: finance/annual_report_2024.pdf, Page: 6" in labels
    assert (row["model"], row["config"], row["backend"]) == ("human", "human", "human")
    assert row["answer"] == ["148,612"] and row["citations"] == [{"file": gold[0], "page": 6}]
    assert [h["query"] for h in row["search_history"]] == ["zorblax", *["consolidated income statement revenue"] * 2]
    assert row["iterations"] == 4 and first.query == "zorblax"
    result = evaluate([row], [QUESTION])["overall"]
    assert result["accuracy"] == 1.0 and result["first_query_success"] == 0.0 and result["steps"]["mean"] == 3
    frame = score_frame([row], [QUESTION])
    assert frame.iloc[0]["right"] == "yes" and frame.iloc[0]["first query found a gold page"] == "no"
    side = summary_frame([row], [], [QUESTION], "offline")
    assert side.iloc[1].tolist() == ["accuracy", "1.000", "–"]


def test_download_folders_do_not_pile_up(tmp_path, monkeypatch):
    """Each Submit made a madqa-human-* folder that was never deleted: a visitor could fill the disk."""
    import tempfile

    from madqa.ui.human import HUMAN_FOLDERS, write_download

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    paths = [write_download([{"id": str(n), "answer": ["x"]}]) for n in range(HUMAN_FOLDERS.keep + 5)]
    assert sorted(tmp_path.glob("madqa-human-*")) == sorted(p.parent for p in paths[-HUMAN_FOLDERS.keep:])
    assert json.loads(paths[-1].read_text(encoding="utf-8"))["id"] == str(HUMAN_FOLDERS.keep + 4)
    HUMAN_FOLDERS.clear()  # at exit
    assert not list(tmp_path.glob("madqa-human-*"))


def test_an_answer_with_no_value_is_a_refusal(demo_corpus):
    game = start_game(QUESTION, load_config("offline"))
    row = human_answer(game, demo_corpus, "  \n", [])
    assert row["refusal"] is True and row["answer"] == [] and row["search_history"] == []


def test_the_tab_s_search_and_answer_without_a_running_app(demo_corpus, demo_settings, registry):
    """What "You search" does per query and per answer (``search_for_person``, ``score_answer``): pictures of the
    pages found, the pages one may cite, then the verdict beside the agent's row (run: the offline one is free)."""
    from madqa.ui.context import AppContext
    from madqa.ui.human import score_answer, search_for_person
    from tests.test_ask_run import Sessions

    config = load_config("offline")
    ctx = AppContext(demo_settings, registry, Sessions(demo_corpus), {"offline": config}, "offline",  # type: ignore[arg-type]
                     questions=[QUESTION])
    session = {"corpus": "demo"}
    game = start_game(QUESTION, config)
    found = search_for_person(ctx, config, game, "consolidated income statement revenue", session)
    assert found.status.startswith("Search 1: ") and found.pictures and len(found.citable) == len(game.seen)
    again = search_for_person(ctx, config, game, "consolidated income statement revenue", session)
    assert again.status.endswith(", 0 new") and all(c.endswith(" (shown before)") for _, c in again.pictures)
    scored = score_answer(ctx, config, game, {"rows": [], "agent_rows": []}, "148,612",
                          ["File: finance/annual_report_2024.pdf, Page: 6"], session)
    assert "— **right** (ANLS* 1.00). Gold: 148,612 or EUR 148.6 million or 148.6 million. 2 searches." in \
        scored.text.replace("\\", "")  # the Markdown escapes
    assert [r["model"] for r in scored.rows] == ["human"] and [r["id"] for r in scored.agent_rows] == ["demo-001"]


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Chromium at {CHROMIUM} (scripts/install --dev)")
@pytest.mark.filterwarnings("ignore:unclosed event loop <_UnixSelectorEventLoop:ResourceWarning")
@pytest.mark.filterwarnings("ignore:unclosed <socket.socket fd=[0-9]+, family=1:ResourceWarning")
@pytest.mark.filterwarnings(r"ignore:Exception ignored in. (<socket\.socket fd=[0-9]+, family=1|<function "
                            r"BaseEventLoop\.__del__):pytest.PytestUnraisableExceptionWarning")
def test_you_search_in_the_browser_records_a_trajectory_that_scores(visitors: Visitors, app_url: str) -> None:
    from playwright.sync_api import expect

    page = visitors.open()
    tab(page, "You search")
    page.locator("#human-start").click()
    expect(page.locator("#human-question")).to_contain_text("total revenue in 2024")
    page.locator("#human-query textarea").fill("<b>zorblax</b>")
    page.locator("#human-search").click()
    expect(page.locator("#human-search-status")).to_contain_text("Search 1:")
    page.locator("#human-query textarea").fill("consolidated income statement revenue")
    page.locator("#human-query textarea").press("Enter")
    expect(page.locator("#human-search-status")).to_contain_text("Search 2:")
    expect(page.locator("#human-pages img").first).to_be_visible()
    label = "📄 finance/annual_report_2024.pdf · p.6"  # the chips' label, as in Ask
    page.locator("#human-cites").get_by_label(label).check()
    page.locator("#human-answer textarea").fill("148,612")
    page.locator("#human-submit").click()
    expect(page.locator("#human-result")).to_contain_text("right")
    expect(page.locator("#human-scores")).to_contain_text("demo-001")
    expect(page.locator("#human-summary")).to_contain_text("first-query success")
    assert page.locator("#human-question b").count() == 0 and page.locator("#human-search-status b").count() == 0
    shot(page, "tab-you-search")
    link = page.locator("#human-download a").first
    expect(link).to_be_visible()
    href = link.get_attribute("href")
    text = httpx.get(href if href.startswith("http") else app_url.rstrip("/") + href, timeout=30).text
    rows = [json.loads(line) for line in text.splitlines()]
    assert len(rows) == 1 and rows[0]["model"] == "human" and rows[0]["id"] == "demo-001"
    assert [h["query"] for h in rows[0]["search_history"]] == ["<b>zorblax</b>", "consolidated income statement revenue"]
    overall = evaluate(rows, [QUESTION])["overall"]
    assert overall["accuracy"] == 1.0 and overall["page_f1"] == 1.0 and overall["first_query_success"] == 0.0
