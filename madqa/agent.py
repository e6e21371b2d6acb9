"""The BM25 MLLM agent loop (the MADQA paper's Algorithm 1) as a generator of typed steps.

One loop for every backend: the model searches (the query strategy may rewrite the query, the
retriever and reranker return pages), pages not shown before go back to it as labelled images,
and on the last step the search tool is withdrawn so it must answer. It imports no UI.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from madqa.answer import check_quotes, parse_answer, validate_citations
from madqa.budget import Budget
from madqa.context import ContextOptions, ModelTurn, NoteTurn, ShownPage, ToolTurn, Turn, build_messages
from madqa.context import image_part as image_part  # re-exported: tests and plugins build messages with it
from madqa.context import query_terms as _query_terms
from madqa.errors import MadqaError
from madqa.jsonl import clean_text
from madqa.render import render_page
from madqa.settings import PipelineConfig, Settings
from madqa.types import AnswerStep, ErrorStep, Hit, ModelDecision, ModelStep, PageRef, SearchStep, Step, ToolCall, Usage

SYSTEM_PROMPT = """You are a document QA assistant with access to a search tool over a collection of PDF documents.
The search tool returns images of document pages, each labelled "File: <file>, Page: <n>".

IMPORTANT: The answer to the question is definitely in the documents. If a search returns no results or unhelpful pages, search again with different terms: synonyms, abbreviations, or different phrasings.

