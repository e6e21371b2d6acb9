"""The plugin contract, typed: what each kind of component must have and what it may declare.

A component satisfies its Protocol structurally (no base class needed): a retriever is any object with
``search(query, k) -> SearchResult``. What a component *may* say about itself — its optional
capabilities — is declared here once, with its default, in ``CAPABILITIES``; the core reads a
capability only through the accessors below (``backend_capabilities``, ``reranker_candidates``,
``run_key_user``, ``retriever_indexing``, ``retriever_filters_files``), never by probing a plugin with ``getattr`` of its own.

A capability learned during a run is reported by the component: the litellm backend's
``supports_tools`` and ``supports_vision`` turn False when a server refuses tool calls or images,
and ``backend_capabilities`` is asked again before every model call, so the loop sees the change at
its next turn. ``tests/test_protocols.py`` ties every capability to docs/plugins-reference.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from madqa.contract import Host, Observation, PageText, QuestionState, SearchState
from madqa.types import Hit, ModelDecision, SearchResult


@runtime_checkable
class Retriever(Protocol):
    """Pages for a query, best first (``register_retrievers``).

    One declaring ``filters_files = True`` also takes ``files: frozenset[str] | None`` as a keyword:
    the scope, hits from those files only (``madqa.scope``)."""

    def search(self, query: str, k: int) -> SearchResult: ...


class UpdateIndex(Protocol):
    """A retriever factory's static ``update_index``: this generation's index written into ``folder``
    (``host``: the corpus language, progress, settings)."""

    def __call__(self, folder: Path, previous: Path | None, added: Iterable[PageText], removed: set[str],
                 host: Host) -> None: ...


@runtime_checkable
class IndexingRetriever(Protocol):
    """A retriever *factory* (its class) that keeps an index built at ingest: ``update_index``."""

    update_index: UpdateIndex

    def __call__(self, host: Host, options: dict[str, Any]) -> Retriever: ...


@runtime_checkable
class Reranker(Protocol):
    """A reordering or subset of the retriever's hits (``register_rerankers``)."""

    def rerank(self, question: str, query: str, hits: list[Hit]) -> list[Hit]: ...


@runtime_checkable
class QueryStrategy(Protocol):
    """The query to run and a note (``register_query_strategies``); a third item may report a model's cost."""

    def rewrite(self, query: str, state: SearchState) -> tuple[Any, ...]: ...


@runtime_checkable
class Backend(Protocol):
    """One model turn (``register_backends``)."""

    def decide(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
               force_answer: bool) -> ModelDecision: ...


@runtime_checkable
class PageReader(Protocol):
    """A page's text, or None when this reader has nothing for it (``register_page_readers``)."""

    def read(self, page: Any, file: str, number: int) -> str | None: ...


@runtime_checkable
class AgentTool(Protocol):
    """A tool the agent may call (``register_tools``): the JSON schema of its arguments and what a call does.

    ``run`` returns a ``madqa.Observation`` (text, and pages to show); a failure it can explain is a madqa
    error (``madqa.SearchError``, ...), which the model reads as the call's result."""

    parameters: dict[str, Any]

    def run(self, state: QuestionState, arguments: dict[str, Any]) -> Observation: ...


@dataclass(frozen=True)
class Capability:
    """One optional capability: on which kind, on what (the component or its factory), its default."""

    name: str
    kind: str
    on: str  # "component" (the object the factory returns) or "factory" (the registered class)
    default: Any
    description: str


