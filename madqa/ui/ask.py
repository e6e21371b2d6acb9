"""The Ask tab: a chat where each agent step streams in as it happens.

Searches and model notes arrive as collapsible thoughts, the pages each search showed the model
as thumbnails, and the answer with its citations as buttons; a citation (or any thumbnail)
opens the page large beside the chat. A bar above says who answers before anything is asked; a
question asked after an answer is a follow-up (``madqa.conversation``) until "New chat"; every
answer keeps its citations as links in its own text (``ui.citation_links``). What a question does is
``ui.ask_run.answer_question``; this module lays the tab out and puts its updates onto the components.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from madqa.conversation import ChatTurn
from madqa.errors import MadqaError
from madqa.evaluation.questions import MAX_QUESTION_CHARS
from madqa.highlight import Highlight
from madqa.types import PageRef
from madqa.ui.ask_hints import documents_strip, example_questions
from madqa.ui.ask_run import AskQuestion, AskUpdate, answer_question
from madqa.ui.citation_links import PICK_SUFFIX
from madqa.ui.collection_picker import build_picker, follow_questions
from madqa.ui.config_panel import FIELD_NAMES, ConfigPanel, build_config_panel, resolve_config
from madqa.ui.context import AGENT_CONCURRENCY, AGENT_CONCURRENCY_ID, AppContext, api_parameters, shown_error
from madqa.ui.given_marks import mark_key, session_token
from madqa.ui.layout import SIDE_ID
from madqa.ui.lazy import send_after_first_paint
from madqa.ui.messages import (
    citation_marks,
    md_escape,
    page_label,
    parse_citation_value,
    passage_value,
    shorten,
    stopped_chat,
)
from madqa.ui.modal import open_viewer_js
from madqa.ui.model_bar import model_bar
from madqa.ui.pages import LARGE_BUDGET_PX, SOURCE_WORDS, highlighted_page_file, page_file
from madqa.ui.request_size import history_refusal
from madqa.ui.scope_picker import build_scope_picker, chosen_scope, follow_collection_picker
from madqa.ui.sessions import disk_reason
from madqa.ui.steer import build_steer_panel

VIEWER_HINT = "_Click a cited page (or any thumbnail) to see it here._"


@dataclass
class PageViewer:
    image: gr.Image
    caption: gr.Markdown


def build_page_viewer(label: str, elem_id: str, height: int = 680, hint: str = VIEWER_HINT) -> PageViewer:
    """The page image and its caption, in a column ``<elem_id>-viewer`` (the modal on a phone)."""
    with gr.Column(elem_id=f"{elem_id}-viewer", elem_classes=["page-viewer"]):
        # the caption first (which page, what is marked), so it is in view with the page under it
        caption = gr.Markdown(hint, elem_id=f"{elem_id}-caption")
        # drawn with its first page (not in the first paint: one component less to fetch before it)
        image = gr.Image(label=label, type="filepath", interactive=False, height=height,
                         buttons=["download", "fullscreen"], elem_id=elem_id, visible=False)
    return PageViewer(image, caption)


def show_page(ctx: AppContext, session: Any, corpus_key: str, ref: PageRef,
              marks: tuple[list[str], list[str]] | None = None, passage: bool = False) -> tuple[str, str]:
    """The large image of a page of the session's corpus ``corpus_key``, and a caption.

    ``marks``: (quotes, answer words) to box on the page, from the citation that was clicked;
    ``passage``: the quotes are a refusal's closest-passage lines, not an answer's quote."""
    corpus = ctx.corpus_or_error(session, corpus_key)
    quotes, answers = marks or ([], [])
    note = ""
    if (quotes or answers) and not ctx.marks.given(session_token(session), mark_key(corpus_key, ref, quotes, answers)):
        # marks this session's answers never handed out (a made-up quote): the plain page, drawn once for all
        quotes, answers, note = [], [], "  \nNothing is highlighted: that quote is not one this session was given."
    try:
        if quotes or answers:
            path, highlight = highlighted_page_file(corpus, ref, ctx.settings, LARGE_BUDGET_PX, quotes, answers)
            note = highlight_note(highlight, bool(quotes), "the matching lines are" if passage else "the quote is")
        else:
            path = page_file(corpus, ref, ctx.settings, LARGE_BUDGET_PX)
        pages = corpus.document(ref.file).pages
    except MadqaError as exc:
        raise shown_error(f"Cannot show {page_label(ref)}: {exc}") from None
    except OSError as exc:  # the page image could not be written (a full disk)
        raise shown_error(f"Cannot show {page_label(ref)}: {disk_reason(exc)}") from None
    source = SOURCE_WORDS.get(corpus.page_source(ref.file, ref.page) or "", "unknown")
    caption = f"**{md_escape(ref.file)}**, page {ref.page} of {pages} · searchable text from: {source}{note}"
    return str(path), caption


def highlight_note(highlight: Highlight, quoted: bool, marked: str = "the quote is") -> str:
    """The caption's words on what is highlighted (quote in yellow, answer framed in red) and what is not."""
    kinds = {b.kind for b in highlight.boxes}
    parts = []
    if "quote" in kinds:
        parts.append(f"{marked} marked in yellow")
    if "answer" in kinds:
        parts.append("the answer is framed in red")
    if highlight.source == "none":
        parts.append("this page has no word positions to highlight")
    elif highlight.missing:
        parts.append("not found on this page: " + "; ".join(f"“{md_escape(shorten(t, 80))}”" for t in highlight.missing))
    if not quoted:
        parts.append("no supporting quote was given")
    return "  \n" + " · ".join(parts) if parts else ""


