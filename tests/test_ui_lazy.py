"""The first paint carries only the Ask tab: other tabs' components are hidden in the page's config
until their tab is first opened (``madqa.ui.lazy``), so the browser fetches their code then.

No server and no browser here: the app's config is what the browser receives. The browser side
(tabs show their content on the first click, fewer scripts before it) is in test_ui_visitor.py.
"""

from __future__ import annotations

import gc
from pathlib import Path

import gradio as gr

from madqa.settings import Settings
from madqa.ui import build_app
from madqa.ui.lazy import components_in, defer_until_opened
from tests.browser_support import GRADIO_QUIRKS
from tests.conftest import make_pdf

pytestmark = GRADIO_QUIRKS
HEAVY = {"dataframe", "nativeplot", "file", "gallery", "html", "checkboxgroup", "radio", "number", "checkbox", "image",
         "slider"}  # image: the page viewer, drawn with its first page; slider: in the closed settings


def visible_at_first_paint(config: dict) -> dict[str, set[str]]:
    """Component types visible in the page's config, per tab label."""
    components = {c["id"]: c for c in config["components"]}
    out: dict[str, set[str]] = {}

    def walk(node: dict, tab: str) -> None:
        c = components.get(node["id"])
        if c is not None and c["type"] == "tabitem":
            tab = c["props"]["label"]
        if c is not None and c["props"].get("visible", True) is True:
            out.setdefault(tab, set()).add(c["type"])
        for child in node.get("children", []):
            walk(child, tab)

    walk(config["layout"], "")
    return out


def test_only_the_ask_tab_is_drawn_at_first_paint(tmp_path: Path, registry) -> None:
    make_pdf(tmp_path / "docs" / "a.pdf", ["Kestrel Dynamics had 42 staff."])
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    app = build_app(settings, registry, demo_dir=tmp_path / "docs")
    try:
        shown = visible_at_first_paint(app.get_config_file())
        assert {"chatbot", "textbox", "button"} <= shown["Ask"]
        for tab in ("Compare", "Corpus", "Evaluate", "You search", "Plugins"):
            assert shown.get(tab, set()) <= {"tabitem", "row", "column", "form", "accordion", "state"}, (tab, shown[tab])
        everywhere = set().union(*shown.values())
        assert not everywhere & HEAVY, everywhere & HEAVY  # the galleries too wait for their first page
    finally:
        app.close()
        gc.collect()  # Gradio's dropped event loops are reported here, under this module's filters


def test_a_deferred_tab_is_revealed_once_and_keeps_what_was_hidden_on_purpose() -> None:
    with gr.Blocks() as app:
        with gr.Tabs():
            with gr.Tab("first"):
                gr.Textbox()
            with gr.Tab("later") as later:
                with gr.Row():
                    box = gr.Textbox()
                    table = gr.DataFrame()
                hidden = gr.Markdown("never shown", visible=False)
                state = gr.State(0)
        deferred = defer_until_opened(later)
    assert deferred == [box, table]
    assert all(c.visible is False for c in components_in(later) if c is not state)
    assert state in list(components_in(later))
    reveal = next(fn for fn in app.fns.values() if fn.name == "reveal")
    first = reveal.fn(False)
    assert [u.get("visible") for u in first[:-1]] == [True, True] and first[-1] is True
    assert hidden not in deferred
    again = reveal.fn(True)
    assert all(isinstance(u, type(gr.skip())) for u in again)  # later opens cost no update
    app.close()
    gc.collect()


def test_a_closed_accordion_is_revealed_when_expanded() -> None:
    with gr.Blocks() as app:
        with gr.Accordion("settings", open=False) as settings:
            slider = gr.Slider(1, 5)
        defer_until_opened(settings)
    assert slider.visible is False
    reveal = next(fn for fn in app.fns.values() if fn.name == "reveal")
    assert [t[1] for t in reveal.targets] == ["expand"]
    app.close()
    gc.collect()