Once you have found the relevant pages, answer with submit_answer:
- answer: a list of short answer values, as few words as possible, using the exact words of the document where possible; one element for a single answer, several for several items or entities
- citations: the pages the answer comes from, each {"file": the exact file name shown in the label, "page": the page number, "quote": a short verbatim quote from that page that supports the answer (one sentence or table row, copied exactly)}"""

JSON_PROTOCOL = """
You cannot call tools directly. To search, reply with only {"search": "<query>"}. To answer, reply with only {"answer": ["..."], "citations": [{"file": "...", "page": 1, "quote": "..."}]}."""

SEEDED_NOTE = "oracle: these are the gold evidence pages, given instead of a search"

SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "search_documents",
        "description": (
            "Search the document collection and return images of the best matching pages. Supports terms and "
            "phrases (quotes for an exact phrase), boolean operators (AND, OR, NOT; AND is the default between "
            "words) and wildcards (* for several characters, ? for one). Examples: 'engine specifications', "
            "'\"annual report\" AND revenue', 'employ*', 'incorporation NOT date'. Pages already shown are listed "
            "with an excerpt, not shown again (run the same query again, or call show_pages, to see them)."
        ),
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "keywords, \"phrases\" and AND/OR/NOT"}},
            "required": ["query"],
        },
    },
}

SHOW_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "show_pages",
        "description": "Show pages again as images, e.g. pages seen earlier that are now only listed with an "
                       "excerpt. Give the file and page exactly as in their labels.",
        "parameters": {
            "type": "object",
            "properties": {"pages": {"type": "array", "items": {
                "type": "object", "properties": {"file": {"type": "string"}, "page": {"type": "integer"}},
                "required": ["file", "page"]}}},
            "required": ["pages"],
        },
    },
}
MAX_SHOWN_AGAIN = 5  # pages one show_pages call may ask for
UNREADABLE_ANSWER = "the submit_answer arguments could not be read, even after a repair turn"
NO_ANSWER_FLAGS = ("the model failed", "no answer could be parsed", UNREADABLE_ANSWER)  # the CLI exits 1 on these

ANSWER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "submit_answer",
        "description": "Give the final answer with the pages it comes from. Ends the task.",
        "parameters": {
            "type": "object",
            "properties": {
                "answer": {"type": "array", "items": {"type": "string"},
                           "description": "short answer values, exact document words where possible"},
                "citations": {
                    "type": "array",
                    "items": {"type": "object",
                              "properties": {"file": {"type": "string"}, "page": {"type": "integer"},
                                             "quote": {"type": "string",
                                                       "description": "a short verbatim quote from this page "
                                                                      "(a sentence or table row) supporting "
                                                                      "the answer, copied exactly"}},
                              "required": ["file", "page", "quote"]},
                },
            },
            "required": ["answer", "citations"],
        },
    },
}


@dataclass
class SearchState:
    """What a query strategy may look at: the question and every search made so far."""

    question: str
    queries: list[str] = field(default_factory=list)  # as executed
    written: list[str] = field(default_factory=list)  # as the model wrote them
    hits: list[tuple[Hit, ...]] = field(default_factory=list)
    new_page_counts: list[int] = field(default_factory=list)
    seen: set[PageRef] = field(default_factory=set)
    seeded: tuple[Hit, ...] | None = None  # shown as the first search's result instead of searching (the oracle)
    terms: dict[PageRef, tuple[str, ...]] = field(default_factory=dict)  # the query words that first found a page
    # the pages a query would show (the retriever's top k, nothing rendered): lets a strategy judge a
    # rewrite by the new pages it finds; None when the strategy runs outside an agent
    probe: Callable[[str], tuple[Hit, ...]] | None = field(default=None, repr=False, compare=False)


class Agent:
    """Answers questions over one corpus with one pipeline config; reusable across questions."""

    def __init__(self, corpus: Any, config: PipelineConfig, registry: Any, settings: Settings,
                 backend_options: dict[str, Any] | None = None) -> None:
        self.corpus = corpus
        self.config = config.validate()
        self.settings = settings
        self.retriever = registry.create("retriever", config.retriever, corpus, config.part_options("retriever"))
        self.reranker = registry.create("reranker", config.reranker, corpus, config.part_options("reranker"))
        self.strategy = registry.create("query_strategy", config.query_strategy, corpus,
                                        config.part_options("query_strategy"))
        # the config's [options.backend] table, then what the caller adds for this run (a key, an api_base)
        options = {"corpus": corpus, **config.part_options("backend"), **(backend_options or {})}
        if config.temperature is not None:
            options.setdefault("temperature", config.temperature)
        self.backend = registry.create("backend", config.backend, config.model, options)
        run_key, self.strategy_uses_run_key = (backend_options or {}).get("api_key"), False
        if run_key and hasattr(self.strategy, "use_run_key"):  # a strategy that calls a model (llm-rewrite)
            # spends the run's own key (a web visitor's), not the one the server holds for that provider
            self.strategy_uses_run_key = self.strategy.use_run_key(
                run_key, (backend_options or {}).get("api_base"), getattr(self.backend, "provider", None))
        self.context = ContextOptions.from_options(config.part_options("context"))
        Budget.from_options(config.part_options("budget"))  # bad budget options fail here, not mid-run

    def run(self, question: str, first_hits: Sequence[Hit] | None = None,
            budget: Budget | None = None) -> Iterator[Step]:
        """Yield each step as it happens; the last one is always an AnswerStep (maybe a refusal).

        ``first_hits`` (e.g. the gold evidence pages, for the oracle condition) are what the first
        search returns, all of them and whatever its query; later searches use the retriever.
        ``budget`` (e.g. a web session's) is charged beside the question's own from the config."""
        question = clean_text(question)  # a lone surrogate could be neither sent, shown nor saved
        native_tools = getattr(self.backend, "supports_tools", True)
        vision = getattr(self.backend, "supports_vision", True)
        cache = self.context.marks_cache(getattr(self.backend, "provider", None))
        system = SYSTEM_PROMPT + ("" if native_tools else JSON_PROTOCOL)
        budgets = [Budget.from_options(self.config.part_options("budget")), *([budget] if budget else [])]
        history: list[Turn] = []
        state = SearchState(question, seeded=tuple(first_hits) if first_hits is not None else None,
                            probe=lambda q: tuple(self.retriever.search(q, self.config.top_k).hits))
        last, repaired, iteration = self.config.max_steps, False, 0
        while True:
            iteration += 1
            spent = next((b.exhausted for b in budgets if b.exhausted), None)
            if spent and iteration == 1:  # nothing left before the first call: make none
                yield AnswerStep(0, (), (), flags=(f"stopped: {spent}; no model call made",), refusal=True)
                return
            force = iteration >= last or spent is not None
            tools = [ANSWER_TOOL] if force else [SEARCH_TOOL, SHOW_TOOL, ANSWER_TOOL]
            messages = build_messages(system, question, history, self.context, vision=vision, cache=cache)
            started = time.perf_counter()
            try:
                decision: ModelDecision = self.backend.decide(messages, tools, force)
            except Exception as exc:  # after the backend's own retries: end with what we have
                yield ErrorStep(iteration, "backend", _describe(exc))
                yield AnswerStep(iteration, (), (), flags=("the model failed; no answer",), refusal=True)
                return
            for b in budgets:
                b.charge(decision.usage, decision.cost_usd)
            calls = decision.tool_calls or ()
            notes = tuple(str(n) for n in (decision.raw or {}).get("notes") or ())
            yield ModelStep(iteration, decision.text, tuple(calls), decision.usage, decision.cost_usd,
                            time.perf_counter() - started, force, notes)
            broken = [c for c in calls if c.error]
            if broken and not repaired:  # one repair turn: quote the parse error back to the model
                repaired = True
                last = max(last, iteration + 1) if force else last
                for c in broken:
                    yield ErrorStep(iteration, "tool", f"{c.name}: {c.error}; asked the model to send it again")
            elif any(c.name == "submit_answer" for c in broken):  # the repair turn did not help: give up
                error = next(c.error for c in broken if c.name == "submit_answer")
                yield AnswerStep(iteration, (), (), flags=(f"{UNREADABLE_ANSWER}: {error}",), refusal=True)
                return
            else:
                payload = _answer_payload(decision)
                if payload is not None or force:
                    answer = self._answer(iteration, payload, decision.text, state.seen, force, calls)
                    if spent:
                        answer = replace(answer, flags=(*answer.flags, f"stopped early: {spent}"))
                    yield answer
                    return
            if not calls:
                history.append(ModelTurn(iteration, decision.text))
                history.append(NoteTurn(iteration, "Call search_documents to search, show_pages to see pages "
                                                   "again, or submit_answer to answer."))
                continue
            ids = [call.id or f"call_{iteration}_{n}" for n, call in enumerate(calls)]  # tool results answer these
            history.append(ModelTurn(iteration, decision.text, tuple(
                (call_id, c.name, json.dumps(c.arguments)) for c, call_id in zip(calls, ids, strict=True))))
            for call, call_id in zip(calls, ids, strict=True):
                if call.error:
                    text, pages = (f"Error: the arguments of {call.name} could not be read: {call.error}. Call "
                                   f"{call.name} again with its arguments as one valid JSON object."), ()
                elif call.name == "search_documents":
                    step, text, pages = self._search(iteration, call, state, vision)
                    yield step
                elif call.name == "show_pages":
                    text, pages = self._show(call, state, vision)
                    if not pages:
                        yield ErrorStep(iteration, "tool", text)
                else:
                    text, pages = f"unknown tool {call.name!r}; use search_documents, show_pages or submit_answer", ()
                    yield ErrorStep(iteration, "tool", text)
                history.append(ToolTurn(iteration, call_id, text, tuple(pages)))

    # --- pages: shown once, asked for again --------------------------------------------------

    def _display(self, ref: PageRef, terms: tuple[str, ...], vision: bool) -> ShownPage:
        """A page as the context policy needs it: its image (when the model sees images) and text."""
        image = None
        mime = "image/png"
        if vision:
            rendered = render_page(self.corpus, ref.file, ref.page, self.settings,
                                   budget_px=self.config.image_budget_px, fmt=self.context.image_format)
            image, mime = rendered.data, rendered.mime
        try:
            text = self.corpus.page_text(ref.file, ref.page)
        except Exception:  # the image is what counts; an excerpt is a courtesy
            text = ""
        return ShownPage(ref, image, mime, text or "", terms)

    def _show(self, call: ToolCall, state: SearchState, vision: bool) -> tuple[str, list[ShownPage]]:
        """``show_pages``: the pages asked for, again in full in the next request."""
        wanted = call.arguments.get("pages") if isinstance(call.arguments, dict) else None
        if not isinstance(wanted, list) or not wanted:
            return "Error: show_pages needs 'pages', a list of {\"file\", \"page\"} from the page labels.", []
        pages: list[ShownPage] = []
        problems: list[str] = []
        for item in wanted[:MAX_SHOWN_AGAIN]:
            file = item.get("file") if isinstance(item, dict) else None
            page = item.get("page") if isinstance(item, dict) else None
            if not isinstance(file, str) or isinstance(page, bool) or not isinstance(page, int) \
                    or not self.corpus.has_page(file, page):
                problems.append(f"no such page: {json.dumps(item)[:120]}")
                continue
            ref = PageRef(file, page)
            try:
                pages.append(self._display(ref, state.terms.get(ref, ()), vision))
            except Exception as exc:
                problems.append(f"{ref.label()} could not be shown: {_describe(exc)}")
        state.seen.update(p.ref for p in pages)
        lines = [f"Shown again below: {'; '.join(p.ref.label() for p in pages)}" if pages else "No page shown."]
        if len(wanted) > MAX_SHOWN_AGAIN:
            lines.append(f"Only the first {MAX_SHOWN_AGAIN} pages asked for are shown.")
        lines += [f"Error: {p}" for p in problems]
        return "\n".join(lines), pages

    # --- one search ------------------------------------------------------------------------

    def _search(self, iteration: int, call: ToolCall, state: SearchState,
                vision: bool = True) -> tuple[SearchStep, str, list[ShownPage]]:
        started = time.perf_counter()
        written = call.arguments.get("query") if isinstance(call.arguments, dict) else None
        if not isinstance(written, str) or not written.strip():
            step = SearchStep(iteration, str(written or ""), "", (), (), error="no query given")
            return step, "Error: search_documents needs a non-empty 'query' string.", []
        executed, strategy_note, retriever_note, error = written, None, None, None
        hits: tuple[Hit, ...] = ()
        spent: Any = None
        if state.seeded is not None and not state.queries:
            hits, retriever_note = state.seeded, SEEDED_NOTE
        else:
            try:
                # (query, note), or (query, note, spent) when the strategy called a model of its own:
                # ``spent`` has ``usage`` and ``cost_usd`` (a ModelDecision does), counted in the run's totals
                executed, strategy_note, *extra = self.strategy.rewrite(written, state)
                spent = extra[0] if extra else None
                # a reranker may ask to see more candidates than are shown (its ``candidates`` attribute)
                depth = max(self.config.top_k, int(getattr(self.reranker, "candidates", 0) or 0))
                result = self.retriever.search(executed, depth)
                retriever_note = result.note
                hits = tuple(self.reranker.rerank(state.question, executed, list(result.hits)))[: self.config.top_k]
            except Exception as exc:  # a plugin's failure is an observation for the model, not a crash
                error = _describe(exc)
        again = _normal(executed) in {_normal(q) for q in state.queries}  # the same search: show its pages again
        new = tuple(dict.fromkeys(h.ref for h in hits if again or h.ref not in state.seen))
        terms = _query_terms(executed)
        displayed: list[ShownPage] = []
        for ref in new:
            try:
                displayed.append(self._display(ref, terms, vision))
            except Exception as exc:
                error = (error + "; " if error else "") + f"{ref.label()} could not be shown: {_describe(exc)}"
        shown = [p.ref for p in displayed if p.ref not in state.seen]
        for page in displayed:
            state.terms.setdefault(page.ref, terms)
        state.seen.update(shown)
        state.written.append(written)
        state.queries.append(executed)
        state.hits.append(hits)
        state.new_page_counts.append(len(shown))
        step = SearchStep(iteration, written, executed, hits, tuple(shown), strategy_note, retriever_note, error,
                          time.perf_counter() - started, usage=getattr(spent, "usage", None) or Usage(),
                          cost_usd=getattr(spent, "cost_usd", None))
        return step, _tool_text(step, [p.ref for p in displayed]), displayed

    # --- the answer ------------------------------------------------------------------------

    def _answer(self, iteration: int, payload: Any, text: str | None, seen: set[PageRef], forced: bool,
                calls: tuple[ToolCall, ...] = ()) -> AnswerStep:
        parsed = parse_answer(payload) if payload is not None else None
        flags: list[str] = []
        if parsed is None and text and forced:
            parsed = parse_answer(text)
            if parsed is None and len(text.strip()) <= 80 and "\n" not in text.strip():
                parsed = ([text.strip()], [], ["answer taken from the model's free text"])
        if parsed is None:
            if forced and calls:  # e.g. a model that never stops searching, whatever tool_choice says
                names = ", ".join(sorted({c.name for c in calls}))
                flags.append(f"the model called {names} on the last step instead of answering")
            flags.append("no answer could be parsed from the model's reply" if text or payload else "no answer")
            return AnswerStep(iteration, (), (), flags=tuple(flags), refusal=True)
        answer, raw, parse_flags = parsed
        citations, citation_flags = validate_citations(raw, self.corpus, seen)
        quotes = check_quotes(raw, citations, self.corpus)
        flags += parse_flags + citation_flags + list(quotes.flags)
        return AnswerStep(iteration, tuple(answer), tuple(citations), tuple(raw), tuple(flags), not answer,
                          quotes.quotes, quotes.found)


def _answer_payload(decision: ModelDecision) -> Any:
    """The answer object in a decision: structured answer, submit_answer call, or JSON in text."""
    if decision.answer is not None:
        return decision.answer
    for call in decision.tool_calls:
        if call.name == "submit_answer":
            return call.arguments
    if not decision.tool_calls and decision.text:
        parsed = parse_answer(decision.text)
        if parsed is not None:
            return decision.text
    return None


def _normal(query: str) -> str:
    return " ".join(query.lower().split())


def _tool_text(step: SearchStep, displayed: list[PageRef]) -> str:
    """The text-only tool result; the pages follow in a user message."""
    lines = []
    if step.error:
        lines.append(f"Error: {step.error}")
    if step.executed_query != step.query:
        lines.append(f"The query was run as: {step.executed_query}")
    if step.retriever_note:
        lines.append(f"Note: {step.retriever_note}")
    already = [h.ref.label() for h in step.hits if h.ref not in displayed]
    again = [ref for ref in displayed if ref not in step.new_pages]
    if displayed:
        lines.append(f"Found {len(step.hits)} pages; {len(step.new_pages)} new"
                     + (f", {len(again)} shown again" if again else "") + ", shown below:")
    else:
        lines.append(f"Found {len(step.hits)} pages; none new.")
    lines += [f"- {ref.label()}" for ref in displayed]
    if already:
        lines.append("Already shown earlier (not repeated; see their excerpts, or call show_pages): "
                     + "; ".join(already))
    return "\n".join(lines)


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, MadqaError) else f"{type(exc).__name__}: {exc}"
