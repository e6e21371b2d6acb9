"""How the app fits the screen, in headless Chromium: on a desktop (1440×900) a cited page opens beside the
answer that cited it, both in view; the keyboard reaches the latest answer's citations from the question box
in a few keys; on a phone (390×844) Ask, Compare, Evaluate and You search cut nothing off sideways, their
tables keep whole words in their cells, the plots are plots, and the first screen opens at its top; no
empty gallery or oracle-gap frame is drawn. Screenshots: ``test-artifacts/layout-<what>-<width>.png``."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser_support import EBIT_QUESTION, Visitors, ask_and_wait, pytestmark, shot  # noqa: F401 - pytestmark marks the module

# visible elements that reach past the viewport's sides without a scrolling frame that holds them
CUT_OFF_JS = """() => { const W = document.documentElement.clientWidth; const out = [];
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height || getComputedStyle(e).visibility === 'hidden') continue;
    if (r.right <= W + 1 && r.left >= -1) continue;
    let held = false;
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX !== 'visible' || s.clipPath !== 'none') { held = true; break; }
    }
    if (!held) out.push(`${e.tagName}#${e.id}.${String(e.className).slice(0, 40)} ${Math.round(r.left)}..${Math.round(r.right)}`);
  }
  return out.slice(0, 10); }"""
# table cells narrower than a short word in them (a column squeezed to a few letters a line)
NARROW_CELLS_JS = """() => { const pen = document.createElement('canvas').getContext('2d');
  return [...document.querySelectorAll('.table-wrap th, .table-wrap .body-cell')]
    .filter((c) => c.getClientRects().length && (c.innerText || '').trim()).filter((c) => {
      const s = getComputedStyle(c.querySelector('span') || c);
      pen.font = `${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
      const room = c.clientWidth - parseFloat(getComputedStyle(c).paddingLeft) - parseFloat(getComputedStyle(c).paddingRight);
      const words = (c.innerText || '').split(/\\s+/).filter((w) => w && w.length <= 10);
      return words.some((w) => pen.measureText(w).width > room + 2);
    }).map((c) => (c.innerText || '').trim().slice(0, 30)); }"""
# the width and height of the smallest plot area (its grid) of the plots on screen, in px
PLOT_SIZE_JS = """() => { const grids = [...document.querySelectorAll('.vega-embed .role-axis-grid')]
  .filter((g) => g.getClientRects().length).map((g) => g.getBoundingClientRect());
  return grids.length ? [Math.min(...grids.map((r) => r.width)), Math.min(...grids.map((r) => r.height))] : [0, 0]; }"""
# tables whose header cells do not sit over their first row's cells
MISALIGNED_JS = """() => [...document.querySelectorAll('.table-wrap')].filter((t) => t.getClientRects().length)
  .filter((t) => { const row = t.querySelector('.virtual-row');
    const heads = [...t.querySelectorAll('thead th')].map((c) => c.getBoundingClientRect());
    const cells = row ? [...row.querySelectorAll('.body-cell')].map((c) => c.getBoundingClientRect()) : [];
    return cells.some((c, i) => !heads[i] || Math.abs(heads[i].left - c.left) > 2 || Math.abs(heads[i].width - c.width) > 2);
  }).map((t) => (t.closest('.block') || t).id || (t.innerText || '').slice(0, 40))"""
# check boxes whose label runs past their group's frame
CUT_LABELS_JS = """(group) => [...group.querySelectorAll('label')].filter((l) =>
  l.getBoundingClientRect().right > group.getBoundingClientRect().right + 1).map((l) => l.innerText.trim())"""
INSIDE_VIEWPORT_JS = """(el) => { const r = el.getBoundingClientRect();
  return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }"""
FOCUSED_JS = """() => { const e = document.activeElement;
  return {id: e.id, cite: !!(e.matches && e.matches('a[href^="#madqa-cite="], button.option')),
          text: (e.textContent || '').trim().slice(0, 60)}; }"""


ask = ask_and_wait


def open_tab(page: Any, name: str) -> None:
    """Open the tab ``name``; on a phone the tab bar folds the last tabs into its "More tabs" menu."""
    tab = page.get_by_role("tab", name=name, exact=True)
    if tab.count() and tab.is_visible():
        tab.click()
    else:
        page.get_by_role("button", name="More tabs").click()
        page.locator(".overflow-dropdown button", has_text=name).click()
    page.wait_for_timeout(800)


def assert_fits(page: Any, where: str) -> None:
    """Nothing cut off sideways, no table column squeezed to a letter a line."""
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth"), where
    assert page.evaluate(CUT_OFF_JS) == [], where
    assert page.evaluate(NARROW_CELLS_JS) == [], where
    assert page.evaluate(MISALIGNED_JS) == [], where


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (1280, 720)], ids=["1440x900", "1280x720"])
def test_a_cited_page_opens_beside_its_answer_both_in_view(visitors: Visitors, width: int, height: int) -> None:
    page = visitors.open(width, height)
    ask(page, EBIT_QUESTION)
    chat = page.locator("#ask-chat")
    answer = chat.locator("strong", has_text="Answer:").last
    chip = chat.locator("button.option").first
    # where the visitor reads the answer (at 720 px the chat ends below the screen)
    answer.evaluate("el => el.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(300)
    assert answer.evaluate(INSIDE_VIEWPORT_JS) and chip.evaluate(INSIDE_VIEWPORT_JS), \
        (answer.bounding_box(), chip.bounding_box(), chat.bounding_box(), page.evaluate("scrollY"))
    chip.click()
    expect(page.locator("#ask-page-caption")).to_contain_text("the quote is marked in yellow")
    image = page.locator("#ask-page img")
    expect(image).to_be_visible()
    page.wait_for_timeout(600)  # the viewer's scroll (if any) has run
    assert answer.evaluate(INSIDE_VIEWPORT_JS) and chip.evaluate(INSIDE_VIEWPORT_JS)  # the answer stayed
    assert image.evaluate(INSIDE_VIEWPORT_JS), image.bounding_box()  # the whole page, so its marked quote
    assert page.locator("#ask-page-caption").evaluate(INSIDE_VIEWPORT_JS)
    assert image.bounding_box()["x"] >= chat.bounding_box()["x"] + chat.bounding_box()["width"]  # beside
    shot(page, f"layout-answer-and-page-{width}")
    page.get_by_text("Settings: config, model, retrieval").click()  # the visitor opens the settings below the chat
    page.locator("#ask-config").get_by_label("Named config").scroll_into_view_if_needed()
    page.mouse.wheel(0, 400)
    page.wait_for_timeout(500)
    assert page.evaluate("scrollY") > 300
    assert image.evaluate(INSIDE_VIEWPORT_JS), image.bounding_box()  # the page stays beside them (sticky)
    shot(page, f"layout-page-stays-beside-settings-{width}")


def test_the_keyboard_reaches_the_latest_answers_citation_in_a_few_keys(visitors: Visitors) -> None:
    page = visitors.open(1440, 900)
    ask(page, EBIT_QUESTION)
    page.locator("#ask-question textarea").focus()  # where the visitor typed the question
    tabs = 0
    while tabs < 3:
        page.keyboard.press("Tab")
        tabs += 1
        if page.evaluate(FOCUSED_JS)["id"] == "ask-chat-cite-skip":
            break
    skip = page.locator("#ask-chat-cite-skip")
    expect(skip).to_be_focused()
    expect(skip).to_have_text("Go to the cited pages of the latest answer")
    assert skip.bounding_box()["width"] > 100  # shown while it has the focus
    page.keyboard.press("Enter")
    focused = page.evaluate(FOCUSED_JS)
    assert focused["cite"] and "annual_report_2024.pdf · p.6" in focused["text"], focused
    assert tabs <= 3
    page.keyboard.press("Enter")  # opens it, quote highlighted
    expect(page.locator("#ask-page-caption")).to_contain_text("page 6 of")
    expect(page.locator("#ask-page-caption")).to_have_attribute("aria-live", "polite")  # read out when it opens
    shot(page, "layout-keyboard-citation-1440")


def test_no_empty_gallery_frame_when_an_answer_cites_nothing(visitors: Visitors) -> None:
    page = visitors.open(1440, 900)
    ask(page, "zzqx qqvv wwkk")  # nothing found: an answer with no citation
    expect(page.locator("#ask-chat")).to_contain_text("Answered by")
    for hidden in ("#ask-cited", "#ask-cited-title", "#ask-seen", "#ask-seen-title"):
        expect(page.locator(hidden)).to_be_hidden()
    expect(page.locator("#ask-chat-cite-skip")).to_be_hidden()  # nothing to skip to: out of the Tab order
    ask(page, EBIT_QUESTION)
    expect(page.locator("#ask-cited-title")).to_be_visible()
    expect(page.locator("#ask-cited img").first).to_be_visible()


def test_a_long_file_name_in_the_chat_wraps_between_its_parts_never_mid_word(visitors: Visitors) -> None:
    page = visitors.open(390, 844)  # the narrowest pane: a phone's chat (Compare's panes are as narrow)
    ask(page, EBIT_QUESTION)
    chat = page.locator("#ask-chat")
    expect(chat).to_contain_text("Cited pages:")
    assert "<wbr>" not in chat.inner_text()  # a place to wrap, not text
    assert chat.locator("wbr").count() >= 3  # finance/ annual_ report_ 2024. pdf


def test_the_phone_opens_at_the_top_of_the_chat(visitors: Visitors) -> None:
    page = visitors.open(390, 844)
    page.wait_for_timeout(800)
    assert page.evaluate("scrollY") == 0
    assert page.locator("h1").first.evaluate(INSIDE_VIEWPORT_JS)
    intro = page.locator("#ask-chat").get_by_text("Ask a question about the documents.")
    first_example = page.locator("#ask-chat").get_by_role("button").first
    chat_box = page.locator("#ask-chat").bounding_box()
    for shown in (intro, first_example):
        box = shown.bounding_box()
        assert box["y"] >= chat_box["y"] - 1 and box["y"] + box["height"] <= min(844, chat_box["y"] + chat_box["height"]), box
    shot(page, "layout-first-screen-390")


@pytest.mark.slow
def test_the_phone_cuts_nothing_off_on_ask_compare_evaluate_and_you_search(visitors: Visitors) -> None:
    page = visitors.open(390, 844)
    ask(page, EBIT_QUESTION)
    assert_fits(page, "Ask")
    shot(page, "layout-ask-390")
    open_tab(page, "Compare")
    page.locator("#compare-question textarea").fill(EBIT_QUESTION)
    page.locator("#compare-run").click()
    expect(page.locator("#compare-summary")).to_contain_text("time (s)")
    expect(page.locator("#compare-stop")).to_be_disabled()
    assert_fits(page, "Compare")
    shot(page, "layout-compare-390")
    open_tab(page, "Evaluate")
    page.locator("#eval-limit input").fill("6")
    page.locator("#eval-run").click()
    expect(page.locator("#eval-status")).to_contain_text("on the demo corpus")
    page.wait_for_timeout(1500)  # the plots drawn
    assert_fits(page, "Evaluate")
    width, height = page.evaluate(PLOT_SIZE_JS)
    assert width >= 200 and height >= 150, (width, height)  # a plot, not a sliver beside its title
    value = page.locator("#eval-metrics").get_by_role("columnheader", name="offline").first.bounding_box()
    assert value["x"] + value["width"] <= 390, value  # the numbers beside their names, not off to the side
    assert page.get_by_text("Oracle gap (with the oracle checkbox)").count() == 0  # no oracle run: no empty frame
    shot(page, "layout-evaluate-390")
    open_tab(page, "You search")
    page.locator("#human-start").click()
    expect(page.locator("#human-question")).to_contain_text("?")
    page.locator("#human-query textarea, #human-query input").first.fill("revenue 2024")
    page.locator("#human-search").click()
    expect(page.locator("#human-pages img").first).to_be_visible()
    page.wait_for_timeout(500)
    thumb = page.locator("#human-pages .thumbnail-item").first
    assert thumb.bounding_box()["width"] >= 120, thumb.bounding_box()  # a page one can see, not a 60 px stamp
    caption = thumb.locator(".caption-label")
    assert caption.evaluate("el => el.scrollWidth <= el.clientWidth + 1")  # its name whole, not "p.4 · q4…"
    page.locator("#human-answer textarea, #human-answer input").first.fill("148,612")
    page.locator("#human-cites label").first.click()
    assert page.locator("#human-cites").evaluate(CUT_LABELS_JS) == []  # each page's name whole
    page.locator("#human-submit").click()
    expect(page.locator("#human-scores")).to_contain_text("148,612")
    page.wait_for_timeout(500)
    assert_fits(page, "You search")
    shot(page, "layout-you-search-390")


def test_the_phone_cuts_nothing_off_on_corpus(visitors: Visitors, tmp_path: Any) -> None:
    """Corpus at 390 px: the upload results (a file indexed, one refused with its reason) and the pages a search found
    keep whole words in their cells; their headers were cut a letter a line ("s/c/o/r/e", "page/s")."""
    from tests.conftest import make_pdf

    make_pdf(tmp_path / "quarterly_report.pdf", ["Net sales in Q3 2025 were 4,210 thousand euros."])
    (tmp_path / "notes.pdf").write_text("plain text, not a PDF\n", encoding="utf-8")
    page = visitors.open(390, 844)
    open_tab(page, "Corpus")
    page.locator("#corpus-files input[type=file]").set_input_files([str(tmp_path / "quarterly_report.pdf"),
                                                                    str(tmp_path / "notes.pdf")])
    page.locator("#corpus-add").click()
    expect(page.locator("#corpus-results")).to_contain_text("not a PDF")
    page.locator("#corpus-query textarea, #corpus-query input").first.fill("net sales")
    page.locator("#corpus-search").click()
    expect(page.locator("#corpus-hits")).to_contain_text("quarterly_report.pdf")
    page.wait_for_timeout(500)
    assert_fits(page, "Corpus")
    shot(page, "layout-corpus-390")
