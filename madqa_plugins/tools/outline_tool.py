"""Tool ``document_outline``: a document's table of contents with page numbers (``madqa.document_outline``:
PDF bookmarks, else headings found by font size, else the first line of each page)."""

from __future__ import annotations

from typing import Any

import madqa
from madqa_plugins.tools.navigation import document_file


class DocumentOutline:
    parameters = {"type": "object", "properties": {"file": {
        "type": "string", "description": "the file name, as listed by list_documents or in a page label"}},
        "required": ["file"]}

    def run(self, state: madqa.QuestionState, arguments: dict[str, Any]) -> madqa.Observation:
        outline = madqa.document_outline(state.corpus, document_file(state, arguments["file"]), state.settings)
        return madqa.Observation(madqa.outline_text(outline))


@madqa.hookimpl(trylast=True)
def register_tools(register: madqa.Register) -> None:
    register("document_outline", lambda host, options: DocumentOutline(),
             "The outline (table of contents) of one document: its sections with their page numbers, from the "
             "PDF's bookmarks or its headings. Then open_page the page a section starts on.", takes_host=True)
