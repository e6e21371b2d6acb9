"""Tools ``search_documents``, ``show_pages`` and ``submit_answer``: the MADQA paper's agent, as plugins.

Their schemas and descriptions are the benchmark's (``madqa.SEARCH_TOOL``, ...). ``submit_answer`` is
offered on every turn and read by the loop itself (the answer ends the question); its ``run`` is never
called.
"""

from __future__ import annotations

import json
from typing import Any

import madqa


def _parts(schema: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return schema["function"]["description"], schema["function"]["parameters"]


class SearchDocuments:
    """The config's search over the collection (or the question's scope)."""

    checks_arguments = True  # a search without a query is recorded as a failed search (the row's search_history)
    parameters = _parts(madqa.SEARCH_TOOL)[1]

    def run(self, state: madqa.QuestionState, arguments: dict[str, Any]) -> madqa.Observation:
        return state.search(arguments.get("query"))


class ShowPages:
    """Pages asked for by file and page, shown again in full in the next request."""

    parameters = _parts(madqa.SHOW_TOOL)[1]

    def run(self, state: madqa.QuestionState, arguments: dict[str, Any]) -> madqa.Observation:
        wanted = arguments.get("pages")
        if not isinstance(wanted, list) or not wanted:
            text = "Error: show_pages needs 'pages', a list of {\"file\", \"page\"} from the page labels."
            return madqa.Observation(text, error="no pages asked for")
        refs: list[madqa.PageRef] = []
        problems: list[str] = []
        for item in wanted[:madqa.MAX_PAGES_PER_STEP]:
            file = item.get("file") if isinstance(item, dict) else None
            page = item.get("page") if isinstance(item, dict) else None
            if not isinstance(file, str) or isinstance(page, bool) or not isinstance(page, int) \
                    or not state.corpus.has_page(file, page):
                problems.append(f"no such page: {json.dumps(item)[:120]}")
                continue
            refs.append(madqa.PageRef(file, page))
        lines = [f"Shown again below: {'; '.join(r.label() for r in refs)}" if refs else "No page shown."]
        if len(wanted) > madqa.MAX_PAGES_PER_STEP:
            lines.append(f"Only the first {madqa.MAX_PAGES_PER_STEP} pages asked for are shown.")
        lines += [f"Error: {p}" for p in problems]
        return madqa.Observation("\n".join(lines), tuple(refs), "; ".join(problems) or None)


class SubmitAnswer:
    """The final answer: read by the loop, never run."""

    parameters = _parts(madqa.ANSWER_TOOL)[1]

    def run(self, state: madqa.QuestionState, arguments: dict[str, Any]) -> madqa.Observation:
        raise madqa.PluginError("submit_answer is read by the loop, not run")


@madqa.hookimpl(trylast=True)
def register_tools(register: madqa.Register) -> None:
    register("search_documents", lambda host, options: SearchDocuments(), _parts(madqa.SEARCH_TOOL)[0], takes_host=True)
    register("show_pages", lambda host, options: ShowPages(), _parts(madqa.SHOW_TOOL)[0], takes_host=True)
    register("submit_answer", lambda host, options: SubmitAnswer(), _parts(madqa.ANSWER_TOOL)[0], takes_host=True)
