"""What every tab needs: settings, registry, corpora, configs, demo questions, the session state."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import gradio as gr

from madqa.errors import MadqaError
from madqa.settings import PipelineConfig, Settings
from madqa.ui.messages import plural
from madqa.ui.policy import WebPolicy
from madqa.ui.sessions import SessionStore

AGENT_CONCURRENCY = 8  # questions answered at once across Ask and Compare (model calls are API-bound)
AGENT_CONCURRENCY_ID = "agent"
F = TypeVar("F", bound=Callable[..., Any])


def api_parameters(names: Sequence[str]) -> Callable[[F], F]:
    """Give a ``*args`` event function named parameters, so its API endpoint documents them by name."""
    def wrap(fn: F) -> F:
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        fn.__signature__ = inspect.Signature([inspect.Parameter(n, kind) for n in names])  # type: ignore[attr-defined]
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
    session: gr.State | None = None  # {"token", "corpus"} of this browser session
    header: gr.Markdown | None = None  # status line above the tabs

    @property
    def backends(self) -> list[str]:
        """The installed backends a visitor may pick."""
        return self.policy.offered_backends(self.registry.names("backend"))

    @property
    def question_choices(self) -> list[tuple[str, str]]:
        return [(f"{q['id']}: {q['question']}", q["id"]) for q in self.questions]

    def question(self, qid: str | None) -> dict[str, Any] | None:
        return next((q for q in self.questions if q["id"] == qid), None) if qid else None

    def pick_question(self, qid: str | None) -> Any:
        """Event function: the text of the picked demo question, or no change."""
        q = self.question(qid)
        return q["question"] if q else gr.update()

    def corpus_or_error(self, session: Any, key: str | None = None) -> Any:
        """The session's corpus; gr.Error with a plain reason when it cannot be used."""
        try:
            return self.sessions.corpus(session, key)
        except MadqaError as exc:
            raise gr.Error(str(exc)) from None

    def header_text(self, session: Any) -> str:
        """The status line: the demo corpus's state and which corpus this session searches."""
        status = self.sessions.demo.status()
        key = session.get("corpus") if isinstance(session, dict) else "demo"
        if key == "mine":
            corpus = self.sessions.own_corpus(session.get("token", ""))
            mine = (f"{plural(len(corpus.documents), 'document')}, {plural(corpus.page_count, 'page')}"
                    if corpus else "empty")
            return f"{status}  \n**Searching: your uploads** ({mine}) — switch in the Corpus tab."
        return f"{status}  \n**Searching: the demo corpus** — upload your own PDFs in the Corpus tab."