def show_citation(ctx: AppContext, value: Any, session: Any) -> tuple[Any, str]:
    """The viewer's image and caption for a citation value (a chip's, or a link's handed to the pick box)."""
    parsed = parse_citation_value(value)
    if parsed is None:
        raise shown_error("That is not a page citation.")
    path, caption = show_page(ctx, session, *parsed, marks=citation_marks(value), passage=passage_value(value))
    return gr.Image(path, visible=True), caption


def viewer_handlers(ctx: AppContext) -> tuple[Any, Any]:
    """Event functions: show a clicked citation option; show the clicked thumbnail of a gallery."""
    def on_option(session: Any, evt: gr.SelectData) -> tuple[Any, str]:
        return show_citation(ctx, evt.value, session)

    def on_thumbnail(refs: list[list[Any]], session: Any, evt: gr.SelectData) -> tuple[Any, str]:
        index = evt.index if isinstance(evt.index, int) else -1
        if not 0 <= index < len(refs or []):
            raise shown_error("That page is no longer listed; ask again.")
        key, file, page, *marks = refs[index]  # a cited page also holds (quotes, answer words)
        path, caption = show_page(ctx, session, key, PageRef(file, int(page)), tuple(marks[0]) if marks else None)
        return gr.Image(path, visible=True), caption

    return on_option, on_thumbnail


QUESTION_CHARS = MAX_QUESTION_CHARS
COUNTER_JS = f"(q) => `${{(q || '').length}} / {QUESTION_CHARS:,} characters`"
SHOW_VIEWER_JS = open_viewer_js("ask-page-viewer")  # a modal on a phone, beside the chat on a wide screen


def check_question_length(text: str) -> None:
    """gr.Error for a question past the box's limit: a client that skips the browser gets the same cap."""
    if len(text) > MAX_QUESTION_CHARS:
        raise shown_error(f"A question may have at most {MAX_QUESTION_CHARS:,} characters; this one has {len(text):,}.")


@dataclass
class AskTab:
    """The Ask tab's components that its events read and write."""

    picker: gr.Dropdown
    bar: gr.Markdown
    scope_picker: Any
    chatbot: gr.Chatbot
    question: gr.Textbox
    ask_btn: gr.Button
    stop_btn: gr.Button
    new_btn: gr.Button
    pick: gr.Textbox
    counter: gr.Markdown
    strip: gr.Markdown
    example: gr.Dropdown
    panel: ConfigPanel
    side: AskSide


@dataclass
class AskSide:
    """The column beside the chat: the page viewer, the pages found and cited (and what each picture shows)."""

    viewer: PageViewer
    seen_title: gr.Markdown
    seen: gr.Gallery
    cited_title: gr.Markdown
    cited: gr.Gallery
    # made after the layout, outside it (as a State is)
    seen_refs: gr.State = field(init=False)
    cited_refs: gr.State = field(init=False)
    conversation: gr.State = field(init=False)  # the turns so far (madqa.conversation), while the chat shows them


def build_ask_tab(ctx: AppContext) -> None:
    tab = ask_layout(ctx)
    event, chip = wire_questions(ctx, tab)
    wire_chat(ctx, tab, [event, chip])
    wire_viewer(ctx, tab)


