"""Navigation tools: ``list_documents``, ``open_page``, ``next_pages`` and ``search_in``.

People browse a collection: they read the list of documents, open a page, turn to the next one, search
within one document (the MADQA paper: a person's first query finds the evidence far more often than an
agent's). These tools let the agent do the same; ``document_outline`` is beside them (outline_tool.py).
Each respects the question's scope (the documents it is limited to).
"""

from __future__ import annotations

from typing import Any

import madqa

LIST_PAGE = 50  # documents listed per call
MAX_NEXT = 3  # pages one next_pages call shows
_FILE = {"type": "string", "description": "the file name, as listed by list_documents or in a page label"}
_PAGE = {"type": "integer", "description": "the page number (1-based, as in the page labels)"}


def document_file(state: madqa.QuestionState, given: str) -> str:
    """The corpus's name for ``given``, inside the question's scope (ScopeError otherwise)."""
    (file,) = madqa.resolve_files([given], state.corpus.documents)
    scope = state.searches.scope
    if scope and file not in scope:
        raise madqa.ScopeError(f"{file} is outside the documents this question is limited to: {', '.join(scope)}")
    return file


def _page(state: madqa.QuestionState, file: str, page: int) -> madqa.PageRef:
    pages = state.corpus.document(file).pages
    if not 1 <= page <= pages:
        raise madqa.SearchError(f"{file} has {pages} pages; there is no page {page}")
    return madqa.PageRef(file, page)


def _kind(sources: dict[str, int]) -> str:
    """How a document's pages got their text: born digital, scanned (OCR), or both."""
    scanned = sources.get("ocr", 0) + sources.get("imported", 0)
    text = sources.get("text", 0)
    return "scanned (OCR)" if scanned and not text else "mixed text and scans" if scanned else "text"


class ListDocuments:
    parameters = {"type": "object", "properties": {
        "offset": {"type": "integer", "description": f"skip this many documents (lists {LIST_PAGE} at a time)"}}}

    def run(self, state: madqa.QuestionState, arguments: dict[str, Any]) -> madqa.Observation:
        names = sorted(state.searches.scope or state.corpus.documents)
        offset = max(0, int(arguments.get("offset") or 0))
        lines = [f"{len(names)} documents" + (f" (from {offset + 1})" if offset else "") + ":"]
        for name in names[offset:offset + LIST_PAGE]:
            doc = state.corpus.document(name)
            try:
                first = next((ln.strip() for ln in state.corpus.page_text(name, 1).splitlines() if ln.strip()), "")
            except madqa.CorpusError:
                first = ""
            lines.append(f"- {name}: {doc.pages} pages, {_kind(doc.sources)}" + (f"; title: {first[:90]}" if first else ""))
        if offset + LIST_PAGE < len(names):
            lines.append(f"... call list_documents with offset {offset + LIST_PAGE} for more")
        return madqa.Observation("\n".join(lines))


class OpenPage:
    parameters = {"type": "object", "properties": {"file": _FILE, "page": _PAGE}, "required": ["file", "page"]}

    def run(self, state: madqa.QuestionState, arguments: dict[str, Any]) -> madqa.Observation:
        ref = _page(state, document_file(state, arguments["file"]), arguments["page"])
        return madqa.Observation(f"Opened below: {ref.label()}", (ref,))


class NextPages:
    parameters = {"type": "object", "properties": {
        "file": _FILE, "page": {**_PAGE, "description": "a page already shown"},
        "direction": {"type": "string", "enum": ["after", "before"], "description": "after (default) or before it"},
        "count": {"type": "integer", "description": f"how many pages, 1 to {MAX_NEXT} (default 2)"}},
        "required": ["file", "page"]}

    def run(self, state: madqa.QuestionState, arguments: dict[str, Any]) -> madqa.Observation:
        seen = _page(state, document_file(state, arguments["file"]), arguments["page"])
        if seen not in state.seen:
            raise madqa.SearchError(f"{seen.label()} has not been shown yet: open it with open_page first")
        direction = arguments.get("direction") or "after"
        if direction not in ("after", "before"):
            raise madqa.SearchError(f"direction is after or before, not {direction!r}")
        count = min(MAX_NEXT, max(1, int(arguments.get("count") or 2)))
        step = 1 if direction == "after" else -1
        last = state.corpus.document(seen.file).pages
        pages = [p for p in (seen.page + step * n for n in range(1, count + 1)) if 1 <= p <= last]
        if not pages:
            raise madqa.SearchError(f"{seen.label()} is the {'last' if step == 1 else 'first'} page of {seen.file}")
        refs = tuple(madqa.PageRef(seen.file, p) for p in pages)
        return madqa.Observation(f"The {len(refs)} page(s) {direction} {seen.label()}, shown below: "
                                 + "; ".join(r.label() for r in refs), refs)


class SearchIn:
    parameters = {"type": "object", "properties": {"file": _FILE, "query": madqa.SEARCH_TOOL["function"][
        "parameters"]["properties"]["query"]}, "required": ["file", "query"]}

    def run(self, state: madqa.QuestionState, arguments: dict[str, Any]) -> madqa.Observation:
        file = document_file(state, arguments["file"])
        return state.search(arguments["query"], (file,), "search_in")


@madqa.hookimpl(trylast=True)
def register_tools(register: madqa.Register) -> None:
    register("list_documents", lambda host, options: ListDocuments(),
             "List the documents of the collection: file name, pages, whether scanned, and the first line of "
             "page 1 (usually the title).", takes_host=True)
    register("open_page", lambda host, options: OpenPage(),
             "Open one page of a document by file and page number and see it as an image (e.g. a page the "
             "outline points to).", takes_host=True)
    register("next_pages", lambda host, options: NextPages(),
             "Turn the page: see the pages after (or before) a page already shown, in the same document.",
             takes_host=True)
    register("search_in", lambda host, options: SearchIn(),
             "Search within one document only (same query syntax as search_documents); returns images of its "
             "best matching pages.", takes_host=True)
