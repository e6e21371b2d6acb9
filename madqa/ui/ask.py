"""The Ask tab: a chat where each agent step streams in as it happens.

Searches and model notes arrive as collapsible thoughts, the pages each search showed the model
as thumbnails, and the answer with its citations as buttons; a citation (or any thumbnail)
opens the page large beside the chat. A bar above says who answers before anything is asked; a
question asked after an answer is a follow-up (``madqa.conversation``) until "New chat"; every
answer keeps its citations as links in its own text (``ui.citation_links``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import gradio as gr

from madqa.agent import Agent
from madqa.conversation import ChatTurn, add_turn
from madqa.errors import MadqaError
from madqa.evaluation.questions import MAX_QUESTION_CHARS
from madqa.highlight import Highlight
from madqa.settings import PipelineConfig
from madqa.trace import Trace
from madqa.types import AnswerStep, PageRef, SearchStep, Step, ToolStep
from madqa.ui.ask_hints import documents_strip, example_questions
from madqa.ui.citation_links import PICK_SUFFIX
from madqa.ui.collection_picker import build_picker, collection_status, follow_questions, partial_note
from madqa.ui.config_panel import FIELD_NAMES, ConfigPanel, build_config_panel, describe, resolve_config
from madqa.ui.context import AGENT_CONCURRENCY, AGENT_CONCURRENCY_ID, AppContext, api_parameters, shown_error
from madqa.ui.layout import SIDE_ID
from madqa.ui.lazy import send_after_first_paint
from madqa.ui.messages import (
    StepChat,
    citation_marks,
    md_escape,
    page_label,
    parse_citation_value,
    passage_value,
    pending_message,
    plural,
    shorten,
    stopped_chat,
    thumbnail_caption,
    trace_message,
    user_message,
)
from madqa.ui.modal import open_viewer_js
from madqa.ui.model_access import key_problem
from madqa.ui.model_bar import answerer, model_bar
from madqa.ui.pages import LARGE_BUDGET_PX, SOURCE_WORDS, THUMB_BUDGET_PX, highlighted_page_file, page_file
from madqa.ui.policy import visitor_steps
from madqa.ui.scope_picker import build_scope_picker, chosen_scope, follow_collection_picker, scope_line
from madqa.ui.sessions import MINE, disk_reason
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


def run_steps(ctx: AppContext, session: Any, corpus_key: str, config: PipelineConfig,
              options: dict[str, Any], question: str, trace: Trace,
              keys: list[str] | None = None, conversation: tuple[ChatTurn, ...] = (),
              scope: tuple[str, ...] = ()) -> Iterator[Step | str]:
    """The agent's steps for ``question``; plain strings are status lines while the corpus loads.

    With ``keys`` (the visitor's, from ``AppContext.job_slot``) a run on the server's keys is charged to their
    budgets there (a spent one forces the answer, flagged "stopped early"). Raises MadqaError when the corpus or
    a component cannot be used, or the question's time runs out. ``conversation``: the turns before a follow-up;
    ``scope``: the documents searched (empty: all; ScopeError for one the corpus lacks).
    """
    if corpus_key != MINE:  # a shared collection: what is searchable so far, once its first round is in
        collection = ctx.sessions.shared_collection(corpus_key)
        while not collection.wait_searchable(0.5):
            yield collection_status(collection)
    corpus = ctx.sessions.corpus(session, corpus_key)
    config = ctx.bounded(config, corpus_key, corpus)
    agent = Agent(corpus, config, ctx.registry, ctx.settings, options)
    steps = trace.follow(visitor_steps(agent.run(question, budget=ctx.budgets(keys, config, options), conversation=conversation,
                                                scope=scope), options))
    yield from ctx.timed(steps, keys)


def thumbnails(ctx: AppContext, session: Any, corpus_key: str,
               step: SearchStep | ToolStep) -> list[tuple[str, str, PageRef]]:
    """(image path, caption, page) of every page a search (or a navigation tool) newly showed the model."""
    corpus = ctx.sessions.corpus(session, corpus_key)
    out = []
    for ref in step.new_pages:
        try:
            out.append((str(page_file(corpus, ref, ctx.settings, THUMB_BUDGET_PX)), thumbnail_caption(ref, step), ref))
        except (MadqaError, OSError):
            continue  # the model saw it; the browser just gets no thumbnail (a full disk, say)
    return out


def starting() -> tuple[Any, ...]:
    """Before a question runs (browser only): Stop enabled, the galleries and their titles drawn (their code
    fetched now)."""
    return gr.Button(interactive=True), gr.Gallery(visible=True), gr.Gallery(visible=True), \
        gr.Markdown(visible=True), gr.Markdown(visible=True)


QUESTION_CHARS = MAX_QUESTION_CHARS
COUNTER_JS = f"(q) => `${{(q || '').length}} / {QUESTION_CHARS:,} characters`"
SHOW_VIEWER_JS = open_viewer_js("ask-page-viewer")  # a modal on a phone, beside the chat on a wide screen


def check_question_length(text: str) -> None:
    """gr.Error for a question past the box's limit: a client that skips the browser gets the same cap."""
    if len(text) > MAX_QUESTION_CHARS:
        raise shown_error(f"A question may have at most {MAX_QUESTION_CHARS:,} characters; this one has {len(text):,}.")


def other_collection(ctx: AppContext, turns: tuple[ChatTurn, ...], corpus_key: str) -> str:
    """When the chat's last turn searched another collection than ``corpus_key`` (the visitor switched in the picker
    mid-conversation), the note that this question is asked on its own; else ''. Its earlier turns' pages are not in
    this collection: a follow-up took them as its context (a model was offered pages it could not open) or was
    rewritten from a question about other documents, and nothing said so."""
    before = turns[-1].collection if turns else ""
    if not before or before == corpus_key:
        return ""
    return (f"asked on its own, not as a follow-up: the earlier turns of this chat searched {collection_name(ctx, before)}, "
            f"this question {collection_name(ctx, corpus_key)}")


def collection_name(ctx: AppContext, key: str) -> str:
    """A collection as the status line names it: 'the demo corpus', 'your uploads' or its own name."""
    if key == MINE:
        return "your uploads"
    collection = ctx.sessions.shared.get(key)
    return "the demo corpus" if collection is not None and collection.name == "demo" else key


def build_ask_tab(ctx: AppContext) -> None:
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
        # empty until there is a page: drawn just after the first paint; sticky beside the chat on a wide screen,
        # the viewer first, so a cited page shows beside the answer that cited it (ui.layout)
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
    seen_refs = gr.State([])
    cited_refs = gr.State([])
    conversation = gr.State(())  # the turns so far (madqa.conversation), while the chat shows them

    @api_parameters(["question", "history", *FIELD_NAMES, "session", "conversation", "scope", "request"])
    def ask(question_text: str, history: list[dict[str, Any]] | None, *args: Any) -> Iterator[tuple[Any, ...]]:
        *values, session, turns, scope, request = args
        text = (question_text or "").strip()
        if not text:
            raise shown_error("Type a question first.")
        check_question_length(text)
        config, options = resolve_config(ctx.configs, values, ctx.policy, settings=ctx.settings)
        with ctx.job_slot(session, request) as keys:
            # a follow-up of the turns on screen; an empty chat (New chat, the API with no history) starts anew
            earlier = tuple(t for t in turns or () if isinstance(t, ChatTurn)) if history else ()
            yield from answer(text, history, config, options, session, keys, earlier, chosen_scope(scope))

    def answer(text: str, history: list[dict[str, Any]] | None, config: PipelineConfig, options: dict[str, Any],
               session: Any, keys: list[str], turns: tuple[ChatTurn, ...],
               scope: tuple[str, ...] = ()) -> Iterator[tuple[Any, ...]]:
        secrets = [options.get("api_key", "")]
        corpus_key = ctx.sessions.key_of(session)
        history = list(history or [])
        trace_id = f"trace-{len(history)}"
        chat = StepChat(trace_id, corpus_key, config.backend, config.model, secrets,
                        label=answerer(ctx.registry, config.backend, config.model), scope_note=scope_line(scope))
        seen_items: list[tuple[str, str]] = []
        seen_list: list[list[Any]] = []
        cited_items: list[tuple[str, str]] = []
        cited_list: list[list[Any]] = []
        started = time.perf_counter()

        def out(pending: dict[str, Any] | None = None, done: bool = False) -> tuple[Any, ...]:
            # the question box is cleared once, then left alone: the next question may be typed meanwhile
            if pending is not None:
                pending["metadata"]["parent_id"] = trace_id
            summary = trace_message(trace_id, chat.steps, time.perf_counter() - started, done)
            shown = [*history, user_message(text), summary, *chat.thoughts, *([pending] if pending else []), *chat.after]
            return (gr.skip(), shown, list(seen_items), list(cited_items), list(seen_list), list(cited_list),
                    *viewer_reset(), gr.skip())

        viewer_cleared = [False]

        def viewer_reset() -> tuple[Any, Any]:
            if viewer_cleared[0]:
                return gr.skip(), gr.skip()
            viewer_cleared[0] = True  # a new question starts with an empty viewer, once
            return None, VIEWER_HINT

        problem = key_problem(config, options)
        if problem:
            chat.unreachable(problem)
            yield ("", *out(done=True)[1:])
            return
        moved = other_collection(ctx, turns, corpus_key)
        if moved:  # the earlier turns searched another collection: their pages are not this one's
            turns = ()
        follows = f" · a follow-up: {plural(len(turns), 'earlier turn')} go with it" if turns else ""
        follows += f" · {moved}" if moved else ""
        follows += f" · searching only {', '.join(scope)}" if scope else ""
        collection = ctx.sessions.shared.get(corpus_key)
        partial = partial_note(collection) if collection is not None else ""
        follows += f" · {partial}" if partial else ""
        yield ("", *out(pending_message("Starting", md_escape(describe(config) + follows)))[1:])
        trace = Trace(text, config)
        final: AnswerStep | None = None
        searched = False
        try:
            for item in run_steps(ctx, session, corpus_key, config, options, text, trace, keys, turns, scope):
                if isinstance(item, str):
                    yield out(pending_message("Waiting for the collection's first files to be indexed", item))
                    continue
                if isinstance(item, SearchStep) and collection is not None and not searched:
                    searched, partial = True, partial_note(collection)  # as it stood when the searching began
                if isinstance(item, AnswerStep) and partial:  # "no answer" from 1 of 9 files says so
                    item = replace(item, flags=(*item.flags, partial))
                if isinstance(item, AnswerStep) and moved:
                    item = replace(item, flags=(*item.flags, moved))
                pending = chat.add(item)
                if isinstance(item, (SearchStep, ToolStep)):
                    for path, caption, ref in thumbnails(ctx, session, corpus_key, item):
                        seen_items.append((path, caption))
                        seen_list.append([corpus_key, ref.file, ref.page])
                if isinstance(item, AnswerStep):
                    final = item if item.failure is None else None
                    for n, ref in enumerate(item.citations):
                        try:
                            path = page_file(ctx.sessions.corpus(session, corpus_key), ref, ctx.settings,
                                             THUMB_BUDGET_PX)
                        except (MadqaError, OSError):
                            continue
                        cited_items.append((str(path), thumbnail_caption(ref)))
                        quote = item.quote_of(n)
                        cited_list.append([corpus_key, ref.file, ref.page,
                                           [[quote] if quote else [], list(item.answer)]])
                yield out(pending, done=pending is None)
        except MadqaError as exc:
            chat.problem(str(exc))
            yield out(done=True)
        kept = add_turn(turns, text, final)
        yield (*out(done=True)[:-1], (*kept[:-1], replace(kept[-1], collection=corpus_key)))

    inputs = [question, chatbot, *panel.inputs, ctx.session, conversation, scope_picker]
    outputs = [question, chatbot, seen, cited, seen_refs, cited_refs, viewer.image, viewer.caption, conversation]
    drawn = [stop_btn, seen, cited, seen_title, cited_title]
    busy = gr.on([question.submit, ask_btn.click], starting, None, drawn,
                 queue=False, api_visibility="private")
    event = busy.then(ask, inputs, outputs, api_name="ask", concurrency_limit=AGENT_CONCURRENCY,
                      concurrency_id=AGENT_CONCURRENCY_ID, show_progress="minimal", trigger_mode="once")
    event.then(lambda: gr.Button(interactive=False), None, stop_btn, queue=False, api_visibility="private")

    def pick_example(evt: gr.SelectData) -> Any:
        return evt.value.get("text", "") if isinstance(evt.value, dict) else gr.skip()

    # an example chip asks as Ask does, and Stop and New chat cancel it too (they cancelled only a typed question)
    chip = chatbot.example_select(pick_example, None, [question], queue=False, api_visibility="private") \
        .then(starting, None, drawn, queue=False, api_visibility="private") \
        .then(ask, inputs, outputs, api_visibility="private", concurrency_limit=AGENT_CONCURRENCY,
              concurrency_id=AGENT_CONCURRENCY_ID, show_progress="minimal")
    chip.then(lambda: gr.Button(interactive=False), None, stop_btn, queue=False, api_visibility="private")
    stop_btn.click(lambda shown: (gr.Button(interactive=False), stopped_chat(shown)), [chatbot], [stop_btn, chatbot],
                   cancels=[event, chip], queue=False, api_visibility="private")
    question.input(None, [question], [counter], js=COUNTER_JS, api_visibility="private")
    question.change(None, [question], [counter], js=COUNTER_JS, api_visibility="private")

    def clear() -> tuple[Any, ...]:
        return gr.Gallery([], visible=False), gr.Gallery([], visible=False), [], [], gr.Image(None, visible=False), \
            VIEWER_HINT, gr.Markdown(visible=False), gr.Markdown(visible=False), ()

    cleared = [seen, cited, seen_refs, cited_refs, viewer.image, viewer.caption, seen_title, cited_title, conversation]
    chatbot.clear(clear, None, cleared, queue=False, api_visibility="private")
    new_btn.click(lambda: ([], *clear()), None, [chatbot, *cleared], cancels=[event, chip], queue=False,
                  api_visibility="private")

    def show_bar(*values: Any) -> Any:
        """The bar for the settings as they stand; unchanged while they cannot be read (Ask says why)."""
        try:
            config, options = resolve_config(ctx.configs, values, ctx.policy, settings=ctx.settings)
        except gr.Error:
            return gr.skip()
        return model_bar(ctx.registry, config, options)

    for box in (panel.name, panel.backend, panel.model, panel.api_key, panel.api_base):
        box.change(show_bar, panel.inputs, bar, queue=False, api_visibility="private")

    example.change(ctx.pick_question, [example, ctx.session], [question], queue=False, api_visibility="private")
    # the documents strip names the collection picked (it named the app's default whatever was picked); a value, not
    # props: a change of props (the chat's example chips) makes Gradio keep a page-less copy of the component, which
    # broke the sending of a tab opened later (``ui.lazy``), so the chips stay the default collection's
    picker.change(lambda key, session: documents_strip(ctx, key, session), [picker, ctx.session], [strip],
                  queue=False, api_visibility="private")
    on_option, on_thumbnail = viewer_handlers(ctx)
    view_out = [viewer.image, viewer.caption]
    chatbot.option_select(on_option, [ctx.session], view_out, api_visibility="private", concurrency_limit=8) \
        .then(None, None, None, js=SHOW_VIEWER_JS, api_visibility="private")
    pick.change(lambda value, session: show_citation(ctx, value, session) if value else (gr.skip(), gr.skip()),
                [pick, ctx.session], view_out,
               api_visibility="private", concurrency_limit=8) \
        .then(None, None, None, js=SHOW_VIEWER_JS, api_visibility="private")
    for gallery, refs in ((seen, seen_refs), (cited, cited_refs)):
        gallery.select(on_thumbnail, [refs, ctx.session], view_out, api_visibility="private", concurrency_limit=8) \
            .then(None, None, None, js=SHOW_VIEWER_JS, api_visibility="private")