def ask_layout(ctx: AppContext) -> AskTab:
    """The tab's parts: the bar at the top (collection, who answers), the chat with its box and hints, the side."""
    default = ctx.configs.get(ctx.default_config)
    with gr.Row(elem_id="ask-top-bar", equal_height=True):  # the one bar at the top: collection, who answers
        picker = build_picker(ctx, "ask-collection", scale=1, min_width=150)
        bar = gr.Markdown(model_bar(ctx.registry, default) if default else "", elem_id="ask-model-bar", scale=3, min_width=150)
    scope_picker = build_scope_picker(ctx)  # what is searched: all documents, or the ones chosen
    follow_collection_picker(ctx, picker, scope_picker)
    with gr.Row(equal_height=False):
        with gr.Column(scale=3):
            chatbot = gr.Chatbot(label="Agent", height=620, buttons=["copy"], elem_id="ask-chat",
                                 placeholder="**Ask a question about the documents.** Each search and the pages "
                                             "it found stream in as the agent works; the answer comes with page "
                                             "citations you can open.",
                                 examples=example_questions(ctx) or None)
            with gr.Row(elem_id="ask-input-row"):
                question = gr.Textbox(label="Question", show_label=False, scale=6, elem_id="ask-question",
                                      placeholder="Ask about the documents… (Enter to send)",
                                      max_length=QUESTION_CHARS)
                ask_btn = gr.Button("Ask", variant="primary", scale=1, min_width=80, elem_id="ask-button")
                stop_btn = gr.Button("Stop", variant="stop", scale=0, min_width=70, interactive=False,
                                     elem_id="ask-stop")
                new_btn = gr.Button("New chat", variant="secondary", scale=0, min_width=110, elem_id="ask-new-chat")
            # where a citation link of an earlier answer hands its value (hidden; ui.citation_links)
            pick = gr.Textbox(show_label=False, container=False, elem_id=f"ask-chat{PICK_SUFFIX}")
            # hints below the box, drawn just after the first paint (the box and Ask work before they arrive)
            with gr.Column(elem_id="ask-hints") as hints:
                counter = gr.Markdown(f"0 / {QUESTION_CHARS:,} characters", elem_id="ask-counter")
                strip = gr.Markdown(documents_strip(ctx), elem_id="ask-documents")
                example = gr.Dropdown(ctx.question_choices, value=None, label="Or pick a question of this collection",
                                      visible=bool(ctx.question_choices), elem_id="ask-example")
                follow_questions(ctx, picker, example)
            send_after_first_paint(hints)
            panel: ConfigPanel = build_config_panel(ctx.configs, ctx.registry, ctx.default_config,
                                                    "Settings: config, model, retrieval", backends=ctx.backends,
                                                    elem_id="ask-config", settings=ctx.settings)
            build_steer_panel(ctx, question, panel)  # a person beside the agent (madqa.ui.steer)
        side = ask_side()
    side.seen_refs, side.cited_refs, side.conversation = gr.State([]), gr.State([]), gr.State(())
    return AskTab(picker, bar, scope_picker, chatbot, question, ask_btn, stop_btn, new_btn, pick, counter, strip,
                  example, panel, side)


def ask_side() -> AskSide:
    """The column beside the chat, empty until there is a page: drawn just after the first paint; sticky beside the
    chat on a wide screen, the viewer first, so a cited page shows beside the answer that cited it (ui.layout)."""
    with gr.Column(scale=2, elem_id=SIDE_ID) as side:
        viewer = build_page_viewer("Page", "ask-page")
        # galleries (and their titles) stay out of the first paint (their code is a good part of the page's
        # weight, each block drawn costs it) until a question starts; an empty one is not drawn (ui.layout)
        seen_title = gr.Markdown("**Pages found** (shown to the model)", elem_classes=["gallery-title"],
                                 visible=False, elem_id="ask-seen-title")
        seen = gr.Gallery(show_label=False, columns=3, height="auto", allow_preview=False, fit_columns=False,
                          object_fit="contain", elem_id="ask-seen", elem_classes=["page-gallery"], visible=False)
        cited_title = gr.Markdown("**Cited pages**", elem_classes=["gallery-title"], visible=False,
                                  elem_id="ask-cited-title")
        cited = gr.Gallery(show_label=False, columns=3, height="auto", allow_preview=False, fit_columns=False,
                           object_fit="contain", elem_id="ask-cited", elem_classes=["page-gallery"], visible=False)
    send_after_first_paint(side)
    return AskSide(viewer, seen_title, seen, cited_title, cited)


