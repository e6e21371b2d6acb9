"""The Corpus tab: upload PDFs into this session's own corpus, list documents, switch corpora.

Uploads are copied (under sanitised names) into the session's folder, indexed with progress per
file and per page (an OCR of a scan says which page), and reported file by file; a file that cannot
be indexed is said so and removed. The list shows each document's pages and where each page's searchable text came from.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from madqa.corpus import Corpus
from madqa.errors import MadqaError
from madqa.scope import search_as_written
from madqa.settings import PipelineConfig
from madqa.ui.collection_picker import collection_status
from madqa.ui.context import AppContext, shown_error, shown_info
from madqa.ui.messages import hide_paths, md_escape, plural
from madqa.ui.sessions import MAX_SESSION_MB, MAX_UPLOAD_FILES, MAX_UPLOAD_MB, Progress, new_session, valid_token

DOC_COLUMNS = ["file", "pages", "text", "OCR", "none", "text source by page", "notes"]
DOC_WIDTHS = ["28%", "9%", "8%", "8%", "9%", "21%", "17%"]
UPLOAD_COLUMNS = ["file", "result", "pages", "details"]
HIT_COLUMNS = ["file", "page", "score", "snippet"]


def page_ranges(pages: Iterable[int]) -> str:
    """``1-3, 5`` for pages 1, 2, 3, 5."""
    ordered = sorted(set(pages))
    spans: list[str] = []
    start: int | None = None
    prev = 0
    for p in [*ordered, None]:
        if start is not None and (p is None or p != prev + 1):
            spans.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = None
        if p is not None and start is None:
            start = p
        prev = p if p is not None else prev
    return ", ".join(spans)


def documents_table(corpus: Corpus | None) -> tuple[pd.DataFrame, str]:
    """One row per document, and a warning naming documents with no searchable text."""
    if corpus is None:
        return pd.DataFrame(columns=DOC_COLUMNS), "No documents yet: upload PDFs above."
    sources = corpus.page_sources() if corpus.page_count <= 20_000 else {}
    rows, silent = [], []
    for file in sorted(corpus.documents):
        doc = corpus.documents[file]
        by_source: dict[str, list[int]] = {}
        for page in range(1, doc.pages + 1):
            by_source.setdefault(sources.get((file, page), "?"), []).append(page)
        detail = "; ".join(f"{src}: {page_ranges(pages)}" for src, pages in sorted(by_source.items())) if sources else ""
        searchable = doc.sources.get("text", 0) + doc.sources.get("ocr", 0) + doc.sources.get("imported", 0)
        if not searchable:
            silent.append(file)
        notes = list(doc.warnings) + (["⚠ no searchable text"] if not searchable else [])
        rows.append([file, doc.pages, doc.sources.get("text", 0), doc.sources.get("ocr", 0) + doc.sources.get(
            "imported", 0), doc.sources.get("none", 0) + doc.sources.get("blank", 0), detail,  # no text either way
            hide_paths("; ".join(notes))])
    summary = (f"{plural(len(rows), 'document')}, {plural(corpus.page_count, 'page')}. Page text comes from the "
               "PDF's text layer (text), Tesseract OCR of the page image (OCR), or neither (none; "
               "blank: a page with no text, image or drawing).")
    summary += f"  \nLanguage: {md_escape(corpus.language_note)}."
    warnings = corpus.manifest.get("language", {}).get("warnings") or []
    summary += "".join(f"  \n⚠ {md_escape(w)}." for w in warnings)
    if silent:
        summary += ("  \n⚠ **No searchable text** (no text layer, and OCR found nothing — is Tesseract "
                    "installed?): " + ", ".join(md_escape(f) for f in silent) + ". The agent cannot find these by search.")
    return pd.DataFrame(rows, columns=DOC_COLUMNS), summary


def corpus_choices(ctx: AppContext) -> list[tuple[str, str]]:
    """The Corpus tab's choices, in fixed words (their sizes and status are in the pickers and the status line)."""
    shared = [("Demo corpus (shared, read-only)" if key == "demo" else f"{key} (shared, read-only)", key)
              for key in ctx.sessions.shared]
    return [*shared, ("My uploads (this browser session only)", "mine")]


def _ensure(session: Any, default: str = "demo") -> dict[str, Any]:
    if isinstance(session, dict) and valid_token(session.get("token")):
        return session
    return new_session(default)


@dataclass(frozen=True)
class Listing:
    """What the documents part shows for a session: the table and the line above it."""

    table: pd.DataFrame
    text: str


@dataclass(frozen=True)
class Upload:
    """An upload done: the session after it (searching the uploads when they added pages), each file's result."""

    session: dict[str, Any]
    results: pd.DataFrame
    listing: Listing


