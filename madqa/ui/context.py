"""What every tab needs: settings, registry, corpora, configs, demo questions, the session state."""

from __future__ import annotations

import html
import inspect
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import gradio as gr

from madqa.budget import Budget
from madqa.collections import load_question_set
from madqa.errors import MadqaError
from madqa.settings import PipelineConfig, Settings
from madqa.ui.collection_picker import collection_status
from madqa.ui.given_marks import GivenMarks
from madqa.ui.limits import Limits, request_address, within_embedding_cap
from madqa.ui.messages import hide_paths, md_escape, plural
from madqa.ui.policy import Refused, WebPolicy
from madqa.ui.sessions import SessionStore

AGENT_CONCURRENCY = 8  # questions answered at once across Ask and Compare (model calls are API-bound)
AGENT_CONCURRENCY_ID = "agent"
F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("madqa.ui")


def shown_error(message: str) -> gr.Error:
    """The one way an error reaches a visitor: a gr.Error whose message shows as text (Gradio renders
    notification messages as HTML), with no server path in it (``hide_paths``). A refusal is the visitor's
    input, not a bug: the log gets one line (Gradio would print a traceback for every gr.Error)."""
    shown = hide_paths(str(message))
    log.info("refused: %s", shown)
    return gr.Error(html.escape(shown, quote=False), print_exception=False)


def shown_info(message: str) -> None:
    """A gr.Info notification whose message shows as text, with no server path in it."""
    gr.Info(html.escape(hide_paths(str(message)), quote=False))


def internal_error(exc: BaseException, where: str) -> str:
    """What a visitor reads about a bug: its kind only. The exception and its traceback go to the log."""
    log.error("internal error in %s", where, exc_info=exc)
    return f"internal error ({type(exc).__name__}); the server log has the details"


def api_parameters(names: Sequence[str]) -> Callable[[F], F]:
    """Give a ``*args`` event function named parameters, so its API endpoint documents them by name.

    A last parameter named ``request`` gets Gradio's request (who is asking), not an input."""
    def wrap(fn: F) -> F:
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = [inspect.Parameter(n, kind, annotation=gr.Request if n == "request" else inspect.Parameter.empty)
                  for n in names]
        fn.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        if "request" in names:
            fn.__annotations__ = {**fn.__annotations__, "request": gr.Request}
        return fn
    return wrap


