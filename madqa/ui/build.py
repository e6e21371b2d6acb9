"""``build_app(settings, registry) -> gr.Blocks``: the six tabs, the session state and the queue.

Building starts indexing the shared collections (the demo corpus, the operator's) in the background (only new or
changed files after the first start), so the page opens at once with a status line that follows the indexing.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gradio as gr
from gradio.utils import get_upload_folder
from starlette.middleware import Middleware

from madqa.collections import CollectionSpec, served_collections
from madqa.errors import SettingsError
from madqa.evaluation.questions import QuestionFileError, load_questions
from madqa.settings import PipelineConfig, Settings, config_name, list_configs, operator_configs
from madqa.ui.ask import build_ask_tab
from madqa.ui.citation_links import CITE_CSS, CITE_JS
from madqa.ui.collection_picker import PickerRefresh, picker_update, wire_pickers
from madqa.ui.compare import build_compare_tab
from madqa.ui.context import AppContext
from madqa.ui.corpus import build_corpus_tab
from madqa.ui.evaluate import build_evaluate_tab
from madqa.ui.given_marks import session_token
from madqa.ui.human import build_human_tab
from madqa.ui.layout import LAYOUT_CSS, LAYOUT_JS
from madqa.ui.lazy import send_when_opened
from madqa.ui.leftovers import remove_leftovers, sweep_at_start
from madqa.ui.limits import Limits, RequestGuard
from madqa.ui.modal import MODAL_CSS, MODAL_JS
from madqa.ui.plugins import build_plugins_tab
from madqa.ui.policy import WebPolicy
from madqa.ui.sessions import MAX_UPLOAD_MB, SessionStore, new_session
from madqa.ui.slim_page import SlimPage

log = logging.getLogger("madqa.ui")
REPO = Path(__file__).resolve().parent.parent.parent
DEMO_DOCS = REPO / "data" / "demo" / "docs"
DEMO_QUESTIONS = REPO / "data" / "demo" / "questions.jsonl"
QUEUE_SIZE = 64  # requests waiting beyond this are turned away with "queue full"
DEFAULT_CONCURRENCY = 4
CSS = """
#app-title h1 { font-size: 1.6rem; margin: 0 0 .25rem 0; }
#ask-chat .message-wrap img { max-height: 260px; }
/* citations: chips under the answer, left-aligned with it (Gradio's options sit right, like a user's) */
.message-wrap .options { display: flex !important; flex-wrap: wrap; justify-content: flex-start !important;
  margin-left: 0 !important; margin-right: auto !important; padding: 4px 0 8px 0 !important; gap: 8px !important;
  max-width: 100% !important; }
.message-wrap .option { width: auto !important; max-width: 100% !important; flex-direction: row !important;
  border-style: solid !important; border-radius: 999px !important; padding: 4px 12px !important;
  font-size: .92em; text-align: left; }
/* page galleries: the caption under the thumbnail, whole, never over the page */
.page-gallery .thumbnail-item { aspect-ratio: auto !important; height: auto !important; display: flex;
  flex-direction: column; }
.page-gallery .thumbnail-item img { height: 150px !important; object-fit: contain; }
.page-gallery .caption-label { position: static !important; max-width: 100% !important; white-space: normal !important;
  overflow: visible !important; text-overflow: clip !important; border: none !important; opacity: 1 !important;
  overflow-wrap: break-word; word-break: normal; font-size: .85em; }
/* what shows is the page script's data-shown (wrapped at the file name's separators); the text stays in the
   element for Gradio to update */
.page-gallery .caption-label[data-shown] { font-size: 0 !important; }
.page-gallery .caption-label[data-shown]::after { content: attr(data-shown); font-size: .85rem; }
.gallery-title p { margin: 0; }
/* Evaluate's headline cards: one row per config, the number big, its meaning under it */
.eval-cards { display: flex; flex-wrap: wrap; gap: 10px; align-items: stretch; margin-bottom: 10px; }
.eval-cards > b { flex-basis: 100%; }
.eval-card { flex: 1 1 150px; border: 1px solid var(--border-color-primary); border-radius: 10px; padding: 10px 12px;
  background: var(--background-fill-secondary); }