def listing(ctx: AppContext, session: Any) -> Listing:
    """The documents of the collection the session searches; a shared one not searchable yet says how it stands."""
    key = ctx.sessions.key_of(session)
    shared = ctx.sessions.shared.get(key)
    if shared is not None and shared.corpus is None:  # not searchable yet (or never): say how it stands
        return Listing(pd.DataFrame(columns=DOC_COLUMNS), collection_status(shared))
    try:
        corpus = ctx.sessions.corpus(session, key)
    except MadqaError as exc:
        return Listing(pd.DataFrame(columns=DOC_COLUMNS), md_escape(str(exc)) if shared else "No uploads yet.")
    table, text = documents_table(corpus)
    return Listing(table, f"{collection_status(shared)}  \n{text}" if shared is not None and not shared.ready else text)


def switched(ctx: AppContext, key: str, session: Any) -> dict[str, Any]:
    """The session searching ``key`` (one it may search; else it stays as it was), its uploads kept from the sweeper."""
    session = _ensure(session, ctx.sessions.default_key)
    session = {**session, "corpus": key if key == "mine" or key in ctx.sessions.shared else
               ctx.sessions.key_of(session)}
    ctx.sessions.touch(session["token"])
    return session


def add_uploads(ctx: AppContext, paths: list[str], session: Any, report: Progress) -> Upload:
    """Index the uploaded PDFs into the session's own corpus; gr.Error when nothing could be taken. An upload that
    added pages is what the session searches next; one that added none changes nothing."""
    session = _ensure(session, ctx.sessions.default_key)
    before = ctx.sessions.key_of(session)
    uploads = [(Path(p).name, Path(p)) for p in paths]
    try:
        outcome = ctx.sessions.add_files(session["token"], uploads, report)
    except MadqaError as exc:
        raise shown_error(str(exc)) from None
    rows = [[r.saved_as or r.name, r.status, r.pages or "", hide_paths(r.detail)] for r in outcome.files]
    added = any(r.status == "indexed" and r.pages for r in outcome.files)
    mine = ctx.sessions.own_corpus(session["token"]) is not None
    session = {**session, "corpus": "mine" if added or (before == "mine" and mine) else
               (before if before != "mine" else ctx.sessions.default_key)}
    return Upload(session, pd.DataFrame(rows, columns=UPLOAD_COLUMNS), listing(ctx, session))


def removed_uploads(ctx: AppContext, session: Any) -> dict[str, Any]:
    """The session after its uploads were deleted: searching what it searched, or the default instead of them."""
    session = _ensure(session, ctx.sessions.default_key)
    ctx.sessions.remove_all(session["token"])
    before = ctx.sessions.key_of(session)
    return {**session, "corpus": before if before != "mine" else ctx.sessions.default_key}


def search_corpus(ctx: AppContext, text: str, session: Any) -> pd.DataFrame:
    """The pages a BM25 search of the session's corpus finds, as the agent's tool finds them (``file:NAME`` too)."""
    text = (text or "").strip()
    if not text:
        raise shown_error("Type something to search for.")
    corpus = ctx.corpus_or_error(session)
    config = ctx.bounded(ctx.configs.get(ctx.default_config) or PipelineConfig(),
                         ctx.sessions.key_of(session), corpus)
    try:
        retriever = ctx.registry.create("retriever", config.retriever, corpus, {})
        result = search_as_written(retriever, text, 10, corpus.documents)  # file:NAME: that document only
    except MadqaError as exc:
        raise shown_error(str(exc)) from None
    rows = [[h.file, h.page, round(h.score, 2), h.snippet] for h in result.hits]
    if result.note:
        shown_info(result.note)
    return pd.DataFrame(rows, columns=HIT_COLUMNS)


@dataclass
class CorpusTab:
    """The Corpus tab's components that its events read and write."""

    choice: gr.Radio
    files: gr.File
    add_btn: gr.Button
    clear_btn: gr.Button
    results: gr.DataFrame
    summary: gr.Markdown
    docs: gr.DataFrame
    query: gr.Textbox
    search_btn: gr.Button
    hits: gr.DataFrame


