"""What a plugin receives and returns besides the value types of ``madqa.types``: the corpus it reads, the
host context its factory is handed, the state a query strategy or a tool reads, what a tool returns.

A leaf of the contract (``tests/test_boundaries.py``): it imports nothing from the loop (``agent``,
``tools``, ``plugins``, ``context``, ...), not even for type hints, so a plugin written against it, and the
Protocols of ``madqa.protocols``, never depend on how the loop is built. Every name here is on ``madqa``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from madqa.errors import PluginError
from madqa.languages import DEFAULT as DEFAULT_LANGUAGE
from madqa.settings import Settings
from madqa.types import Hit, PageRef, Step


@dataclass(frozen=True)
class PageText:
    """The text of one page and where it came from (text, ocr, imported, none)."""

    file: str
    page: int
    text: str
    source: str
    # at ingest only: the text's index analysis, computed once for the retrievers sharing it (madqa.indexers)
    analysis: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class DocumentRecord:
    """One ingested file: its content hash, page count and how many pages came from each source."""

    file: str
    sha256: str
    size: int
    pages: int
    sources: dict[str, int] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["warnings"] = list(self.warnings)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DocumentRecord:
        return cls(d["file"], d["sha256"], d["size"], d["pages"], dict(d.get("sources", {})),
                   tuple(d.get("warnings", ())))


class Corpus(Protocol):
    """What a retriever, reranker, strategy, tool or backend may read of the collection it is made for: an
    ingested corpus, read-only (``madqa.corpus.Corpus`` is the one madqa opens)."""

    @property
    def root(self) -> Path:
        """The folder of the PDFs (for messages: a plugin reads pages through the methods below)."""

    @property
    def state_dir(self) -> Path:
        """Where madqa keeps this corpus's generations (``MADQA_HOME/corpora/...``)."""

    @property
    def generation(self) -> str:
        """The name of the generation open (changes with every ingest that changed something)."""

    @property
    def documents(self) -> Mapping[str, DocumentRecord]:
        """Every file, by its path relative to ``root``."""

    @property
    def language(self) -> str:
        """The code of the language the pages are analysed in (``madqa.LANGUAGES``)."""

    @property
    def page_count(self) -> int: ...

    def document(self, file: str) -> DocumentRecord:
        """The record of ``file``; ``madqa.CorpusError`` when it is not in the corpus."""

    def pdf_path(self, file: str) -> Path:
        """The absolute path of an ingested file (to open it: ``pymupdf.open``); ``madqa.CorpusError`` for
        a name that is not in the corpus."""

    def has_page(self, file: str, page: int) -> bool: ...

    def page_text(self, file: str, page: int) -> str:
        """The stored text of a page ('' when it has none)."""

    def iter_pages(self) -> Iterator[PageText]:
        """Every page's text, in file then page order."""

    def abbreviations(self) -> list[tuple[str, str, str, int]]:
        """(short, long, file, page) for every "Full Name (FN)" the pages define."""

    def retriever_dir(self, name: str) -> Path:
        """The folder where retriever ``name`` keeps its index for this generation."""


class Components(Protocol):
    """The registry a factory is handed (``Host.registry``): builds other parts from the same plugins, in
    the same call forms as madqa does (``create("retriever", name, corpus, options)``)."""

    def create(self, kind: str, name: str, *args: Any, **kwargs: Any) -> Any: ...


IndexProgress = Callable[[int, "int | None", str], None]  # (pages done, total or None, detail)


@dataclass(frozen=True)
class Host:
    """What madqa hands a factory besides its ``options``: ``factory(host, options)`` for a component
    registered with ``takes_host=True``, ``update_index(folder, previous, added, removed, host)`` for its
    index. Nothing here is an option (options are saved with a config; a key never is).

    ``corpus``: the collection (None for a page reader, an embedder, or a part made outside a corpus);
    ``model``: a backend's model string; ``api_key`` / ``api_base``: given by the caller for this run (a web
    visitor's, ``--api-base``), never logged or stored, None when not given; ``settings``: the process's
    ``MADQA_*`` settings, read once at start-up; ``registry``: to build other parts; ``language``: the
    corpus language an index is written in; ``progress(done, total, detail)``: how an index build is going."""

    corpus: Corpus | None = None
    settings: Settings = field(default_factory=Settings)
    registry: Components | None = field(default=None, repr=False, compare=False)
    model: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_base: str | None = None
    language: str = DEFAULT_LANGUAGE
    progress: IndexProgress | None = field(default=None, repr=False, compare=False)

    def require_corpus(self, who: str) -> Corpus:
        """The corpus, or PluginError naming ``who`` when this part was made without one."""
        if self.corpus is None:
            raise PluginError(f"{who} needs a corpus, and was made without one")
        return self.corpus


@dataclass(frozen=True)
class ShownPage:
    """A page a tool call displayed: its rendered image (None when it has none), its text, and the
    query words that found it (for the excerpt)."""

    ref: PageRef
    image: bytes | None
    mime: str
    text: str
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class Observation:
    """What a tool call returns: text for the model, and pages to show it (drawn by the loop).

    ``pages``: ``PageRef``s (drawn as images, or given as text to a model without vision) or pages already
    drawn (``ShownPage``). ``error``: the call could not do what was asked (said in ``text`` too); the
    trajectory records it. ``steps``: steps the tool made (the ``SearchStep`` of a search), yielded and
    charged by the loop."""

    text: str
    pages: tuple[PageRef | ShownPage, ...] = ()
    error: str | None = None
    steps: tuple[Step, ...] = ()


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


@dataclass
class QuestionState:
    """What a tool may read and do while one question runs."""

    question: str
    iteration: int
    corpus: Corpus
    settings: Settings
    top_k: int
    searches: SearchState  # the question, its searches, the pages seen (``seen``), the scope
    # search(query, files=None, tool="search_documents") -> Observation: the config's whole search (strategy,
    # retriever, reranker), within ``files`` (and the question's scope) when given; records a SearchStep
    # (naming ``tool``) and shows its new pages
    search: Callable[..., Observation] = field(repr=False)
    # display(ref, terms) -> ShownPage: a page drawn as the context policy sends it (RenderError when it cannot be)
    display: Callable[[PageRef, tuple[str, ...]], ShownPage] = field(repr=False)

    @property
    def seen(self) -> set[PageRef]:
        """The pages shown to the model so far."""
        return self.searches.seen