.eval-card-value { font-size: 1.8rem; font-weight: 700; line-height: 1.1; }
.eval-card-name { font-weight: 600; }
.eval-card-why { font-size: .82em; color: #4b5563; }
#eval-built ol { margin: 0; padding-left: 1.4em; } #eval-built li { margin: .2em 0; }
#eval-built .built-none { color: #4b5563; margin: 0; }
#eval-scores th span, #eval-scores td span { word-break: normal !important; overflow-wrap: normal !important; }
/* a slider's range ends (Gradio's light grey reads 1.9:1; axe's colour contrast wants 4.5:1) */
.slider_input_container .min_value, .slider_input_container .max_value { color: #4b5563 !important; }
#ask-counter p, #ask-documents p { font-size: .85em; color: #4b5563; margin: 0; }  /* a colour, not opacity: AA */
/* a dropdown's typed filter text (Gradio greys it to #bbbbc2 while options show): read at AA, 4.5:1 */
input.subdued { color: #4b5563 !important; }
/* a visible focus ring for keyboard users */
:focus-visible { outline: 3px solid #2563eb !important; outline-offset: 2px !important; }
/* tables scroll sideways instead of wrapping letter by letter */
.table-wrap { overflow-x: auto !important; }
.table-wrap td, .table-wrap th { min-width: 6ch; overflow-wrap: normal !important; word-break: normal !important; }
@media (max-width: 640px) {
  #header { flex-direction: column !important; gap: 0 !important; }
  #header > * { min-width: 100% !important; }
  #app-title p { display: none; }  /* the line under the title */
  #ask-chat { height: 330px !important; max-height: 330px !important; }
  /* the question box a whole line, Ask and Stop under it */
  #ask-input-row { flex-wrap: wrap !important; }
  #ask-input-row > .form:has(#ask-question) { flex: 1 1 100% !important; min-width: 100% !important; }
}
/* quiet text in colours that still read (WCAG AA, 4.5:1 on white): the footer links, hints, "- or -" */
footer .show-api, footer .settings, footer a, footer button, footer span { color: #4b5563 !important; }
.info-text, [data-testid="upload-text"] .or { color: #4b5563 !important; }
.message-wrap em, #ask-chat em, #compare-chat-a em, #compare-chat-b em { color: #1f2937 !important; }
button[role="tab"].selected { color: #c2410c !important; }  /* the open tab: orange-700 reads, orange-500 did not */
/* a config that cannot reach its model here: still choosable (it says why), but greyed */
.keyless-config, .keyless-config * { color: #6b7280 !important; font-style: italic; }
#ask-new-chat { white-space: nowrap; flex-shrink: 0; }
""" + MODAL_CSS + CITE_CSS + LAYOUT_CSS
# Accessible names Gradio leaves empty (the expand arrow of a thought), kept up as the chat re-renders.
A11Y_JS = r"""
() => {
  const KEYLESS = /\(needs ([A-Z0-9_]+) or your key\)/;
  // a thumbnail's caption: the full text stays in the page (Gradio updates it) and in the title; what shows
  // is the file name wrapped at its separators (_ - . /), never mid-word, long names cut in the middle
  const CAPTION = /^(p\.\d+ · )(.*?)( \(search \d+\))?$/;
  const middle = (n) => n.length <= 32 ? n : `${n.slice(0, 18)}…${n.slice(-13)}`;
  const shown = (text) => {
    const m = CAPTION.exec(text);
    const [head, file, tail] = m ? [m[1], m[2], m[3] || ''] : ['', text, ''];
    return head + middle(file).replace(/([_\-./])/g, '$1\u200b') + tail;
  };
  const captions = () => document.querySelectorAll('.page-gallery .caption-label').forEach((el) => {
    const text = el.textContent || '';
    if (el.title === text) return;
    el.title = text;
    el.dataset.shown = shown(text);
  });
  const name = () => {
    captions();
    document.querySelectorAll('span.arrow button.icon-button').forEach((b) => {
      if (!b.getAttribute('aria-label')) b.setAttribute('aria-label', 'Show or hide the steps');
    });
    // a thought's title is itself the button (role=button, Enter opens it): the arrow inside leaves the
    // accessibility tree (inert), so keyboard and screen-reader users meet one control, not one inside another
    // (axe: nested-interactive); a click on the arrow still lands on the title
    document.querySelectorAll('[role="button"] span.arrow:not([inert])').forEach((s) => s.setAttribute('inert', ''));
    document.querySelectorAll('button.icon-button').forEach((b) => {
      if (!b.getAttribute('aria-label') && b.title) b.setAttribute('aria-label', b.title);
    });
    // a spoken name that holds the words on screen (axe: label-content-name-mismatch): gallery thumbnails
    // ("p.6 · report.pdf, thumbnail 1 of 5") and the upload boxes ("Drop File Here - or - Click to Upload")
    document.querySelectorAll('.thumbnail-item[aria-label]').forEach((b) => {
      const base = b.dataset.a11yBase || b.getAttribute('aria-label');
      b.dataset.a11yBase = base;
      const text = (b.textContent || '').replace(/\s+/g, ' ').trim();
      const want = text ? `${text}, ${base.toLowerCase()}` : base;
      if (b.getAttribute('aria-label') !== want) b.setAttribute('aria-label', want);
    });
    document.querySelectorAll('[aria-dropeffect][aria-label]').forEach((box) => {
      const text = (box.innerText || '').replace(/\s+/g, ' ').trim();
      if (text && box.getAttribute('aria-label') !== text) box.setAttribute('aria-label', text);
    });
    // Gradio's empty-value boxes carry an aria-label on a plain div (axe: aria-prohibited-attr): an image role
    document.querySelectorAll('div.unpadded_box[aria-label]:not([role])').forEach((d) => d.setAttribute('role', 'img'));
    // the page viewer's image is a button (full size) with no words: give it a name (axe: button-name)
    document.querySelectorAll('.image-container > button:not([aria-label])').forEach((b) => {
      if (!(b.textContent || '').trim()) b.setAttribute('aria-label', 'Show the page full size');
    });
    // the chat's example questions are buttons in a role=list without list items (axe: aria-required-children)
    document.querySelectorAll('.examples[role="list"]').forEach((d) => {
      d.setAttribute('role', 'group');
      d.setAttribute('aria-label', 'Example questions');
    });
    // configs that need a key this server lacks: greyed in every picker, the reason in a tooltip
    document.querySelectorAll('[role="option"]:not(.keyless-config), #eval-configs label:not(.keyless-config)')
      .forEach((el) => {
        const m = KEYLESS.exec(el.textContent || '');
        if (!m) return;
        el.classList.add('keyless-config');
        el.title = `Needs ${m[1]} on the server, or paste your own key under API key (it stays in this session)`;
      });
  };
  name();
  new MutationObserver(name).observe(document.body, {childList: true, subtree: true, characterData: true});
""" + MODAL_JS + CITE_JS + LAYOUT_JS + """
}
"""


def theme() -> gr.themes.Base:
    """The default theme with system fonts: nothing is fetched from the internet."""
    system = ["ui-sans-serif", "system-ui", "-apple-system", "Segoe UI", "Roboto", "sans-serif"]
    mono = ["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "monospace"]
    # the primary buttons one shade darker than Gradio's orange-500: white on it reads at 5.2:1, not 2.8:1
    return gr.themes.Default(font=system, font_mono=mono).set(
        button_primary_background_fill="*primary_700", button_primary_background_fill_hover="*primary_800",
        button_primary_background_fill_dark="*primary_700", button_primary_background_fill_hover_dark="*primary_800",
        button_primary_text_color="white", button_primary_text_color_dark="white",
        # Stop: red-700 under white text (red-500 read at 3.3:1)
        button_cancel_background_fill="#b91c1c", button_cancel_background_fill_hover="#991b1b",
        button_cancel_background_fill_dark="#b91c1c", button_cancel_background_fill_hover_dark="#991b1b",
        button_cancel_text_color="white", button_cancel_text_color_dark="white")


def launch_options(settings: Settings, app: gr.Blocks | None = None) -> dict[str, Any]:
    """``launch()`` arguments: bind address and port from settings; no share link, no run history
    (it would keep inputs, API keys included, in the browser), no SSR (needs Node), upload limit, and
    no raw exception text for visitors (``show_error=False``: only gr.Error messages are shown).

    With the ``app`` of ``build_app``, its per-client request and upload limits guard the server. The page is
    served without the per-component API schemas the browser never reads and without the tabs not opened yet, and
    kept once made (``SlimPage``: the app has no logins, so every visitor gets the same page)."""
    limits = getattr(app, "madqa_limits", None)
    trust_no_proxy()
    guard = [Middleware(RequestGuard, limits=limits)] if limits is not None else []
    return {"app_kwargs": {"middleware": [*guard, Middleware(SlimPage, cache_pages=True)]}, "server_name": settings.host, "server_port": settings.port, "share": False, "show_error": False,
            "run_history": False, "ssr_mode": False, "mcp_server": False, "enable_monitoring": False,
            "max_file_size": f"{MAX_UPLOAD_MB}mb", "theme": theme(), "css": CSS, "js": A11Y_JS,
            "footer_links": ["api", "settings"]}


def trust_no_proxy() -> None:
    """Keep uvicorn from rewriting the client's address: its ``proxy_headers`` (on in the config Gradio builds)
    replaces the socket's peer with an ``X-Forwarded-For`` entry whenever the peer is in ``FORWARDED_ALLOW_IPS``
    (default 127.0.0.1 and ::1: a same-host proxy, a sidecar, a tunnel), which anyone can forge; an empty value
    trusts no peer. ``MADQA_PROXY_HOPS`` alone decides what of the header madqa believes (``client_address``).
    Gradio reads X-Forwarded-Proto/Host itself, so its https links do not depend on uvicorn's rewrite."""
    was = os.environ.get("FORWARDED_ALLOW_IPS")
    if was:
        log.warning("FORWARDED_ALLOW_IPS=%r is ignored: client addresses come from the socket, and MADQA_PROXY_HOPS "
                    "says how many X-Forwarded-For entries proxies add (docs/space.md)", was)
    os.environ["FORWARDED_ALLOW_IPS"] = ""


def demo_questions(path: Path) -> list[dict[str, Any]]:
    """The demo question set, or [] when it is missing or unreadable (the app works without it)."""
    if not path.is_file():
        return []
    try:
        questions, _ = load_questions(path)
    except QuestionFileError:
        return []
    return questions


def served_configs(settings: Settings, policy: WebPolicy) -> tuple[dict[str, PipelineConfig], str]:
    """The configs the web app offers (the presets a visitor's backends allow, then the operator's own from
    ``MADQA_CONFIG_DIR`` and a ``MADQA_CONFIG`` path) and the default's name; SettingsError with one line per
    problem when an own config is broken or not offered, or the default is not among them."""
    own, problems = operator_configs(settings.config_dir, settings.config)
    for name, config in own.items():
        if not policy.backend_allowed(config.backend):
            problems.append(f"config {name!r}: its backend {config.backend!r} is not offered (MADQA_WEB_BACKENDS: "
                            f"{', '.join(policy.backends) or 'none'})")
    configs = {**policy.offered_configs(list_configs()), **policy.offered_configs(own)}
    default = config_name(settings.config)
    if not problems and default not in configs:
        problems.append(f"MADQA_CONFIG names a config {settings.config!r} the web app does not offer (offered: "
                        f"{', '.join(configs)}; MADQA_WEB_BACKENDS picks the backends, MADQA_CONFIG_DIR adds "
                        "your own config files)")
    if problems:
        raise SettingsError("the web app's configs have problems:\n" + "\n".join(f"  - {p}" for p in problems))
    return configs, default


def build_app(settings: Settings, registry: Any, *, demo_dir: str | Path | None = None,
              questions_path: str | Path | None = None, policy: WebPolicy | None = None,
              collections: Sequence[CollectionSpec] | None = None, demo: bool | None = None) -> gr.Blocks:
    """The web app for ``settings`` and the components of ``registry``; call ``.launch()`` on it.

    ``policy`` (default: from ``settings``) says what visitors may do; only its configs are offered. ``collections``
    (default: ``MADQA_COLLECTIONS``) are served to every visitor beside the demo corpus (unless ``demo`` is False,
    default ``MADQA_DEMO``)."""
    policy = policy or WebPolicy.from_settings(settings, registry=registry)
    configs, default = served_configs(settings, policy)
    collections = served_collections(settings.collections) if collections is None else list(collections)
    demo = settings.demo if demo is None else demo
    sessions = SessionStore(settings, registry, (Path(demo_dir) if demo_dir else DEMO_DOCS) if demo else None,
                            collections)
    # no session outlives the process (tokens live in memory): what earlier runs left in the uploads area goes now
    uploads_lock = sweep_at_start(Path(settings.home), sessions.uploads_root, settings.corpora_dir)
    sessions.sweep(max_age_s=settings.session_ttl_s)
    sessions.start_sweeping(settings.sweep_interval_s, settings.session_ttl_s)
    log.info("serving %d collections: %s", len(sessions.shared),
             ", ".join(f"{c.name} ({c.root})" for c in sessions.shared.values()) or "none (uploads only)")
    sessions.start_indexing()
    limits = Limits(settings, [Path(get_upload_folder()), sessions.uploads_root])
    ctx = AppContext(settings, registry, sessions, configs, default,
                     demo_questions(Path(questions_path) if questions_path else DEMO_QUESTIONS) if demo else [],
                     policy=policy,
                     limits=limits)
    with gr.Blocks(title="madqa — questions over your PDFs", analytics_enabled=False,
                   delete_cache=(3600, 6 * 3600)) as app:
        # a session (and its uploads) lives session_ttl_s after its state last changed, even when its
        # client never says goodbye (raw HTTP clients never do); the sweeper catches what Gradio drops
        # a plain function, not the bound method: Gradio deep-copies the config (the callback in it) for every
        # page request, and a bound method makes that copy fail on the SessionStore's lock and start again
        # item by item (about twice the time)
        def forget_session(session: Any) -> None:
            sessions.forget(session)
            ctx.marks.forget(session_token(session))

        ctx.session = gr.State(None, time_to_live=settings.session_ttl_s, delete_callback=forget_session)
        with gr.Row(elem_id="header"):
            # one block for the title and the line under it (each block drawn costs the first paint)
            gr.Markdown("# madqa\n\nAsk questions over a collection of PDFs; the agent searches, reads the pages as "
                        "images and answers with page-exact citations.", elem_id="app-title")
            ctx.header = gr.Markdown(ctx.header_text(None), elem_id="status")
        with gr.Tabs():
            with gr.Tab("Ask", id="ask") as ask_tab:
                build_ask_tab(ctx)
            with gr.Tab("Compare", id="compare") as compare_tab:
                build_compare_tab(ctx)
            with gr.Tab("Corpus", id="corpus") as corpus_tab:
                corpus_shown = build_corpus_tab(ctx, corpus_tab)
            with gr.Tab("Evaluate", id="evaluate") as evaluate_tab:
                build_evaluate_tab(ctx)
            with gr.Tab("You search", id="human") as human_tab:
                build_human_tab(ctx)
            with gr.Tab("Plugins", id="plugins") as plugins_tab:
                build_plugins_tab(ctx)
        # one choice of collection for every tab: each tab's picker follows the session's when the tab opens
        ask_picker, *tab_pickers = wire_pickers(ctx)
        ask_tab.select(lambda s: picker_update(ctx, s), [ctx.session], ask_picker.outputs[0], api_visibility="private",
                       queue=False)
        for tab, picker in zip((compare_tab, evaluate_tab, human_tab, plugins_tab), [*tab_pickers, None],
                               strict=True):
            opened = send_when_opened(tab)  # the first page carries the Ask tab alone; the others come when opened
            if picker is not None:  # then, and at every later opening, its picker's choices are brought up to date
                refresh_when_in_page(opened, tab, picker, ctx.session)
        # what the Corpus tab shows on opening, again once its parts exist in the page (an update before is lost)
        send_when_opened(corpus_tab).then(**corpus_shown, api_visibility="private")
        timer = gr.Timer(1.0, active=ctx.indexing)

        def status(session: Any) -> tuple[Any, ...]:  # the status line and Ask's picker follow the indexing
            return ctx.header_text(session), gr.Timer(active=ctx.indexing), picker_update(ctx, session)

        def start(session: Any) -> tuple[Any, ...]:
            # made here, never sent by a client; the pickers open on the default already. Ask's picker is brought up
            # to date too: its labels were made when the page was built, and an index that finished since then
            # stops the timer at once, so no tick would ever relabel "indexing, 0 of 4 files searchable"
            session = session if isinstance(session, dict) else new_session(sessions.default_key)
            return session, *status(session)

        timer.tick(status, [ctx.session], [ctx.header, timer, ask_picker.outputs[0]], api_visibility="private",
                   queue=False)
        app.load(start, [ctx.session], [ctx.session, ctx.header, timer, ask_picker.outputs[0]], api_visibility="private",
                 queue=False)
    # api_open=False (Gradio's default only on Spaces): /gradio_api/run/NAME may not skip the queue and its limits
    app.queue(max_size=QUEUE_SIZE, default_concurrency_limit=DEFAULT_CONCURRENCY, api_open=False)
    app.madqa_limits = limits  # read by launch_options
    app.madqa_uploads_lock = uploads_lock  # held while the app lives: another app on this MADQA_HOME sweeps nothing
    app.madqa_sessions = sessions  # read by stop_app
    return app


def refresh_when_in_page(opened: Any, tab: gr.Tab, picker: PickerRefresh, session: gr.State) -> None:
    """Refresh ``picker`` after its tab was first sent (``opened``) and at later openings, never before: a change of
    choices to a component not yet in the page breaks its tab's send (``picker_update``). Which tabs are in the page is
    kept in the session (``in_page``).

    A later opening goes through a State (``reopened``): an event writing to the picker itself at every opening must
    answer something at the first one too, and any update, even ``gr.skip()``, makes Gradio keep a copy of the picker
    made without its page, which failed the tab's send when it came second (the tab stayed empty). A State takes a skip
    as nothing."""
    name = tab.id or tab.label
    reopened = gr.State(0)

    def first(state: Any) -> tuple[Any, ...]:
        if not isinstance(state, dict):
            return (gr.skip(), *picker.fn(state))
        return ({**state, "in_page": sorted({*state.get("in_page", []), name})}, *picker.fn(state))

    def again(state: Any, count: Any) -> Any:
        in_page = isinstance(state, dict) and name in state.get("in_page", [])
        return (count or 0) + 1 if in_page else gr.skip()

    def refresh(state: Any) -> Any:
        values = picker.fn(state)
        return values[0] if len(values) == 1 else values  # one output takes the value itself, never a 1-tuple

    opened.then(first, [session], [session, *picker.outputs], api_visibility="private", queue=False)
    # queued: Gradio's page fires a State's change only on a queued answer (it carries the changed states)
    tab.select(again, [session, reopened], [reopened], api_visibility="private", concurrency_limit=None)
    reopened.change(refresh, [session], picker.outputs, api_visibility="private", queue=False)


def stop_app(app: gr.Blocks) -> None:
    """A graceful stop (SIGTERM, Ctrl-C): Gradio closed (its server thread is given 5 s), the upload sweeper and the
    PDF reader and page drawer processes stopped, and what no later run could reach removed: this run's page images and the
    sessions' uploads (their tokens die with the process). An ingest still running is left to die with the process:
    a generation is swapped in atomically, so the next start finds the previous one (or none) and indexes again."""
    from madqa.page_drawer import POOL as DRAWERS
    from madqa.pdf_reader import POOL
    from madqa.ui.pages import remove_image_folder

    app.close(verbose=False)
    sessions = getattr(app, "madqa_sessions", None)
    if sessions is not None:
        sessions.stop_sweeping()
    POOL.close()
    DRAWERS.close()
    remove_image_folder()
    lock = getattr(app, "madqa_uploads_lock", None)
    if sessions is not None and lock is not None:  # only the app that swept at start owns the uploads area
        found = remove_leftovers(sessions.uploads_root, Path(sessions.settings.corpora_dir))
        if found.folders:
            log.info("stopping: removed %d session upload folder(s), %.1f MB", found.folders, found.bytes / 2**20)
        lock.release()