def shown_update(tab: AskTab, update: AskUpdate) -> dict[Any, Any]:
    """An update of a question (``ask_run.AskUpdate``) onto the tab: the question box and the viewer are cleared
    once, at the first (then left alone: the next question may be typed meanwhile); the conversation at the last."""
    side = tab.side
    first = update.first
    return {tab.question: "" if first else gr.skip(), tab.chatbot: update.chat, side.seen: update.seen,
            side.cited: update.cited, side.seen_refs: update.seen_refs, side.cited_refs: update.cited_refs,
            side.viewer.image: None if first else gr.skip(), side.viewer.caption: VIEWER_HINT if first else gr.skip(),
            side.conversation: gr.skip() if update.turns is None else update.turns}


def wire_questions(ctx: AppContext, tab: AskTab) -> tuple[Any, Any]:
    """Ask (Enter, the button, the API's ``ask``) and an example chip: each streams a question's updates. Returns
    both events, for Stop and New chat to cancel."""
    side = tab.side

    @api_parameters(["question", "history", *FIELD_NAMES, "session", "conversation", "scope", "request"])
    def ask(question_text: str, history: list[dict[str, Any]] | None, *args: Any) -> Iterator[dict[Any, Any]]:
        *values, session, turns, scope, request = args
        refused = history_refusal(history)  # before any work: a 20 MB turn cost 41 s (issue 39)
        if refused:
            raise shown_error(refused)
        text = (question_text or "").strip()
        if not text:
            raise shown_error("Type a question first.")
        check_question_length(text)
        config, options = resolve_config(ctx.configs, values, ctx.policy, settings=ctx.settings)
        with ctx.job_slot(session, request) as keys:
            # a follow-up of the turns on screen; an empty chat (New chat, the API with no history) starts anew
            earlier = tuple(t for t in turns or () if isinstance(t, ChatTurn)) if history else ()
            asked = AskQuestion(text, config, options, session, keys, tuple(history or ()), earlier, chosen_scope(scope))
            for update in answer_question(ctx, asked):
                yield shown_update(tab, update)

    def starting() -> dict[Any, Any]:
        """Before a question runs (browser only): Stop enabled, the galleries and their titles drawn (their code
        fetched now)."""
        return {tab.stop_btn: gr.Button(interactive=True), side.seen: gr.Gallery(visible=True),
                side.cited: gr.Gallery(visible=True), side.seen_title: gr.Markdown(visible=True),
                side.cited_title: gr.Markdown(visible=True)}

    inputs = [tab.question, tab.chatbot, *tab.panel.inputs, ctx.session, side.conversation, tab.scope_picker]
    outputs = [tab.question, tab.chatbot, side.seen, side.cited, side.seen_refs, side.cited_refs, side.viewer.image,
               side.viewer.caption, side.conversation]
    drawn = [tab.stop_btn, side.seen, side.cited, side.seen_title, side.cited_title]
    busy = gr.on([tab.question.submit, tab.ask_btn.click], starting, None, drawn,
                 queue=False, api_visibility="private")
    event = busy.then(ask, inputs, outputs, api_name="ask", concurrency_limit=AGENT_CONCURRENCY,
                      concurrency_id=AGENT_CONCURRENCY_ID, show_progress="minimal", trigger_mode="once")
    event.then(lambda: gr.Button(interactive=False), None, tab.stop_btn, queue=False, api_visibility="private")

    def pick_example(evt: gr.SelectData) -> Any:
        return evt.value.get("text", "") if isinstance(evt.value, dict) else gr.skip()

    # an example chip asks as Ask does, and Stop and New chat cancel it too (they cancelled only a typed question)
    chip = tab.chatbot.example_select(pick_example, None, [tab.question], queue=False, api_visibility="private") \
        .then(starting, None, drawn, queue=False, api_visibility="private") \
        .then(ask, inputs, outputs, api_visibility="private", concurrency_limit=AGENT_CONCURRENCY,
              concurrency_id=AGENT_CONCURRENCY_ID, show_progress="minimal")
    chip.then(lambda: gr.Button(interactive=False), None, tab.stop_btn, queue=False, api_visibility="private")
    return event, chip


