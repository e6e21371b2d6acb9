"""The BM25 MLLM agent loop (the MADQA paper's Algorithm 1) as a generator of typed steps.

One loop for every backend: the model searches (the query strategy may rewrite the query, the
retriever and reranker return pages), pages not shown before go back to it as labelled images,
and on the last step the search tool is withdrawn so it must answer. It imports no UI.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Collection, Generator, Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from madqa.answer import check_quotes, parse_answer, read_passages, resolve_citations
from madqa.budget import Budget
from madqa.context import ContextOptions, ModelTurn, NoteTurn, ShownPage, ToolTurn, Turn, build_messages
from madqa.context import image_part as image_part  # re-exported: tests and plugins build messages with it
from madqa.contract import SearchState as SearchState  # moved to the contract (madqa.SearchState): kept here
from madqa.conversation import ChatTurn, next_question
from madqa.errors import MadqaError, ServerLimitError
from madqa.jsonl import clean_text
from madqa.prompts import ANSWER_TOOL as ANSWER_TOOL  # re-exported: tests build tool lists with them
from madqa.prompts import OTHER_TOOLS_NOTE, REPAIR_NOTE, system_prompt
from madqa.prompts import SEARCH_TOOL as SEARCH_TOOL
from madqa.prompts import SYSTEM_PROMPT as SYSTEM_PROMPT  # re-exported: the benchmark's prompt
from madqa.protocols import (
    Backend,
    QueryStrategy,
    Reranker,
    Retriever,
    backend_capabilities,
    run_key_user,
)
from madqa.recovery import Sending, images_in, recover
from madqa.refusals import is_refusal, refusal_items
from madqa.render import render_page
from madqa.scope import describe_scope, resolve_files, search_scoped
from madqa.search_call import PluginBug, SearchPipeline
from madqa.settings import PipelineConfig, Settings, image_budget_px
from madqa.tool_calls import ToolRunner, core_call
from madqa.tool_text import read_tool_calls, strip_reasoning
from madqa.tools import ANSWER, PAPER_TOOLS, Observation, QuestionState, call_a_tool, offered_tools
from madqa.types import (
    AnswerStep,
    ErrorStep,
    Hit,
    ModelDecision,
    ModelStep,
    PageRef,
    ProposedCalls,
    SearchStep,
    SteerReply,
    SteerStep,
    Step,
    ToolCall,
)
from madqa.usage import estimate_usage

if TYPE_CHECKING:
    from madqa.corpus import Corpus
    from madqa.plugins import Registry

ASKED_AS = "a follow-up, asked as a standalone question (this backend reads no conversation): "
# A model that replies in prose again after being told to call a tool (local models answering in text)
# is asked for its answer next, instead of the same reply until max_steps (8 calls wasted at 10 steps)
IDLE_REPLIES = 2
MAX_RECOVERIES = 4  # times one turn is sent again with less after a server limit
UNREADABLE_ANSWER = "the submit_answer arguments could not be read, even after a repair turn"
NO_ANSWER_FLAGS = ("the model failed", "no answer could be parsed", UNREADABLE_ANSWER)  # rows of older versions



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
        # the config's [options.backend] table, then what the caller adds for this run; its key and api_base
        # go to the backend's host (madqa.Host), not into its options
        given = dict(backend_options or {})
        run_key, run_base = given.pop("api_key", None), given.pop("api_base", None)
        options = {**config.part_options("backend"), **given}
        if config.temperature is not None:
            options.setdefault("temperature", config.temperature)
        self.backend: Backend = registry.create("backend", config.backend, config.model, options, corpus=corpus,
                                                api_key=run_key, api_base=run_base)
        self.strategy_uses_run_key = False
        use_run_key = run_key_user(self.strategy)  # a strategy that calls a model (llm-rewrite)
        if run_key and use_run_key is not None:
            # spends the run's own key (a web visitor's), not the one the server holds for that provider
            self.strategy_uses_run_key = use_run_key(run_key, run_base, backend_capabilities(self.backend).provider)
        # what is sent (context policy, image budget, images at all): a server limit met in one
        # question changes it for the rest of the run (madqa.recovery)
        self.sending = Sending(ContextOptions.from_options(config.part_options("context")),
                               image_budget_px(settings, self.config))
        self.answer_always_present = bool(config.answer_always_present)
        self.tools = offered_tools(registry, self.config.tools, corpus)  # the tools offered, submit_answer last
        Budget.from_options(config.part_options("budget"))  # bad budget options fail here, not mid-run

    @property
    def searching(self) -> SearchPipeline:
        """The config's search parts as they are now (a test may swap one on a built agent)."""
        return SearchPipeline(self.corpus, self.retriever, self.reranker, self.strategy, self.config.top_k)

    @property
    def context(self) -> ContextOptions:
        return self.sending.context

    def run(self, question: str, first_hits: Sequence[Hit] | None = None,
            budget: Budget | Sequence[Budget] | None = None,
            conversation: Sequence[ChatTurn] = (), scope: Sequence[str] = ()) -> Iterator[Step]:
        """The question's steps as they happen (see ``_loop``); the last one is always an AnswerStep."""
        return cast(Iterator[Step], self._loop(question, first_hits, budget, conversation, scope, steer=False))

    def run_steered(self, question: str, budget: Budget | Sequence[Budget] | None = None,
                    conversation: Sequence[ChatTurn] = (),
                    scope: Sequence[str] = ()) -> Generator[Step | ProposedCalls, SteerReply | None, None]:
        """``run`` with a person beside the agent (Steer): before the model's tool calls run, a
        ``ProposedCalls`` is yielded and the face sends back a ``SteerReply`` (``next()`` approves)."""
        return self._loop(question, None, budget, conversation, scope, steer=True)

    def _loop(self, question: str, first_hits: Sequence[Hit] | None,
              budget: Budget | Sequence[Budget] | None,
              conversation: Sequence[ChatTurn], scope: Sequence[str],
              steer: bool) -> Generator[Step | ProposedCalls, SteerReply | None, None]:
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
        A query's own ``file:NAME`` terms narrow it further. Raises ScopeError for a name not in the corpus.
        ``steer`` (a person beside the agent, ``madqa.ui.steer``): before the model's tool calls run, a
        ``ProposedCalls`` is yielded; the face sends back a ``SteerReply`` (``next()`` approves), and a
        ``SteerStep`` records what the person did. Without it only steps are yielded."""
        files = resolve_files(scope, self.corpus.documents) if scope else ()
        reads = backend_capabilities(self.backend).reads_conversation
        typed = clean_text(question)
        asked = next_question(conversation, typed, reads)
        question = clean_text(asked.question)  # a lone surrogate could be neither sent, shown nor saved
        cache = self.context.marks_cache(backend_capabilities(self.backend).provider)
        # the scope is a standing rule of the run, told in the system prompt: a user message before the
        # question would be read as the question by a backend that takes the first one (the offline baseline)
        system = "\n\n".join(t for t in (system_prompt(self.answer_always_present), describe_scope(files)) if t)
        others = [n for n in self.tools if n not in (*PAPER_TOOLS, ANSWER)]
        if others:  # the paper's prompt is kept as it was for the paper's tools
            system += "\n\n" + OTHER_TOOLS_NOTE.format(tools=", ".join(others))
        given = [budget] if isinstance(budget, Budget) else list(budget or ())
        budgets = [Budget.from_options(self.config.part_options("budget")), *given]
        history: list[Turn] = []
        state = SearchState(asked.standalone, seeded=tuple(first_hits) if first_hits is not None else None,
                            probe=lambda q: tuple(search_scoped(self.retriever, q, self.config.top_k,
                                                                files or None).hits),
                            scope=files)
        last, iteration = self.config.max_steps, 0
        repaired_call = repaired_answer = False
        idle = 0  # replies in a row that called no tool (nothing searched, nothing answered)
        notes: list[str] = []  # what the run had to do to get an answer (server limits worked around)
        # a backend that reads no conversation: say what it was asked, when that is not the question as typed (a
        # question that stands alone after an answer is no follow-up, and was flagged as one)
        if conversation and asked.context is None and question.split() != typed.split():
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
            tools = [self.tools[ANSWER].schema()] if force else [t.schema() for t in self.tools.values()]
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
            by_person: set[str] = set()
            if steer and (proposed := _proposal(decision, iteration)):  # the face may change the calls first
                reply = yield ProposedCalls(iteration, proposed, decision.text)
                decision, steered = _steered(decision, proposed, reply, iteration)
                yield steered
                calls = decision.tool_calls
                by_person = {c.id for c in calls} if steered.action != "approve" else set()
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
                    history.append(ModelTurn(iteration, _reply_text(decision) or None, replay=_replay(decision)))
                    history.append(NoteTurn(iteration, REPAIR_NOTE.format(why=f" ({why})")))
                    continue
            if not calls:
                idle += 1
                history.append(ModelTurn(iteration, decision.text, replay=_replay(decision)))
                history.append(NoteTurn(iteration, call_a_tool(list(self.tools))))
                if idle >= IDLE_REPLIES and not force:  # it will not use the tools: ask for the answer now
                    last = min(last, iteration + 1)
                    notes.append(f"forced to answer after {idle} replies in a row that called no tool")
                continue
            idle = 0
            ids = [call.id or f"call_{iteration}_{n}" for n, call in enumerate(calls)]  # tool results answer these
            history.append(ModelTurn(iteration, decision.text, tuple(
                (call_id, c.name, json.dumps(c.arguments)) for c, call_id in zip(calls, ids, strict=True)),
                _replay(decision)))
            runner = ToolRunner(partial(self._display, vision=vision))
            asked_state = self._question_state(iteration, state, runner)
            for call, call_id in zip(calls, ids, strict=True):
                pages: Sequence[ShownPage] = ()
                if call.error:
                    text = (f"Error: the arguments of {call.name} could not be read: {call.error}. Call "
                            f"{call.name} again with its arguments as one valid JSON object.")
                elif call.name in self.tools and call.name != ANSWER:
                    try:
                        recorded, text, pages = runner.run(self.tools[call.name], call, asked_state,
                                                       "person" if call.id in by_person else "model")
                    except PluginBug as bug:
                        yield ErrorStep(iteration, bug.where, _traceback(bug.error))
                        yield self._failed(iteration, f"the {bug.where} raised {_describe(bug.error)}", notes)
                        return
                    for done in recorded:
                        if isinstance(done, SearchStep) and (done.usage.total_tokens or done.cost_usd):
                            for b in budgets:  # the query strategy's own model call
                                b.charge(done.usage, done.cost_usd)
                        yield done
                elif call.name == ANSWER:
                    text = ("Error: the submit_answer arguments hold no answer: give 'answer', a list of short "
                            "values, and 'citations', a list of {file, page, quote}.")
                    yield ErrorStep(iteration, "tool", text)
                else:
                    names = [n for n in self.tools if n != ANSWER]
                    text = f"unknown tool {call.name!r}; use {', '.join(names)} or {ANSWER}"
                    yield ErrorStep(iteration, "tool", text)
                history.append(ToolTurn(iteration, call_id, text, tuple(pages)))

    def _question_state(self, iteration: int, state: SearchState, runner: ToolRunner) -> QuestionState:
        """What the tools of one model turn may read and do."""

        def search(query: Any, files: Collection[str] | None = None, tool: str = "search_documents") -> Observation:
            step, text, pages = self.searching.run(iteration, query, state, runner.display, files, tool)
            return Observation(text, tuple(pages), step.error, (step,))

        return QuestionState(state.question, iteration, self.corpus, self.settings, self.config.top_k, state,
                             core_call(search), core_call(runner.display))

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


def _proposal(decision: ModelDecision, iteration: int) -> tuple[ToolCall, ...]:
    """The calls a person is asked about: the model's readable calls, or its structured answer as a call."""
    if any(c.error for c in decision.tool_calls):
        return ()  # an unreadable call goes back to the model first (one repair turn)
    if decision.tool_calls:
        return tuple(decision.tool_calls)
    if isinstance(decision.answer, dict):
        return (ToolCall(ANSWER, dict(decision.answer), f"answer_{iteration}"),)
    return ()


