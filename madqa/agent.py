"""The BM25 MLLM agent loop (the MADQA paper's Algorithm 1) as a generator of typed steps.

One loop for every backend: the model searches (the query strategy may rewrite the query, the
retriever and reranker return pages), pages not shown before go back to it as labelled images,
and on the last step the search tool is withdrawn so it must answer. It imports no UI.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from madqa.answer import check_quotes, parse_answer, read_passages, resolve_citations
from madqa.budget import Budget
from madqa.context import ContextOptions, ModelTurn, NoteTurn, ShownPage, ToolTurn, Turn, build_messages
from madqa.context import image_part as image_part  # re-exported: tests and plugins build messages with it
from madqa.context import query_terms as _query_terms
from madqa.conversation import ChatTurn, next_question
from madqa.errors import MadqaError, SearchError, ServerLimitError
from madqa.jsonl import clean_text
from madqa.prompts import ANSWER_TOOL, REPAIR_NOTE, SEARCH_TOOL, SHOW_TOOL, system_prompt
from madqa.prompts import SYSTEM_PROMPT as SYSTEM_PROMPT  # re-exported: the benchmark's prompt
from madqa.protocols import (
    Backend,
    QueryStrategy,
    Reranker,
    Retriever,
    backend_capabilities,
    reranker_candidates,
    run_key_user,
)
from madqa.recovery import Sending, images_in, recover
from madqa.refusals import is_refusal, refusal_items
from madqa.render import render_page
from madqa.scope import combine, describe_scope, parse_scope, resolve_files, search_scoped
from madqa.settings import PipelineConfig, Settings, image_budget_px
from madqa.tool_text import read_tool_calls, strip_reasoning
from madqa.types import AnswerStep, ErrorStep, Hit, ModelDecision, ModelStep, PageRef, SearchStep, Step, ToolCall, Usage
from madqa.usage import estimate_usage

if TYPE_CHECKING:
    from madqa.corpus import Corpus
    from madqa.plugins import Registry

SEEDED_NOTE = "oracle: these are the gold evidence pages, given instead of a search"
ASKED_AS = "a follow-up, asked as a standalone question (this backend reads no conversation): "
MAX_SHOWN_AGAIN = 5  # pages one show_pages call may ask for
MAX_RECOVERIES = 4  # times one turn is sent again with less after a server limit
UNREADABLE_ANSWER = "the submit_answer arguments could not be read, even after a repair turn"
NO_ANSWER_FLAGS = ("the model failed", "no answer could be parsed", UNREADABLE_ANSWER)  # rows of older versions
CALL_A_TOOL = ("Call search_documents to search, show_pages to see pages again, or submit_answer to answer "
               "(answer: a list of short values; citations: file, page and a verbatim quote).")


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
    scope: tuple[str, ...] = ()  # the files searched (madqa.scope); empty: the whole collection
    # the pages a query would show (the retriever's top k, nothing rendered): lets a strategy judge a
    # rewrite by the new pages it finds; None when the strategy runs outside an agent
    probe: Callable[[str], tuple[Hit, ...]] | None = field(default=None, repr=False, compare=False)


class Agent:
    """Answers questions over one corpus with one pipeline config; reusable across questions."""

    def __init__(self, corpus: Corpus, config: PipelineConfig, registry: Registry, settings: Settings,
                 backend_options: dict[str, Any] | None = None) -> None:
        self.corpus = corpus
        self.config = config.validate()
        self.settings = settings
        self.retriever: Retriever = registry.create("retriever", config.retriever, corpus, config.part_options("retriever"))
        self.reranker: Reranker = registry.create("reranker", config.reranker, corpus, config.part_options("reranker"))
        self.strategy: QueryStrategy = registry.create("query_strategy", config.query_strategy, corpus,
                                        config.part_options("query_strategy"))
        # the config's [options.backend] table, then what the caller adds for this run (a key, an api_base)
        options = {"corpus": corpus, **config.part_options("backend"), **(backend_options or {})}
        if config.temperature is not None:
            options.setdefault("temperature", config.temperature)
        self.backend: Backend = registry.create("backend", config.backend, config.model, options)
        run_key, self.strategy_uses_run_key = (backend_options or {}).get("api_key"), False
        use_run_key = run_key_user(self.strategy)  # a strategy that calls a model (llm-rewrite)
        if run_key and use_run_key is not None:
            # spends the run's own key (a web visitor's), not the one the server holds for that provider
            self.strategy_uses_run_key = use_run_key(
                run_key, (backend_options or {}).get("api_base"), backend_capabilities(self.backend).provider)
        # what is sent (context policy, image budget, images at all): a server limit met in one
        # question changes it for the rest of the run (madqa.recovery)
        self.sending = Sending(ContextOptions.from_options(config.part_options("context")),
                               image_budget_px(settings, self.config))
        self.answer_always_present = bool(config.answer_always_present)
        Budget.from_options(config.part_options("budget"))  # bad budget options fail here, not mid-run

    @property
    def context(self) -> ContextOptions:
        return self.sending.context

    def run(self, question: str, first_hits: Sequence[Hit] | None = None,
            budget: Budget | Sequence[Budget] | None = None,
            conversation: Sequence[ChatTurn] = (), scope: Sequence[str] = ()) -> Iterator[Step]:
        """Yield each step as it happens; the last one is always an AnswerStep: an answer, a refusal, or
        a failure (``failure`` set: the model or a plugin failed, or no answer could be read).

        ``first_hits`` (e.g. the gold evidence pages, for the oracle condition) are what the first
        search returns, all of them and whatever its query; later searches use the retriever.
        ``budget`` (the CLI's run, a web visitor's day on the server's keys: one or several) is charged
        beside the question's own from the config; a spent one forces the answer, never raises.
        ``conversation``: the earlier turns, when ``question`` is a follow-up (``madqa.conversation``):
        their text before the question for a backend that reads it, else a standalone question.
        ``scope``: the files searched (one document, a chosen set; names as the corpus has them, or as a
        person types them: ``madqa.scope.resolve_files``); empty: the whole collection. The model is told.
        A query's own ``file:NAME`` terms narrow it further. Raises ScopeError for a name not in the corpus."""
        files = resolve_files(scope, self.corpus.documents) if scope else ()
        reads = backend_capabilities(self.backend).reads_conversation
        asked = next_question(conversation, clean_text(question), reads)
        question = clean_text(asked.question)  # a lone surrogate could be neither sent, shown nor saved
        cache = self.context.marks_cache(backend_capabilities(self.backend).provider)
        # the scope is a standing rule of the run, told in the system prompt: a user message before the
        # question would be read as the question by a backend that takes the first one (the offline baseline)
        system = "\n\n".join(t for t in (system_prompt(self.answer_always_present), describe_scope(files)) if t)
        given = [budget] if isinstance(budget, Budget) else list(budget or ())
        budgets = [Budget.from_options(self.config.part_options("budget")), *given]
        history: list[Turn] = []
        state = SearchState(asked.standalone, seeded=tuple(first_hits) if first_hits is not None else None,
                            probe=lambda q: tuple(search_scoped(self.retriever, q, self.config.top_k,
                                                                files or None).hits),
                            scope=files)
        last, iteration = self.config.max_steps, 0
        repaired_call = repaired_answer = False
        notes: list[str] = []  # what the run had to do to get an answer (server limits worked around)
        if conversation and asked.context is None:  # a backend that reads no conversation: say what it was asked
            notes.append(f"{ASKED_AS}{asked.question}")
        while True:
            iteration += 1
            spent = next((b.exhausted for b in budgets if b.exhausted), None)
            if spent and (iteration == 1 or repaired_answer):  # nothing left for a call: make none
                made = "no model call made" if iteration == 1 else "no call left to repair the answer"
                yield self._failed(iteration, f"stopped: {spent}; {made}", notes)
                return
            spent = spent or next((due for b in budgets if (due := b.answer_due)), None)
            force = iteration >= last or spent is not None
            tools = [ANSWER_TOOL] if force else [SEARCH_TOOL, SHOW_TOOL, ANSWER_TOOL]
            decision: ModelDecision | None = None
            for attempt in range(MAX_RECOVERIES + 1):
                # asked each turn: a backend may learn mid-run that its server takes no images
                vision = self.sending.vision and backend_capabilities(self.backend).supports_vision
                messages = build_messages(system, question, history, self.context, vision=vision, cache=cache,
                                          context=asked.context)
                started = time.perf_counter()
                try:
                    decision = self.backend.decide(messages, tools, force)
                    break
                except ServerLimitError as exc:
                    change = recover(exc, replace(self.sending, vision=vision), images_in(messages))
                    if change is None or attempt == MAX_RECOVERIES:
                        yield ErrorStep(iteration, "backend", f"{exc} (nothing left to cut)")
                        yield self._failed(iteration, f"backend: {exc} (nothing left to cut)", notes)
                        return
                    redraw = change[0].image_budget_px != self.sending.image_budget_px
                    self.sending, note = change
                    if redraw:
                        history = self._redrawn(history)
                    notes.append(note)
                    yield ErrorStep(iteration, "recovery", f"{exc}; {note}; sent again")
                except MadqaError as exc:  # after the backend's own retries
                    yield ErrorStep(iteration, "backend", str(exc))
                    yield self._failed(iteration, f"backend: {exc}", notes)
                    return
                except Exception as exc:  # a bug in the backend plugin: its author needs the traceback
                    yield ErrorStep(iteration, "backend", _traceback(exc))
                    yield self._failed(iteration, f"backend: the backend raised {_describe(exc)}", notes)
                    return
            assert decision is not None
            usage, estimated = decision.usage, decision.estimated
            if not usage.total_tokens and any(b.counts_tokens for b in budgets):
                calls_made = [(c.name, c.arguments) for c in decision.tool_calls]
                usage = estimate_usage(messages, tools, decision.text, calls_made,
                                       backend_capabilities(self.backend).provider)
                estimated = True
            for b in budgets:
                b.charge(usage, decision.cost_usd, estimated=estimated)
            decision, read_note = _with_text_calls(decision, tools, iteration)
            calls = decision.tool_calls or ()
            step_notes = tuple(str(n) for n in (decision.raw or {}).get("notes") or ()) + read_note
            yield ModelStep(iteration, decision.text, tuple(calls), decision.usage, decision.cost_usd,
                            time.perf_counter() - started, force, step_notes)
            if decision.finish_reason in ("content_filter", "length"):
                yield self._failed(iteration, _cut_off(decision), notes)
                return
            broken = [c for c in calls if c.error]
            if broken and not repaired_call:  # one repair turn: quote the parse error back to the model
                repaired_call = True
                last = max(last, iteration + 1) if force else last
                for c in broken:
                    yield ErrorStep(iteration, "tool", f"{c.name}: {c.error}; asked the model to send it again")
            elif any(c.name == "submit_answer" for c in broken):  # the repair turn did not help: give up
                error = next(c.error for c in broken if c.name == "submit_answer")
                yield self._failed(iteration, f"{UNREADABLE_ANSWER}: {error}", notes)
                return
            else:
                payload = _answer_payload(decision)
                if payload is None and not calls and is_refusal(_reply_text(decision)):
                    payload = {"answer": [], "citations": []}  # "I cannot find this in the documents."
                if payload is not None:
                    answer = self._answer(iteration, payload, state.seen)
                    if answer is not None:
                        flags = (*notes, *answer.flags, *([f"stopped early: {spent}"] if spent else []))
                        yield replace(answer, flags=tuple(flags))
                        return
                if force:  # no answer to read: one short turn restating the format, then give up
                    why = _unread(decision, calls)
                    if repaired_answer:
                        yield self._failed(iteration, f"no answer could be read from the model's reply, "
                                                      f"even after a repair turn: {why}", notes)
                        return
                    repaired_answer, last = True, iteration + 1
                    yield ErrorStep(iteration, "answer", f"{why}; asked the model to answer in the answer format")
                    history.append(ModelTurn(iteration, _reply_text(decision) or None))
                    history.append(NoteTurn(iteration, REPAIR_NOTE.format(why=f" ({why})")))
                    continue
            if not calls:
                history.append(ModelTurn(iteration, decision.text))
                history.append(NoteTurn(iteration, CALL_A_TOOL))
                continue
            ids = [call.id or f"call_{iteration}_{n}" for n, call in enumerate(calls)]  # tool results answer these
            history.append(ModelTurn(iteration, decision.text, tuple(
                (call_id, c.name, json.dumps(c.arguments)) for c, call_id in zip(calls, ids, strict=True))))
            for call, call_id in zip(calls, ids, strict=True):
                if call.error:
                    pages: Sequence[ShownPage]
                    text, pages = (f"Error: the arguments of {call.name} could not be read: {call.error}. Call "
                                   f"{call.name} again with its arguments as one valid JSON object."), ()
                elif call.name == "search_documents":
                    try:
                        step, text, pages = self._search(iteration, call, state, vision)
                    except _PluginBug as bug:
                        yield ErrorStep(iteration, bug.where, _traceback(bug.error))
                        yield self._failed(iteration, f"the {bug.where} raised {_describe(bug.error)}", notes)
                        return
                    if step.usage.total_tokens or step.cost_usd:  # the query strategy's own model call
                        for b in budgets:
                            b.charge(step.usage, step.cost_usd)
                    yield step
                elif call.name == "show_pages":
                    text, pages = self._show(call, state, vision)
                    if not pages:
                        yield ErrorStep(iteration, "tool", text)
                else:
                    text, pages = f"unknown tool {call.name!r}; use search_documents, show_pages or submit_answer", ()
                    yield ErrorStep(iteration, "tool", text)
                history.append(ToolTurn(iteration, call_id, text, tuple(pages)))

    def _failed(self, iteration: int, failure: str, notes: list[str]) -> AnswerStep:
        """The end of a question with no answer that can be scored: the row's ``error``, never a 0."""
        return AnswerStep(iteration, (), (), flags=(*notes, failure), refusal=False, failure=failure)

    def _redrawn(self, history: list[Turn]) -> list[Turn]:
        """The history with every page image drawn again at the current image budget."""
        out: list[Turn] = []
        for turn in history:
            if isinstance(turn, ToolTurn) and any(p.image is not None for p in turn.pages):
                turn = replace(turn, pages=tuple(self._display(p.ref, p.terms, True) for p in turn.pages))
            out.append(turn)
        return out

    # --- pages: shown once, asked for again --------------------------------------------------

    def _display(self, ref: PageRef, terms: tuple[str, ...], vision: bool) -> ShownPage:
        """A page as the context policy needs it: its image (when the model sees images) and text."""
        image = None
        mime = "image/png"
        if vision:
            rendered = render_page(self.corpus, ref.file, ref.page, self.settings,
                                   budget_px=self.sending.image_budget_px, fmt=self.context.image_format)
            image, mime = rendered.data, rendered.mime
        try:
            text = self.corpus.page_text(ref.file, ref.page)
        except MadqaError:  # a damaged page store: the image is what counts; an excerpt is a courtesy
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
            except (MadqaError, OSError) as exc:  # a page that cannot be drawn (RenderError, PageLimitError): said
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
            where = "query strategy"
            try:
                # the query's file:NAME terms are the scope, not words to match (ScopeError: an observation)
                scoped = parse_scope(written, self.corpus.documents)
                files = combine(state.scope, scoped.files)
                if not scoped.query:
                    raise SearchError("the query has only file: terms; add the words to search for in the file")
                # (query, note), or (query, note, spent) when the strategy called a model of its own:
                # ``spent`` has ``usage`` and ``cost_usd`` (a ModelDecision does), counted in the run's totals
                executed, strategy_note, *extra = self.strategy.rewrite(scoped.query or written, state)
                spent = extra[0] if extra else None
                # a reranker may ask to see more candidates than are shown (its ``candidates`` attribute)
                depth = max(self.config.top_k, reranker_candidates(self.reranker))
                where = "retriever"
                result = search_scoped(self.retriever, executed, depth, files)
                retriever_note = result.note
                where = "reranker"
                hits = tuple(self.reranker.rerank(state.question, executed, list(result.hits)))[: self.config.top_k]
            except MadqaError as exc:  # a plugin's own failure (a bad query, a timeout) is an observation
                error = _describe(exc)
            except Exception as exc:  # a bug: the question ends as an error row, with the traceback
                raise _PluginBug(where, exc) from exc
        again = _normal(executed) in {_normal(q) for q in state.queries}  # the same search: show its pages again
        new = tuple(dict.fromkeys(h.ref for h in hits if again or h.ref not in state.seen))
        terms = _query_terms(executed)
        displayed: list[ShownPage] = []
        for ref in new:
            try:
                displayed.append(self._display(ref, terms, vision))
            except (MadqaError, OSError) as exc:  # a page that cannot be drawn is an observation; a bug raises
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

    def _answer(self, iteration: int, payload: Any, seen: set[PageRef]) -> AnswerStep | None:
        """The answer in ``payload`` with its citations checked; None when it holds no answer object.

        An answer whose every item reads as a refusal ("Not found in the documents") is a refusal."""
        parsed = parse_answer(payload)
        if parsed is None:
            return None
        answer, raw, parse_flags = parsed
        flags = list(parse_flags)
        if answer and refusal_items(answer):
            flags.append(f"the answer reads as a refusal: {answer[0][:80]!r}")
            answer, raw = [], []
        cited = resolve_citations(raw, self.corpus, seen)
        quotes = check_quotes(cited, self.corpus)
        flags += [*cited.flags, *quotes.flags]
        passages = () if answer else read_passages(payload, self.corpus, seen)
        return AnswerStep(iteration, tuple(answer), cited.refs, tuple(raw), tuple(flags), not answer,
                          quotes.quotes, quotes.found, closest_passages=passages)


def _answer_payload(decision: ModelDecision) -> Any:
    """The answer object in a decision: structured answer, submit_answer call, or JSON in text."""
    if decision.answer is not None:
        return decision.answer
    for call in decision.tool_calls:
        if call.name == "submit_answer":
            return call.arguments
    text = _reply_text(decision)
    if not decision.tool_calls and text and parse_answer(text) is not None:
        return text
    return None


def _reply_text(decision: ModelDecision) -> str:
    """The reply's text without reasoning blocks (``<think>...``)."""
    return strip_reasoning(decision.text or "").strip()


def _with_text_calls(decision: ModelDecision, tools: list[dict[str, Any]],
                     iteration: int) -> tuple[ModelDecision, tuple[str, ...]]:
    """The decision with tool calls written in its text (JSON, fences, ``<tool_call>`` tags, ...) as calls.

    Only for a reply with no native calls and no structured answer; only tools offered this turn."""
    if decision.tool_calls or decision.answer is not None or not decision.text:
        return decision, ()
    names = [t["function"]["name"] for t in tools]
    found = read_tool_calls(decision.text, names)
    if not found:
        return decision, ()
    calls = tuple(ToolCall(c.name, dict(c.arguments), f"text_{iteration}_{n}", c.error)  # ids unique in the conversation
                  for n, c in enumerate(found))
    shown = ", ".join(c.name for c in calls)
    return replace(decision, tool_calls=calls), (f"tool call(s) read from the reply's text: {shown}",)


def _unread(decision: ModelDecision, calls: Sequence[ToolCall]) -> str:
    """Why a reply on the answer step holds no answer, in a few words."""
    if calls:
        names = ", ".join(sorted({c.name for c in calls}))
        return f"the model called {names} when it had to answer"
    text = _reply_text(decision)
    if not text:
        return "the reply was empty"
    shown = text if len(text) <= 80 else text[:77] + "..."
    return f"the reply was not an answer object: {shown!r}"


def _cut_off(decision: ModelDecision) -> str:
    """The failure of a reply cut off by the output limit or withheld by a content filter."""
    said = "; ".join(str(n) for n in (decision.raw or {}).get("notes") or ())
    if decision.finish_reason == "content_filter":
        return ("the provider's content filter withheld or cut the reply (finish_reason content_filter)"
                + (f": {said}" if said else "") + "; the question was not answered")
    return ("the reply was cut off at the model's output limit (finish_reason length); raise it with "
            "--set backend.max_tokens=N (e.g. 4096)")


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


def _traceback(exc: BaseException) -> str:
    """The error and its traceback, for the trajectory (the plugin's author reads it there)."""
    return "".join(traceback.format_exception(exc)).strip()[-4000:]


class _PluginBug(Exception):
    """A plugin raised something other than madqa's own errors: the question ends as an error row."""

    def __init__(self, where: str, error: BaseException) -> None:
        super().__init__(where)
        self.where, self.error = where, error
