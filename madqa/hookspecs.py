"""Every hook madqa calls, documented. Plugins implement them with ``@madqa.hookimpl``.

Registration hooks receive a ``register`` callback, so the host owns names, collisions and
provenance: ``register(name, factory, description="", requires=(), options=(), takes_host=True)``. With
``takes_host=True`` every factory is ``factory(host, options)``: ``host`` a ``madqa.Host`` (the corpus, a
backend's model, the run's ``api_key`` and ``api_base``, the settings, the registry), ``options`` the
part's options dict and nothing else. Without it a factory has the older form each hook names below
(deprecated: a ``DeprecationWarning`` at registration; it still works). ``requires``
names importable modules the component needs; when one is missing the component is still listed,
as unavailable, with the reason. ``options`` declares what the factory's ``options`` dict may hold:
a tuple of ``madqa.Option`` (``madqa/options.py``). What each kind of component must have, and the
optional capabilities it may declare, are typed in ``madqa/protocols.py``. A hook implementation
returns nothing (``None``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import pluggy

hookspec = pluggy.HookspecMarker("madqa")
hookimpl = pluggy.HookimplMarker("madqa")


class Register(Protocol):
    """The callback a registration hook receives."""

    def __call__(self, name: str, factory: Callable[..., Any], description: str = "",
                 requires: tuple[str, ...] | list[str] = (), options: Any = (), *, takes_host: bool = False) -> None: ...


@hookspec
def register_retrievers(register: Register) -> None:
    """Called once per plugin manager to collect retrievers.

    Register ``name -> factory(host, options)`` with ``takes_host=True``; the factory returns an object with
    ``search(query: str, k: int) -> madqa.SearchResult``, hits best first. ``host.corpus`` is the
    ``madqa.Corpus`` searched, ``host.registry`` builds other parts from the same plugins; ``options`` a dict
    of retriever options. A retriever declaring ``filters_files = True`` also takes ``files: frozenset[str] |
    None`` (a scope: hits from those files only); any other is asked for more hits and filtered by madqa
    (``madqa.search_scoped``). The object is a ``madqa.Retriever``; a factory keeping an index (a static
    ``update_index(folder, previous, added, removed, host)``) is a ``madqa.IndexingRetriever`` and may declare
    ``update_index_streams``, ``index_by_language``, ``index_usable``, ``index_analysis``, ``check_index``,
    ``index_on_first_use``, ``index_parts``, ``ingest_by_default`` (``madqa.CAPABILITIES``). The deprecated
    form: ``factory(corpus, options)``, given ``registry=`` / ``settings=`` when it names them. Returns None.
    """


@hookspec
def register_rerankers(register: Register) -> None:
    """Called once per plugin manager to collect rerankers.

    Register ``name -> factory(host, options)`` (``takes_host=True``; deprecated: ``factory(corpus,
    options)``); the factory returns an object with
    ``rerank(question: str, query: str, hits: list[Hit]) -> list[Hit]`` (a reordering or subset
    of ``hits``; the first top_k are shown): a ``madqa.Reranker``. An optional ``candidates: int``
    attribute asks the retriever for that many hits, so the reranker can promote pages below the top_k.
    Returns None.
    """


@hookspec
def register_query_strategies(register: Register) -> None:
    """Called once per plugin manager to collect query-rewriting strategies.

    Register ``name -> factory(host, options)`` (``takes_host=True``; deprecated: ``factory(corpus,
    options)``); the factory returns an object with
    ``rewrite(query: str, state: madqa.SearchState) -> tuple[str, str | None]``: the query
    to execute and a note saying what was changed and why (None when unchanged). A strategy that
    called a model of its own may return a third item with ``usage`` (madqa.Usage) and
    ``cost_usd`` (e.g. the ``madqa.ModelDecision``): it is added to the run's totals. The object is a
    ``madqa.QueryStrategy``; one that calls a model may declare ``use_run_key(api_key, api_base,
    provider) -> bool`` to spend the run's own key (a web visitor's) where it goes. Returns None.
    """


@hookspec
def register_backends(register: Register) -> None:
    """Called once per plugin manager to collect model backends.

    Register ``name -> factory(host, options)`` (``takes_host=True``); the factory returns an object with
    ``decide(messages, tools, force_answer) -> madqa.ModelDecision``: a ``madqa.Backend``. ``host.model`` is
    the model string, ``host.corpus`` the collection, ``host.api_key`` and ``host.api_base`` what the caller
    gave for this run (never log or store them); ``options`` holds the backend's options only. The
    deprecated form, ``factory(model, options)``, finds ``corpus``, ``api_key`` and ``api_base`` in
    ``options``. It may declare
    ``supports_tools``, ``supports_vision`` (read again before every model call: a capability learned
    mid-run is reported by the backend), ``provider`` and ``reads_conversation`` (True: a follow-up's
    earlier turns come as text; else it is given a standalone question). Returns None.
    """


@hookspec
def register_page_readers(register: Register) -> None:
    """Called once per plugin manager to collect page readers (where page text comes from).

    Register ``name -> factory(host, options)`` (``takes_host=True``; deprecated: ``factory(options)``);
    the factory returns an object with ``read(page: pymupdf.Page, file: str, number: int) -> str | None``; None means this reader
    has nothing for that page: a ``madqa.PageReader``. Returns None.
    """


@hookspec
def register_embedders(register: Register) -> None:
    """Called once per plugin manager to collect text embedders (sentence vectors).

    Register ``name -> factory(host, options)`` (``takes_host=True``; deprecated: ``factory(options)``);
    the factory returns an object with ``embed(text: str) ->
    Sequence[float]`` (one vector per text; cosine compares two) and ``representation: str`` (one
    sentence saying what the vectors are, printed beside the figures made with them). Used by the
    embedding query drift of ``madqa eval --embedding-drift``. Returns None.
    """


@hookspec
def register_tools(register: Register) -> None:
    """Called once per plugin manager to collect agent tools (what the model may call besides answering).

    Register ``name -> factory(host, options)`` (``takes_host=True``; deprecated: ``factory(corpus,
    options)``); ``description`` is what the model reads about the tool.
    The factory returns a ``madqa.AgentTool``: ``parameters`` (the JSON schema of its arguments, an object
    schema) and ``run(state: madqa.QuestionState, arguments: dict) -> madqa.Observation`` (text, and pages
    to show as images). A config offers the tools it names (``tools = [...]``); the built-ins are
    search_documents, show_pages, submit_answer and the navigation tools (``madqa_plugins/tools``). A tool's
    own failure is a madqa error (the model reads it); anything else it raises ends the question as an
    error row. The loop checks the arguments against ``parameters`` first, unless the tool declares
    ``checks_arguments = True``. Returns None.
    """