def corpus_layout(ctx: AppContext) -> CorpusTab:
    """Which collection is searched and the upload on the left; the documents and a search of them on the right."""
    with gr.Row(equal_height=False):
        with gr.Column(scale=2):
            choice = gr.Radio(corpus_choices(ctx), value=ctx.sessions.default_key, label="The agent searches",
                              elem_id="corpus-choice")
            files = gr.File(file_count="multiple", file_types=[".pdf"], elem_id="corpus-files",
                            label=f"Upload PDFs — at most {MAX_UPLOAD_FILES} documents, {MAX_UPLOAD_MB} MB each, "
                                  f"{MAX_SESSION_MB} MB in all; only you can see or search them")
            with gr.Row():
                add_btn = gr.Button("Add to my corpus", variant="primary", elem_id="corpus-add")
                clear_btn = gr.Button("Delete my uploads", variant="secondary")
            results = gr.DataFrame(pd.DataFrame(columns=UPLOAD_COLUMNS), label="Upload results", interactive=False,
                                   wrap=True, elem_id="corpus-results")
        with gr.Column(scale=3):
            summary = gr.Markdown(elem_id="corpus-summary")
            docs = gr.DataFrame(pd.DataFrame(columns=DOC_COLUMNS), label="Documents", interactive=False, wrap=True,
                                elem_id="corpus-docs", column_widths=DOC_WIDTHS)
            with gr.Row():
                query = gr.Textbox(label="Search this corpus (BM25, as the agent's tool does)", scale=4,
                                   placeholder='e.g. revenue 2024, "annual report", employ*, revenue file:report.pdf',
                                   elem_id="corpus-query")
                search_btn = gr.Button("Search", scale=1, min_width=80, elem_id="corpus-search")
            hits = gr.DataFrame(pd.DataFrame(columns=HIT_COLUMNS), label="Pages found", interactive=False, wrap=True,
                                elem_id="corpus-hits", column_widths=["30%", "9%", "10%", "51%"])
    return CorpusTab(choice, files, add_btn, clear_btn, results, summary, docs, query, search_btn, hits)


def build_corpus_tab(ctx: AppContext, tab: gr.Tab) -> dict[str, Any]:
    """The Corpus tab's parts and events; returns what brings it up to date (``fn``, ``inputs``, ``outputs``), run on
    every opening: chain it after the tab's contents arrive too (``madqa.ui.lazy.send_when_opened``)."""
    parts = corpus_layout(ctx)
    header = [ctx.header] if ctx.header is not None else []

    def shown(session: Any, listed: Listing | None = None) -> dict[Any, Any]:
        """The session, its documents and the status line (the parts every event but a search writes)."""
        listed = listed or listing(ctx, session)
        return {ctx.session: session, parts.docs: listed.table, parts.summary: listed.text,
                **{line: ctx.header_text(session) for line in header}}

    def refresh(session: Any) -> dict[Any, Any]:
        listed = listing(ctx, session)
        return {parts.choice: ctx.sessions.key_of(session), parts.docs: listed.table, parts.summary: listed.text,
                **{line: ctx.header_text(session) for line in header}}

    def select(key: str, session: Any) -> dict[Any, Any]:
        return {**shown(switched(ctx, key, session)), parts.hits: pd.DataFrame(columns=HIT_COLUMNS)}

    def add(paths: list[str] | None, session: Any,
            progress: gr.Progress = gr.Progress()) -> dict[Any, Any]:  # noqa: B008 - how Gradio injects a progress bar
        if not paths:
            raise shown_error("Choose one or more PDF files first.")

        def report(done: int, total: int, what: str) -> None:
            pages = what.startswith(("OCR page", "reading page")) or "embedding pages" in what
            progress((done, total), desc=what, unit="pages" if pages else "files")  # "OCR page 3/12 · scan.pdf"

        done = add_uploads(ctx, paths, session, report)
        # the key alone (the API's answer stays a plain value); the labels follow on the tab's next opening
        return {**shown(done.session, done.listing), parts.results: done.results, parts.choice: done.session["corpus"],
                parts.hits: pd.DataFrame(columns=HIT_COLUMNS), parts.files: None}

    def clear(session: Any) -> dict[Any, Any]:
        session = removed_uploads(ctx, session)
        return {**shown(session), parts.choice: session["corpus"], parts.hits: pd.DataFrame(columns=HIT_COLUMNS),
                parts.results: pd.DataFrame(columns=UPLOAD_COLUMNS)}

    def search(text: str, session: Any) -> pd.DataFrame:
        return search_corpus(ctx, text, session)

    opened = {"fn": refresh, "inputs": [ctx.session], "outputs": [parts.choice, parts.docs, parts.summary, *header]}
    tab.select(**opened, api_visibility="private")
    parts.choice.input(select, [parts.choice, ctx.session], [ctx.session, parts.docs, parts.summary, parts.hits,
                                                             *header], api_visibility="private")
    parts.add_btn.click(add, [parts.files, ctx.session], [ctx.session, parts.results, parts.choice, parts.docs,
                                                          parts.summary, parts.hits, *header, parts.files],
                        api_name="add_documents", concurrency_limit=2,
                        show_progress_on=[parts.results])  # one progress bar, beside the button, not one over all
    parts.clear_btn.click(clear, [ctx.session], [ctx.session, parts.choice, parts.docs, parts.summary, parts.hits,
                                                 *header, parts.results],
                          api_visibility="private", show_progress_on=[parts.results])
    gr.on([parts.query.submit, parts.search_btn.click], search,
          [parts.query, ctx.session], [parts.hits], api_name="search_corpus", concurrency_limit=8)
    return opened
