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
from gradio.context import get_blocks_context
from gradio.events import Dependency, EventListenerMethod

from madqa.ui.slim_page import DEFERRED_CLASS  # the mark the page middleware looks for

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


class TabContents:
    """What Gradio's render machinery reads of a ``gr.render``: an id, the container whose subtree it sends and the
    function it calls. Here the container is a tab (or column) already built, so an event carrying this sends its
    whole subtree (layout and component configs) to the browser, which draws it in place (``send_when_opened``)."""

    def __init__(self, container: BlockContext) -> None:
        blocks_config = get_blocks_context()
        if blocks_config is None:
            raise ValueError("send_when_opened must be called inside the gr.Blocks")  # a bug, not bad input
        self._id = len(blocks_config.renderables)  # render ids are shared with gr.render's: never the same
        blocks_config.renderables.append(self)
        self.container_id = container._id
        self.page = container.page

    @staticmethod
    def fn() -> None:
        """Nothing to compute: the answer is the container's subtree, added by Gradio."""


def send_on(container: BlockContext, trigger: EventListenerMethod) -> Dependency:
    """Leave ``container``'s contents out of the first page (``madqa.ui.slim_page`` drops the subtrees of blocks
    marked ``DEFERRED_CLASS``) and send them when ``trigger`` fires; returns that event."""
    container.elem_classes = [*(container.elem_classes or []), DEFERRED_CLASS]
    contents = TabContents(container)
    block_fn, index = get_blocks_context().set_event_trigger(  # type: ignore[union-attr]
        [trigger], contents.fn, [], [], postprocess=False, show_progress="hidden",
        queue=False, api_visibility="private", renderable=contents)  # type: ignore[arg-type]
    return Dependency(None, block_fn.get_config(), index, contents.fn)


def send_after_first_paint(container: BlockContext) -> Dependency:
    """Leave ``container``'s contents out of the first page and send them as soon as the page is up (its load event):
    for what need not be there before the question box can be used (hints beside and below it). Its components
    may be outputs of events, not inputs: a question sent before they arrive would carry no value for them."""
    blocks_config = get_blocks_context()
    if blocks_config is None:
        raise ValueError("send_after_first_paint must be called inside the gr.Blocks")  # a bug, not bad input
    return send_on(container, EventListenerMethod(blocks_config.root_block, "load"))


def send_when_opened(tab: gr.Tab) -> Dependency:
    """Leave ``tab``'s contents out of the first page and send them the first time the visitor opens it; returns
    that event (chain on it what must write into the tab's components on the first opening, after they exist).

    The components, their events and the named API endpoints stay in the app (``/config``, ``/gradio_api/info``, the
    clients): only the browser's first page lacks them, so it builds a tree of the Ask tab alone."""
    opened = gr.State(False)

    def first_time(done: Any) -> Any:
        return gr.skip() if done else True

    # queued: Gradio's page fires a State's change only on a queued answer (it carries the changed states)
    tab.select(first_time, [opened], [opened], api_visibility="private", concurrency_limit=None)
    return send_on(tab, EventListenerMethod(opened, "change"))