@dataclass
class AppContext:
    settings: Settings
    registry: Any
    sessions: SessionStore
    configs: dict[str, PipelineConfig]
    default_config: str
    questions: list[dict[str, Any]] = field(default_factory=list)  # the demo question set
    policy: WebPolicy = field(default_factory=WebPolicy)  # what a visitor may do
    limits: Limits | None = None  # how much a visitor may take (None: no limits, e.g. in unit tests)
    session: gr.State | None = None  # {"token", "corpus"} of this browser session
    header: gr.Markdown | None = None  # status line above the tabs
    marks: GivenMarks = field(default_factory=GivenMarks)  # the highlights each session's answers handed out
    pickers: list[Any] = field(default_factory=list)  # (collection picker, its question list) of each tab
    _question_sets: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @contextmanager
    def job_slot(self, session: Any, request: Any) -> Iterator[list[str]]:
        """A job slot of this visitor (session and client address) while the block runs; gr.Error when the
        visitor runs too many jobs already. Gives the visitor's budget keys."""
        token = session.get("token") if isinstance(session, dict) else None
        client = request_address(request, self.settings.proxy_hops)
        keys = [f"client:{client}"] + ([f"session:{token}"] if token else [])
        if self.limits is None:
            yield keys
            return
        try:
            slot = self.limits.job(token, client)
            slot.__enter__()
        except Refused as exc:
            raise shown_error(str(exc)) from None
        try:
            yield keys
        finally:
            slot.__exit__(None, None, None)

    def budgets(self, keys: list[str] | None, config: PipelineConfig, options: dict[str, Any]) -> list[Budget]:
        """The visitor's budgets on the server's keys for a run of ``config`` (none when the run does not spend
        them, ``WebPolicy.spends_server_key``), to hand ``Agent.run``: spent, they force the answer."""
        if self.limits is None or keys is None or not self.policy.spends_server_key(config, options):
            return []
        return self.limits.budgets(keys)

    def timed(self, steps: Iterator[Any], keys: list[str] | None) -> Iterator[Any]:
        """``steps`` stopped when the question runs past the web app's time limit (``Limits.timed``)."""
        return steps if self.limits is None or keys is None else self.limits.timed(steps)

    @property
    def backends(self) -> list[str]:
        """The installed backends a visitor may pick."""
        return self.policy.offered_backends(self.registry.names("backend"))

    @property
    def question_choices(self) -> list[tuple[str, str]]:
        """The question list's choices when the page opens: the default collection's question set."""
        return self.question_choices_for(self.sessions.default_key)

    def question_choices_for(self, key: str) -> list[tuple[str, str]]:
        return [(f"{q['id']}: {q['question']}", q["id"]) for q in self.questions_for(key)]

    def questions_for(self, key: str | None) -> list[dict[str, Any]]:
        """The question set of collection ``key``: the demo's, an operator collection's own (read once; an
        unreadable one is logged and offers none), none for a visitor's uploads."""
        key = key or self.sessions.default_key
        if key == "demo":
            return self.questions
        collection = self.sessions.shared.get(key)
        if collection is None:
            return []
        if key not in self._question_sets:
            self._question_sets[key] = load_question_set(collection.spec)
        return self._question_sets[key]

    def session_questions(self, session: Any) -> list[dict[str, Any]]:
        """The question set of the collection the session searches."""
        return self.questions_for(session.get("corpus") if isinstance(session, dict) else None)

    def question(self, qid: str | None, session: Any = None) -> dict[str, Any] | None:
        """Question ``qid`` of the session's collection's question set (the default collection's without one)."""
        return next((q for q in self.session_questions(session) if q["id"] == qid), None) if qid else None

    def pick_question(self, qid: str | None, session: Any = None) -> Any:
        """Event function: the text of the picked question, or no change."""
        q = self.question(qid, session)
        return q["question"] if q else gr.update()

    def corpus_or_error(self, session: Any, key: str | None = None) -> Any:
        """The session's corpus; gr.Error with a plain reason when it cannot be used."""
        try:
            return self.sessions.corpus(session, key)
        except MadqaError as exc:
            raise shown_error(str(exc)) from None

    def bounded(self, config: PipelineConfig, corpus_key: str, corpus: Any) -> PipelineConfig:
        """``config`` as it may run on this corpus: on a session's uploads past MADQA_WEB_DENSE_MAX_PAGES, a
        retriever that embeds every page gives way to BM25, and the visitor is told (``within_embedding_cap``)."""
        if corpus_key != "mine":
            return config  # the demo corpus is the operator's: embedded once, shared
        bounded, note = within_embedding_cap(config, self.registry, int(getattr(corpus, "page_count", 0) or 0),
                                             self.settings.web_dense_max_pages)
        if note:
            shown_info(note)
        return bounded

    def header_text(self, session: Any) -> str:
        """The status line: every shared collection's state and which corpus this session searches."""
        status = "  \n".join(collection_status(c) for c in self.sessions.shared.values())
        key = session.get("corpus") if isinstance(session, dict) else None
        key = key if key == "mine" or key in self.sessions.shared else self.sessions.default_key
        lines = [status] if status else []
        if key == "mine":
            corpus = self.sessions.own_corpus(session.get("token", "")) if isinstance(session, dict) else None
            mine = (f"{plural(len(corpus.documents), 'document')}, {plural(corpus.page_count, 'page')}"
                    if corpus else "empty")
            lines.append(f"**Searching: your uploads** ({mine}) — pick another collection above the question.")
        elif key == "demo":
            lines.append("**Searching: the demo corpus** — upload your own PDFs in the Corpus tab.")
        else:
            lines.append(f"**Searching: {md_escape(key)}** — pick another collection above the question.")
        return "  \n".join(lines)

    @property
    def indexing(self) -> bool:
        """Some shared collection is still being indexed (the status line follows it)."""
        return not all(c.ready for c in self.sessions.shared.values())