def _steered(decision: ModelDecision, proposed: tuple[ToolCall, ...], reply: SteerReply | None,
             iteration: int) -> tuple[ModelDecision, SteerStep]:
    """The decision with the person's calls in place of the model's, and the step recording it."""
    if reply is None or (reply.calls is None and reply.answer is None):
        return replace(decision, tool_calls=proposed, answer=None), SteerStep(iteration, "approve", proposed, proposed)
    if reply.answer is not None:
        calls: tuple[ToolCall, ...] = (ToolCall(ANSWER, dict(reply.answer), f"person_{iteration}"),)
        action = "answer"
    else:
        calls = tuple(ToolCall(c.name, dict(c.arguments), f"person_{iteration}_{n}")
                      for n, c in enumerate(reply.calls or ()))
        action = "edit" if [c.name for c in calls] == [c.name for c in proposed] else "replace"
    return replace(decision, tool_calls=calls, answer=None), SteerStep(iteration, action, proposed, calls)


def _replay(decision: ModelDecision) -> tuple[tuple[str, Any], ...]:
    """What the backend asked to be sent back with this reply's turn (``ModelDecision.replay``)."""
    return tuple(decision.replay.items())


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


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, MadqaError) else f"{type(exc).__name__}: {exc}"


def _traceback(exc: BaseException) -> str:
    """The error and its traceback, for the trajectory (the plugin's author reads it there)."""
    return "".join(traceback.format_exception(exc)).strip()[-4000:]
