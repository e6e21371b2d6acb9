"""The BM25 MLLM agent loop (the MADQA paper's Algorithm 1) as a generator of typed steps.

One loop for every backend: the model searches (the query strategy may rewrite the query, the
retriever and reranker return pages), pages not shown before go back to it as labelled images,
and on the last step the search tool is withdrawn so it must answer. It imports no UI.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from madqa.budget import Budget
from madqa.context import ContextOptions, ModelTurn, NoteTurn, ShownPage, ToolTurn, Turn, build_messages
from madqa.context import image_part as image_part  # re-exported: tests and plugins build messages with it
from madqa.contract import SearchState as SearchState  # moved to the contract (madqa.SearchState): kept here
from madqa.conversation import ChatTurn, next_question
from madqa.errors import MadqaError, ServerLimitError
from madqa.jsonl import clean_text
from madqa.loop.answering import read_answer
from madqa.loop.policies import IDLE_REPLIES as IDLE_REPLIES  # re-exported: the loop's documented constants
from madqa.loop.policies import UNREADABLE_ANSWER as UNREADABLE_ANSWER
from madqa.loop.policies import (
    Progress,
    broken_calls,
    forcing,
    idle_reply,
    next_turn,
    no_call_left,
    tools_called,
    turn_usage,
    unanswered,
    verification_repair,
)
from madqa.loop.replies import (
    answer_payload,
    backend_notes,
    cut_off,
    describe,
    replay,
    reply_text,
    traceback_text,
    unread,
    with_text_calls,
)
from madqa.loop.steering import proposal, steered
from madqa.prompts import ANSWER_TOOL as ANSWER_TOOL  # re-exported: tests build tool lists with them
from madqa.prompts import OTHER_TOOLS_NOTE, REPAIR_NOTE, VERIFY_NOTE, system_prompt
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
from madqa.refusals import is_refusal
from madqa.render import render_page
from madqa.scope import describe_scope, resolve_files, search_scoped
from madqa.search_call import PluginBug, SearchPipeline
from madqa.settings import PipelineConfig, Settings, image_budget_px
from madqa.tool_calls import ToolRunner, core_call
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
    Step,
    ToolCall,
)
from madqa.verification import REPAIRED, item_flag, needs_repair

if TYPE_CHECKING:
    from madqa.corpus import Corpus
    from madqa.plugins import Registry

ASKED_AS = "a follow-up, asked as a standalone question (this backend reads no conversation): "
MAX_RECOVERIES = 4  # times one turn is sent again with less after a server limit
NO_ANSWER_FLAGS = ("the model failed", "no answer could be parsed", UNREADABLE_ANSWER)  # rows of older versions
Display = Callable[[PageRef, tuple[str, ...]], ShownPage]  # a page drawn as this turn sends pages


@dataclass
class Run:
    """One question's run: what is sent each turn, and what happened so far (the state the turns share)."""

    question: str  # as sent (a follow-up's standalone form for a backend that reads no conversation)
    context: str | None  # the earlier turns' text before it, for a backend that reads them
    system: str
    cache: bool  # prompt-cache marks on the request
    budgets: list[Budget]  # the question's own (from the config) first, then the caller's
    search: SearchState
    steer: bool
    progress: Progress
    history: list[Turn] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the run had to do to get an answer (limits worked around)
    pending: AnswerStep | None = None  # an answer not on its pages, kept while its repair turn runs


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
        ``SteerStep`` records what the person did. Without it only steps are yielded.

        Each turn (``_turn``) asks the backend, reads the reply and acts on it; the run's counters and
        flags move only through the pure policies of ``madqa.loop.policies``."""
        run = self._start(question, first_hits, budget, conversation, scope, steer)
        while not (yield from self._turn(run)):
            pass

    def _start(self, question: str, first_hits: Sequence[Hit] | None, budget: Budget | Sequence[Budget] | None,
               conversation: Sequence[ChatTurn], scope: Sequence[str], steer: bool) -> Run:
        """A question's run before its first turn: what is asked, the system prompt, budgets, the scope."""
        files = resolve_files(scope, self.corpus.documents) if scope else ()
        capabilities = backend_capabilities(self.backend)
        typed = clean_text(question)
        asked = next_question(conversation, typed, capabilities.reads_conversation)
        question = clean_text(asked.question)  # a lone surrogate could be neither sent, shown nor saved
        # the scope is a standing rule of the run, told in the system prompt: a user message before the
        # question would be read as the question by a backend that takes the first one (the offline baseline)
        system = "\n\n".join(t for t in (system_prompt(self.answer_always_present), describe_scope(files)) if t)
        others = [n for n in self.tools if n not in (*PAPER_TOOLS, ANSWER)]
        if others:  # the paper's prompt is kept as it was for the paper's tools
            system += "\n\n" + OTHER_TOOLS_NOTE.format(tools=", ".join(others))
        given = [budget] if isinstance(budget, Budget) else list(budget or ())
        search = SearchState(asked.standalone, seeded=tuple(first_hits) if first_hits is not None else None,
                             probe=lambda q: tuple(search_scoped(self.retriever, q, self.config.top_k,
                                                                 files or None).hits),
                             scope=files)
        run = Run(question, asked.context, system, self.context.marks_cache(capabilities.provider),
                  [Budget.from_options(self.config.part_options("budget")), *given], search, steer,
                  Progress(last=self.config.max_steps))
        # a backend that reads no conversation: say what it was asked, when that is not the question as typed (a
        # question that stands alone after an answer is no follow-up, and was flagged as one)
        if conversation and asked.context is None and question.split() != typed.split():
            run.notes.append(f"{ASKED_AS}{asked.question}")
        return run

    def _turn(self, run: Run) -> Generator[Step | ProposedCalls, SteerReply | None, bool]:
        """One model turn: ask → read → act → record. True when the question ended (its AnswerStep yielded)."""
        run.progress = next_turn(run.progress)
        iteration = run.progress.iteration
        if stop := no_call_left(run.budgets, run.progress):  # nothing left for a call: make none
            yield (self._final(run, run.pending, None, f"the answer was not repaired: {stop}") if run.pending
                   else self._failed(iteration, stop, run.notes))
            return True
        force, spent = forcing(run.budgets, run.progress)
        tools = [self.tools[ANSWER].schema()] if force else [t.schema() for t in self.tools.values()]
        asked = yield from self._ask(run, tools, force)
        if asked is None:
            return True
        decision, messages, vision, started = asked
        usage, estimated = turn_usage(decision, messages, tools, backend_capabilities(self.backend).provider,
                                      run.budgets)
        for b in run.budgets:
            b.charge(usage, decision.cost_usd, estimated=estimated)
        decision, read_note = with_text_calls(decision, tools, iteration)
        yield ModelStep(iteration, decision.text, tuple(decision.tool_calls or ()), decision.usage, decision.cost_usd,
                        time.perf_counter() - started, force, backend_notes(decision) + read_note)
        if failure := cut_off(decision):
            yield self._failed(iteration, failure, run.notes)
            return True
        by_person: set[str] = set()
        if run.steer and (proposed := proposal(decision, iteration)):  # the face may change the calls first
            reply = yield ProposedCalls(iteration, proposed, decision.text)
            decision, steer_step = steered(decision, proposed, reply, iteration)
            yield steer_step
            by_person = {c.id for c in decision.tool_calls} if steer_step.action != "approve" else set()
        return (yield from self._act(run, decision, force, spent, partial(self._display, vision=vision), by_person))

    def _ask(self, run: Run, tools: list[dict[str, Any]], force: bool) -> Generator[
            Step, Any, tuple[ModelDecision, list[dict[str, Any]], bool, float] | None]:
        """The backend's decision (with the messages sent, whether they carried images and when the call
        started); a server limit met is worked around (``madqa.recovery``) and the turn sent again, at most
        ``MAX_RECOVERIES`` times. None when the backend failed: the question's failure was yielded."""
        iteration = run.progress.iteration
        for attempt in range(MAX_RECOVERIES + 1):
            # asked each turn: a backend may learn mid-run that its server takes no images
            vision = self.sending.vision and backend_capabilities(self.backend).supports_vision
            messages = build_messages(run.system, run.question, run.history, self.context, vision=vision,
                                      cache=run.cache, context=run.context)
            started = time.perf_counter()
            try:
                return self.backend.decide(messages, tools, force), messages, vision, started
            except ServerLimitError as exc:
                change = recover(exc, replace(self.sending, vision=vision), images_in(messages))
                if change is None or attempt == MAX_RECOVERIES:
                    yield ErrorStep(iteration, "backend", f"{exc} (nothing left to cut)")
                    yield self._failed(iteration, f"backend: {exc} (nothing left to cut)", run.notes)
                    return None
                redraw = change[0].image_budget_px != self.sending.image_budget_px
                self.sending, note = change
                if redraw:
                    run.history = self._redrawn(run.history)
                run.notes.append(note)
                yield ErrorStep(iteration, "recovery", f"{exc}; {note}; sent again")
            except MadqaError as exc:  # after the backend's own retries
                yield ErrorStep(iteration, "backend", str(exc))
                yield self._failed(iteration, f"backend: {exc}", run.notes)
                return None
            except Exception as exc:  # a bug in the backend plugin: its author needs the traceback
                yield ErrorStep(iteration, "backend", traceback_text(exc))
                yield self._failed(iteration, f"backend: the backend raised {describe(exc)}", run.notes)
                return None
        raise AssertionError("unreachable: the last attempt returns")  # pragma: no cover

    def _act(self, run: Run, decision: ModelDecision, force: bool, spent: str | None,
             display: Display, by_person: set[str]) -> Generator[Step, Any, bool]:
        """What the reply asks for: a repair turn for unreadable calls, the answer (or its repair turn on
        the answer step), a nudge after prose, or the tools run. True when the question ended."""
        iteration, calls = run.progress.iteration, decision.tool_calls or ()
        repair = broken_calls(run.progress, calls, force)
        run.progress = repair.progress
        if repair.action == "repair":  # one repair turn: quote the parse error back to the model
            for c in calls:
                if c.error:
                    yield ErrorStep(iteration, "tool", f"{c.name}: {c.error}; asked the model to send it again")
        elif repair.failure is not None:  # the repair turn did not help: give up
            yield self._failed(iteration, repair.failure, run.notes)
            return True
        else:
            answered = yield from self._answer_turn(run, decision, calls, force, spent)
            if answered is not None:
                return answered
        if not calls:  # prose: asked to call a tool, and forced to answer after IDLE_REPLIES of them
            run.progress, note = idle_reply(run.progress, force)
            run.history.append(ModelTurn(iteration, decision.text, replay=replay(decision)))
            run.history.append(NoteTurn(iteration, call_a_tool(list(self.tools))))
            if note:
                run.notes.append(note)
            return False
        run.progress = tools_called(run.progress)
        return (yield from self._run_tools(run, decision, calls, display, by_person))

    def _answer_turn(self, run: Run, decision: ModelDecision, calls: Sequence[ToolCall], force: bool,
                     spent: str | None) -> Generator[Step, Any, bool | None]:
        """The answer in the reply (a refusal in prose counts), yielded: True; or its repair turn asked (False).
        On the answer step with none to read: the answer kept from before a repair turn (True), else one repair
        turn restating the format (False), then the question's failure (True). None: go on."""
        iteration = run.progress.iteration
        payload = answer_payload(decision)
        if payload is None and not calls and is_refusal(reply_text(decision)):
            payload = {"answer": [], "citations": []}  # "I cannot find this in the documents."
        if payload is not None:
            answer = read_answer(iteration, payload, self.corpus, run.search)
            if answer is not None:
                return (yield from self._settle(run, decision, answer, spent))
        if not force:
            return None
        if run.pending is not None:  # the repair turn gave no answer: the first one stands, flagged
            yield self._final(run, run.pending, spent, "the repair turn gave no answer; the first answer is kept")
            return True
        why = unread(decision, calls)  # no answer to read: one short turn restating the format, then give up
        run.progress, failure = unanswered(run.progress, why)
        if failure is not None:
            yield self._failed(iteration, failure, run.notes)
            return True
        yield ErrorStep(iteration, "answer", f"{why}; asked the model to answer in the answer format")
        self._ask_again(run, decision, REPAIR_NOTE.format(why=f" ({why})"))
        return False

    def _settle(self, run: Run, decision: ModelDecision, answer: AnswerStep,
                spent: str | None) -> Generator[Step, Any, bool]:
        """The answer yielded (True); or, the first time an answer is not as MADQA asks (an item on no page seen,
        in another scale, too long), one repair turn asking for it as written (False: the next turn)."""
        iteration = run.progress.iteration
        unverified = needs_repair(answer.checks)
        # a repair turn asks for the answer as written on a page seen: with none seen there is nothing to ask for
        repair = verification_repair(run.progress, unverified and bool(run.search.seen), spent)
        if run.pending is None and repair is not None:
            run.progress, run.pending = repair, answer
            why = "; ".join(f for c in answer.checks if c.verdict in REPAIRED and (f := item_flag(c)))
            yield ErrorStep(iteration, "answer", f"{why}; asked the model for the answer as written on its page")
            self._ask_again(run, decision, VERIFY_NOTE.format(why=why))
            return False
        if run.pending is not None and answer.refusal:  # withdrawn when pressed: the first answer stands, flagged
            yield self._final(run, run.pending, spent, "after a repair turn the model gave no answer; the first "
                                                       "answer is kept, not verified")
            return True
        repaired = () if run.pending is None else (
            ("the answer was given again after a repair turn, and is still not as written on a page seen",)
            if unverified else ("the answer was repaired: the first was not as written on a page seen",))
        yield self._final(run, answer, spent, *repaired)
        return True

    def _final(self, run: Run, answer: AnswerStep, spent: str | None, *notes: str) -> AnswerStep:
        """The question's answer with what the run had to do to get it in its flags."""
        flags = (*run.notes, *answer.flags, *notes, *([f"stopped early: {spent}"] if spent else []))
        return replace(answer, flags=tuple(flags))

    def _ask_again(self, run: Run, decision: ModelDecision, note: str) -> None:
        """The reply and the loop's note for a repair turn in the history: a submit_answer call gets the note as
        its tool result (every call is answered), any other reply the note after it."""
        iteration, calls = run.progress.iteration, decision.tool_calls or ()
        answered = [c for c in calls if c.name == ANSWER and not c.error]
        if answered:
            ids = [c.id or f"call_{iteration}_{n}" for n, c in enumerate(answered)]
            run.history.append(ModelTurn(iteration, decision.text, tuple(
                (i, c.name, json.dumps(c.arguments)) for c, i in zip(answered, ids, strict=True)), replay(decision)))
            run.history.extend(ToolTurn(iteration, i, note) for i in ids)
            return
        text = reply_text(decision) or (json.dumps(decision.answer) if decision.answer is not None else None)
        run.history.append(ModelTurn(iteration, text, replay=replay(decision)))
        run.history.append(NoteTurn(iteration, note))

    def _run_tools(self, run: Run, decision: ModelDecision, calls: Sequence[ToolCall], display: Display,
                   by_person: set[str]) -> Generator[Step, Any, bool]:
        """Each call run (its steps yielded, budgets charged for a strategy's own model calls) and its
        result recorded for the next turn. True only when a plugin's bug ended the question."""
        iteration = run.progress.iteration
        ids = [call.id or f"call_{iteration}_{n}" for n, call in enumerate(calls)]  # tool results answer these
        run.history.append(ModelTurn(iteration, decision.text, tuple(
            (call_id, c.name, json.dumps(c.arguments)) for c, call_id in zip(calls, ids, strict=True)),
            replay(decision)))
        runner = ToolRunner(display)
        asked_state = self._question_state(iteration, run.search, runner)
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
                    yield ErrorStep(iteration, bug.where, traceback_text(bug.error))
                    yield self._failed(iteration, f"the {bug.where} raised {describe(bug.error)}", run.notes)
                    return True
                for done in recorded:
                    if isinstance(done, SearchStep) and (done.usage.total_tokens or done.cost_usd):
                        for b in run.budgets:  # the query strategy's own model call
                            b.charge(done.usage, done.cost_usd)
                    yield done
            else:
                text = _misdirected(call.name, list(self.tools))
                yield ErrorStep(iteration, "tool", text)
            run.history.append(ToolTurn(iteration, call_id, text, tuple(pages)))
        return False

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


def _misdirected(name: str, tools: list[str]) -> str:
    """The tool result for a submit_answer call with no answer in it, or a call of a tool not offered."""
    if name == ANSWER:
        return ("Error: the submit_answer arguments hold no answer: give 'answer', a list of short "
                "values, and 'citations', a list of {file, page, quote}.")
    names = [n for n in tools if n != ANSWER]
    return f"unknown tool {name!r}; use {', '.join(names)} or {ANSWER}"
