"""axe-core on every tab of the app, at a desktop (1440×900) and a phone (390×844) size: no critical and
no serious violation. axe-core comes from npm (``scripts/install --dev`` puts it in tests/axe); the Ask tab is
checked with an answer on screen (its citation chips and page viewer are what axe flagged before)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser_support import (  # noqa: F401 - pytestmark applies to this module's tests
    ARTIFACTS,
    EBIT_QUESTION,
    Visitors,
    pytestmark,
    shot,
)

AXE = Path(__file__).parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
TABS = ("Ask", "Compare", "Corpus", "Evaluate", "You search", "Plugins")
SIZES = ((1440, 900), (390, 844))
RUN_AXE = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.filter(v => v.impact === 'critical' || v.impact === 'serious').map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => ({target: n.target.join(' '), html: n.html.slice(0, 200),
                                        summary: (n.failureSummary || '').slice(0, 300)}))}));
}"""

pytestmark = [*pytestmark, pytest.mark.slow,
              pytest.mark.skipif(not AXE.exists(), reason="needs axe-core in tests/axe (scripts/install --dev)")]


def open_tab(page: Any, name: str) -> None:
    """Open the tab ``name``; on a phone the tab bar folds the last tabs into its "More tabs" menu."""
    tab = page.get_by_role("tab", name=name, exact=True)
    if tab.count():
        tab.click()
    else:
        page.get_by_role("button", name="More tabs").click()
        page.locator(".overflow-dropdown button", has_text=name).click()
    page.wait_for_timeout(500)  # the tab's contents arrive on the first opening, then its update runs
    page.wait_for_function("() => !document.querySelector('.pending, .generating')")
    page.wait_for_timeout(300)


def violations(page: Any) -> list[dict[str, Any]]:
    """The critical and serious axe-core violations of the page as it is now (hidden tabs are not checked)."""
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate(RUN_AXE)
    if found:  # once more on the settled page: an update in flight (the page script names what it draws)
        page.wait_for_timeout(1500)
        found = page.evaluate(RUN_AXE)
    return found


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_no_critical_or_serious_axe_violation_on_any_tab(visitors: Visitors, width: int, height: int) -> None:
    page = visitors.open(width, height)
    found: dict[str, list[dict[str, Any]]] = {"Ask (first screen)": violations(page)}  # the example questions
    shot(page, f"axe-ask-first-{width}")
    box = page.locator("#ask-question textarea")
    box.fill(EBIT_QUESTION)
    box.press("Enter")
    expect(page.locator("#ask-chat button.option").first).to_be_visible()  # the answer and its chips are in
    expect(page.locator("#ask-stop")).to_be_disabled()
    page.locator("#ask-chat button.option").first.click()  # a citation opens its page (beside, or a modal)
    expect(page.locator("#ask-page-viewer img").first).to_be_visible()
    found["Ask (a cited page open)"] = violations(page)
    shot(page, f"axe-ask-page-{width}")
    page.keyboard.press("Escape")  # the phone's modal closes; on a desktop the viewer stays beside
    for name in TABS:
        if name != "Ask":
            open_tab(page, name)
        found[name] = violations(page)
        shot(page, f"axe-{name.lower().replace(' ', '-')}-{width}")
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"axe-{width}.json").write_text(json.dumps(found, indent=1), encoding="utf-8")
    assert {tab: [v["id"] for v in vs] for tab, vs in found.items() if vs} == {}, json.dumps(found, indent=1)