CAPABILITIES: tuple[Capability, ...] = (
    Capability("supports_tools", "backend", "component", True,
               "False: the model gets the JSON-in-text protocol instead of native tool calls; may turn False "
               "during a run (a server that refuses tools), read again before every model call"),
    Capability("supports_vision", "backend", "component", True,
               "False: the model gets each page's text instead of its image; may turn False during a run"),
    Capability("reads_conversation", "backend", "component", False,
               "True: a follow-up's earlier turns go to the model as text before the question; False (a backend "
               "that reads only the question, like the offline baseline) gets a standalone question instead"),
    Capability("provider", "backend", "component", None,
               "the provider the backend talks to (e.g. anthropic): prompt-cache marks, whose key a run spends"),
    Capability("candidates", "reranker", "component", 0,
               "how many hits to ask the retriever for (more than top_k, so the reranker can promote pages)"),
    Capability("use_run_key", "query_strategy", "component", None,
               "use_run_key(api_key, api_base, provider) -> bool: a strategy calling a model of its own spends "
               "the run's key (a web visitor's) where it goes; returns whether it does"),
    Capability("checks_arguments", "tool", "component", False,
               "True: run() gets the model's arguments unchecked and says itself what is wrong with them (a "
               "search records a failed search); else the loop checks them against the tool's parameters first"),
    Capability("filters_files", "retriever", "component", False,
               "True: search(query, k, files=frozenset) returns hits from those files only (a scope); else the "
               "core asks for more hits and drops those outside the scope (madqa.scope.search_scoped)"),
    Capability("update_index", "retriever", "factory", None,
               "static update_index(folder, previous, added, removed): the index written at ingest"),
    Capability("update_index_streams", "retriever", "factory", False,
               "True: update_index reads its added pages once, in order (may run in a forked child)"),
    Capability("index_by_language", "retriever", "factory", False,
               "True: its index is analysed in the corpus language (update_index reads host.language), so it is "
               "rebuilt from the stored page texts when the language changes"),
    Capability("index_usable", "retriever", "factory", None,
               "index_usable(folder) -> bool: False for an index of an older format (rebuilt, not extended)"),
    Capability("index_analysis", "retriever", "factory", None,
               "a function of a page's text update_index computes; shared by retrievers naming the same one"),
    Capability("check_index", "retriever", "factory", None,
               "check_index(folder, pages) -> str | None: why a stored index cannot be reused"),
    Capability("index_on_first_use", "retriever", "factory", False,
               "True: a generation without this index is normal (built on first use, not required at ingest)"),
    Capability("index_parts", "retriever", "factory", (),
               "names of other retrievers whose indexes this one uses (hybrid: whoosh, dense)"),
    Capability("ingest_by_default", "retriever", "factory", True,
               "False: its index is built at ingest only when asked (slow to build: dense)"),
)
_DEFAULTS: Mapping[str, Any] = {c.name: c.default for c in CAPABILITIES}


def _declared(thing: object, name: str) -> Any:
    """The capability ``name`` as ``thing`` declares it, else its default: the one place it is read."""
    return getattr(thing, name, _DEFAULTS[name])


@dataclass(frozen=True)
class BackendCapabilities:
    """What a backend can take now; ask again each turn (a capability may be learned during a run)."""

    supports_tools: bool = True
    supports_vision: bool = True
    provider: str | None = None
    reads_conversation: bool = False


def backend_capabilities(backend: Backend) -> BackendCapabilities:
    provider = _declared(backend, "provider")
    return BackendCapabilities(bool(_declared(backend, "supports_tools")), bool(_declared(backend, "supports_vision")),
                               str(provider) if provider else None, _declared(backend, "reads_conversation") is True)


def reranker_candidates(reranker: Reranker) -> int:
    """How many hits the reranker wants from the retriever (0: just top_k)."""
    return int(_declared(reranker, "candidates") or 0)


RunKeyUser = Callable[[str, str | None, str | None], bool]


def retriever_filters_files(retriever: Retriever) -> bool:
    """Whether the retriever's ``search`` takes ``files=`` (a scope) and honours it."""
    return _declared(retriever, "filters_files") is True


def tool_checks_arguments(tool: AgentTool) -> bool:
    """Whether the tool checks its arguments itself (else the loop checks them against its schema)."""
    return _declared(tool, "checks_arguments") is True


def run_key_user(strategy: QueryStrategy) -> RunKeyUser | None:
    """The strategy's ``use_run_key``, or None for a strategy that calls no model of its own."""
    found = _declared(strategy, "use_run_key")
    return found if callable(found) else None


@dataclass(frozen=True)
class RetrieverIndexing:
    """What a retriever factory says about its index (see ``CAPABILITIES``, ``on="factory"``)."""

    update_index: Callable[..., None] | None = None
    update_index_streams: bool = False
    index_by_language: bool = False
    index_usable: Callable[[Path], bool] | None = None
    index_analysis: Callable[[str], Any] | None = None
    check_index: Callable[[Path, int], str | None] | None = None
    index_on_first_use: bool = False
    index_parts: tuple[str, ...] = ()
    ingest_by_default: bool = True

    @property
    def indexes(self) -> bool:
        """Whether the retriever keeps an index of its own, written at ingest."""
        return self.update_index is not None


def retriever_indexing(factory: Callable[..., Any]) -> RetrieverIndexing:
    """A retriever factory's index capabilities, each its default unless the factory declares it."""
    return RetrieverIndexing(
        update_index=_declared(factory, "update_index"),
        update_index_streams=bool(_declared(factory, "update_index_streams")),
        index_by_language=bool(_declared(factory, "index_by_language")),
        index_usable=_declared(factory, "index_usable"),
        index_analysis=_declared(factory, "index_analysis"),
        check_index=_declared(factory, "check_index"),
        index_on_first_use=bool(_declared(factory, "index_on_first_use")),
        index_parts=tuple(_declared(factory, "index_parts") or ()),
        ingest_by_default=bool(_declared(factory, "ingest_by_default")),
    )


def capability_names(kind: str | None = None) -> Sequence[str]:
    return [c.name for c in CAPABILITIES if kind is None or c.kind == kind]