def settled_stop(shown: Any) -> Any:
    """The chat closed again a moment after Stop: an update the cancelled question had already sent can land after
    Stop's own and show "Working…" again (seen in CI); ``stopped_chat`` leaves a chat with nothing pending alone."""
    time.sleep(STOP_SETTLE_S)
    return stopped_chat(shown)


STOP_SETTLE_S = 1.5


def wire_chat(ctx: AppContext, tab: AskTab, runs: list[Any]) -> None:
    """Stop, New chat and clearing the chat (each cancels the ``runs``), the counter, the bar, the example list."""
    side = tab.side
    tab.stop_btn.click(lambda shown: (gr.Button(interactive=False), stopped_chat(shown)), [tab.chatbot],
                       [tab.stop_btn, tab.chatbot], cancels=runs, queue=False, api_visibility="private") \
        .then(settled_stop, [tab.chatbot], [tab.chatbot], queue=False, api_visibility="private")
    tab.question.input(None, [tab.question], [tab.counter], js=COUNTER_JS, api_visibility="private")
    tab.question.change(None, [tab.question], [tab.counter], js=COUNTER_JS, api_visibility="private")

    def clear() -> dict[Any, Any]:
        return {side.seen: gr.Gallery([], visible=False), side.cited: gr.Gallery([], visible=False),
                side.seen_refs: [], side.cited_refs: [], side.viewer.image: gr.Image(None, visible=False),
                side.viewer.caption: VIEWER_HINT, side.seen_title: gr.Markdown(visible=False),
                side.cited_title: gr.Markdown(visible=False), side.conversation: ()}

    cleared = [side.seen, side.cited, side.seen_refs, side.cited_refs, side.viewer.image, side.viewer.caption,
               side.seen_title, side.cited_title, side.conversation]
    tab.chatbot.clear(clear, None, cleared, queue=False, api_visibility="private")
    tab.new_btn.click(lambda: {tab.chatbot: [], **clear()}, None, [tab.chatbot, *cleared], cancels=runs, queue=False,
                      api_visibility="private")

    def show_bar(*values: Any) -> Any:
        """The bar for the settings as they stand; unchanged while they cannot be read (Ask says why)."""
        try:
            config, options = resolve_config(ctx.configs, values, ctx.policy, settings=ctx.settings)
        except gr.Error:
            return gr.skip()
        return model_bar(ctx.registry, config, options)

    panel = tab.panel
    for box in (panel.name, panel.backend, panel.model, panel.api_key, panel.api_base):
        box.change(show_bar, panel.inputs, tab.bar, queue=False, api_visibility="private")
    tab.example.change(ctx.pick_question, [tab.example, ctx.session], [tab.question], queue=False,
                       api_visibility="private")
    # the documents strip names the collection picked (it named the app's default whatever was picked); a value, not
    # props: a change of props (the chat's example chips) makes Gradio keep a page-less copy of the component, which
    # broke the sending of a tab opened later (``ui.lazy``), so the chips stay the default collection's
    tab.picker.change(lambda key, session: documents_strip(ctx, key, session), [tab.picker, ctx.session], [tab.strip],
                      queue=False, api_visibility="private")


def wire_viewer(ctx: AppContext, tab: AskTab) -> None:
    """A citation chip, a citation link of an earlier answer, a thumbnail: each opens its page in the viewer."""
    side = tab.side
    on_option, on_thumbnail = viewer_handlers(ctx)
    view_out = [side.viewer.image, side.viewer.caption]
    tab.chatbot.option_select(on_option, [ctx.session], view_out, api_visibility="private", concurrency_limit=8) \
        .then(None, None, None, js=SHOW_VIEWER_JS, api_visibility="private")
    tab.pick.change(lambda value, session: show_citation(ctx, value, session) if value else (gr.skip(), gr.skip()),
                    [tab.pick, ctx.session], view_out,
                    api_visibility="private", concurrency_limit=8) \
        .then(None, None, None, js=SHOW_VIEWER_JS, api_visibility="private")
    for gallery, refs in ((side.seen, side.seen_refs), (side.cited, side.cited_refs)):
        gallery.select(on_thumbnail, [refs, ctx.session], view_out, api_visibility="private", concurrency_limit=8) \
            .then(None, None, None, js=SHOW_VIEWER_JS, api_visibility="private")
