"""Tabs a first-time visitor has not opened cost nothing at first paint.

Gradio's page fetches the code of every visible component in its config before it shows the first
tab, also of components in tabs nobody has opened yet (data frames, plots, file pickers: most of
the page's weight). ``defer_until_opened(tab)`` hides a tab's components in the config and shows
them when the visitor first opens the tab, so their code is fetched then; a closed accordion likewise. Their events (and API
endpoints) stay as they are: a hidden component still takes and gives values.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradio as gr
from gradio.blocks import Block, BlockContext

NEVER_HIDDEN = (gr.State, gr.Timer)  # not drawn, nothing to fetch


def components_in(block: Block) -> Iterator[gr.components.Component]:
    """Every component inside ``block``, depth first (layouts are walked, not returned)."""
    for child in getattr(block, "children", []) or []:
        if isinstance(child, gr.components.Component):
            yield child  # gr.HTML is both: a component that may hold others
        if isinstance(child, BlockContext):
            yield from components_in(child)


def defer_until_opened(tab: gr.Tab | gr.Accordion) -> list[gr.components.Component]:
    """Hide the visible components of ``tab`` (or of a closed accordion) until the visitor first opens it;
    returns them.

    Call it after the tab is built, inside the Blocks. Components hidden on purpose stay hidden."""
    hidden = [c for c in components_in(tab) if c.visible is True and not isinstance(c, NEVER_HIDDEN)]
    if not hidden:
        return []
    for component in hidden:
        component.visible = False
    opened = gr.State(False)

    def reveal(done: Any) -> list[Any]:
        if done:
            return [gr.skip()] * (len(hidden) + 1)
        return [*(gr.update(visible=True) for _ in hidden), True]

    opens = tab.expand if isinstance(tab, gr.Accordion) else tab.select
    opens(reveal, [opened], [*hidden, opened], queue=False, api_visibility="private")
    return hidden
