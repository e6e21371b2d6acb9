"""Frozen value types that flow through madqa: pages, hits, agent steps and traces."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

TextSource = Literal["text", "ocr", "imported", "none", "blank"]  # blank: no text, image or drawing


@dataclass(frozen=True, order=True)
class PageRef:
    """One physical page of one file; ``file`` is relative to the corpus root, ``page`` 1-based."""

    file: str
    page: int

    def label(self) -> str:
        """The label the model sees next to the page image."""
        return f"File: {self.file}, Page: {self.page}"


@dataclass(frozen=True)
class Hit:
    """A page returned by a retriever, best first; ``score`` is retriever-specific."""

    file: str
    page: int
    score: float
    snippet: str = ""

    @property
    def ref(self) -> PageRef:
        return PageRef(self.file, self.page)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "page": self.page, "score": round(self.score, 4), "snippet": self.snippet}


NO_PAGES_NOTE = "this collection has no pages yet"  # every retriever's note for a corpus with no page (not an error)


@dataclass(frozen=True)
class SearchResult:
    """What a retriever returns: the hits, the query it actually ran, and a note for people.

    ``note`` says when the retriever fell back (e.g. "no page matched all terms; matched any term").
    """

    hits: tuple[Hit, ...]
    query: str
    note: str | None = None


@dataclass(frozen=True)
class Usage:
    """Token counts of one model call (zeros when the backend cannot tell)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens)

    def to_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass(frozen=True)
class ToolCall:
    """A model's request to call a tool, with its parsed arguments."""

    name: str
    arguments: dict[str, Any]
    id: str = ""
    error: str | None = None  # why the arguments could not be read (not JSON, not an object); None when they could


@dataclass(frozen=True)
class ModelDecision:
    """What a backend returns from ``decide``: tool calls, or a final answer payload, or text.

    ``answer`` is the raw (unvalidated) answer object when the model answered through a tool
    call or structured output; ``text`` is free text (which may itself hold JSON, or tool calls
    written as text: the loop reads those, backends report the text as the model sent it).
    ``finish_reason``: why the model stopped, normalised: ``stop``, ``tool_calls``, ``length``
    (cut off by max_tokens, after any retry the backend made), ``content_filter`` (the provider's
    filter withheld or cut the reply), or None when the backend cannot tell. ``estimated``: the
    usage is an estimate (the server sent none), not a count. ``replay``: fields the backend needs sent
    back with this reply's assistant message on later calls (Anthropic's signed ``thinking_blocks``:
    with extended thinking on, a tool call's turn must start with them, else the next call is refused).
    """

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    answer: Any = None
    usage: Usage = Usage()
    cost_usd: float | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    finish_reason: str | None = None
    estimated: bool = False
    replay: dict[str, Any] = field(default_factory=dict)


# --- agent steps: what the loop yields, in order -------------------------------------------


@dataclass(frozen=True)
class SearchStep:
    """One search: the query as the model wrote it, as executed, and what came back.

    ``usage`` and ``cost_usd`` are what a plugin's own model calls cost for this search (e.g. the
    ``llm-rewrite`` strategy's), counted in the run's totals; zero and None when it made none."""

    iteration: int
    query: str
    executed_query: str
    hits: tuple[Hit, ...]
    new_pages: tuple[PageRef, ...]
    strategy_note: str | None = None
    retriever_note: str | None = None
    error: str | None = None
    elapsed_s: float = 0.0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    tool: str = "search_documents"  # the tool that searched (search_in: within one document)
    type: Literal["search"] = "search"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["usage"] = self.usage.to_dict()
        d["hits"] = [h.to_dict() for h in self.hits]
        d["new_pages"] = [asdict(p) for p in self.new_pages]
        d["num_results"] = len(self.hits)
        return d


@dataclass(frozen=True)
class ModelStep:
    """One model call: its free text, the tools it called, tokens, cost and time."""

    iteration: int
    text: str | None
    tool_calls: tuple[ToolCall, ...]
    usage: Usage
    cost_usd: float | None
    elapsed_s: float
    forced_answer: bool = False
    notes: tuple[str, ...] = ()  # what the backend noticed in the reply (arguments repaired, no message, ...)
    type: Literal["model"] = "model"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["usage"] = self.usage.to_dict()
        d["tool_calls"] = [asdict(c) for c in self.tool_calls]
        return d


@dataclass(frozen=True)
class Passage:
    """A page's lines (sentences or table rows) that match a question, offered instead of an answer.

    ``lines`` are verbatim from the page's stored text, so they can be highlighted on the page."""

    file: str
    page: int
    lines: tuple[str, ...]

    @property
    def ref(self) -> PageRef:
        return PageRef(self.file, self.page)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "page": self.page, "lines": list(self.lines)}


Verdict = Literal["cited", "moved", "scale", "unseen", "long"]


@dataclass(frozen=True)
class ItemCheck:
    """One answer item looked for on the pages (``madqa.verification``): ``cited`` (written on its cited page),
    ``moved`` (on another page the agent saw, ``page``: the citation moved there), ``scale`` (``page`` prints it in
    another scale or unit, ``written``: as printed), ``unseen`` (on no page seen) or ``long`` (no short extractive
    answer). Only ``cited`` and ``moved`` are verified: the answer's words are on that page."""

    item: str
    verdict: Verdict
    page: PageRef | None = None
    written: str | None = None

    @property
    def verified(self) -> bool:
        return self.verdict in ("cited", "moved")

    def to_dict(self) -> dict[str, Any]:
        return {"item": self.item, "verdict": self.verdict, "verified": self.verified,
                "file": self.page.file if self.page else None, "page": self.page.page if self.page else None,
                "written": self.written}


@dataclass(frozen=True)
class AnswerStep:
    """The final answer: ``citations`` are the validated ones, ``raw_citations`` as given.

    ``quotes[i]`` is the supporting quote given for ``citations[i]`` (None: none given) and
    ``quotes_found[i]`` whether it was found on that page's text (None: no quote to check);
    both are empty when the loop did not check quotes. ``closest_passages``: on a refusal, the pages
    and lines that came closest to answering, as the backend gave them (checked to exist; never
    scored: the answer is still empty). ``failure`` says why the question has no
    answer that can be scored (the model failed, no answer could be read, a plugin raised); such a
    step is never a refusal that scores 0: the row carries it as its ``error``."""

    iteration: int
    answer: tuple[str, ...]
    citations: tuple[PageRef, ...]
    raw_citations: tuple[dict[str, Any], ...] = ()
    flags: tuple[str, ...] = ()
    refusal: bool = False
    quotes: tuple[str | None, ...] = ()
    quotes_found: tuple[bool | None, ...] = ()
    failure: str | None = None
    closest_passages: tuple[Passage, ...] = ()
    checks: tuple[ItemCheck, ...] = ()  # each answer item on the pages (madqa.verification); empty: none made
    type: Literal["answer"] = "answer"

    @property
    def verified(self) -> bool | None:
        """Whether every answer item is written on a page the agent saw (None: no answer, or not checked)."""
        return all(c.verified for c in self.checks) if self.checks and self.answer else None

    def quote_of(self, n: int) -> str | None:
        """The supporting quote of the ``n``-th citation, or None."""
        return self.quotes[n] if n < len(self.quotes) else None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["answer"] = list(self.answer)
        d["citations"] = [asdict(c) for c in self.citations]
        d["raw_citations"] = list(self.raw_citations)
        d["flags"] = list(self.flags)
        d["quotes"] = list(self.quotes)
        d["quotes_found"] = list(self.quotes_found)
        d["closest_passages"] = [p.to_dict() for p in self.closest_passages]
        d["checks"] = [c.to_dict() for c in self.checks]
        return d


@dataclass(frozen=True)
class ErrorStep:
    """Something failed and was turned into an observation (``where``: backend, retriever, ...)."""

    iteration: int
    where: str
    message: str
    type: Literal["error"] = "error"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ToolStep:
    """One call of a tool other than a search (which is a SearchStep): a navigation tool, a plugin's.

    ``pages``: the pages its observation displayed; ``new_pages``: those of them the agent had not seen
    before (reached by navigation, not by search). ``by``: ``model``, or ``person`` when Steer changed it."""

    iteration: int
    name: str
    arguments: dict[str, Any]
    text: str
    pages: tuple[PageRef, ...] = ()
    new_pages: tuple[PageRef, ...] = ()
    error: str | None = None
    elapsed_s: float = 0.0
    by: str = "model"
    type: Literal["tool"] = "tool"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["pages"] = [asdict(p) for p in self.pages]
        d["new_pages"] = [asdict(p) for p in self.new_pages]
        return d


@dataclass(frozen=True)
class SteerStep:
    """A person's answer to the model's proposed tool calls (Steer, ``madqa.ui.steer``): what was proposed,
    what ran instead. ``action``: ``approve``, ``edit`` (same tools, other arguments), ``replace`` (other
    tools) or ``answer`` (the person answered: ``calls`` is one submit_answer)."""

    iteration: int
    action: str
    proposed: tuple[ToolCall, ...]
    calls: tuple[ToolCall, ...]
    type: Literal["steer"] = "steer"

    def to_dict(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "action": self.action, "type": self.type,
                "proposed": [asdict(c) for c in self.proposed], "calls": [asdict(c) for c in self.calls]}


@dataclass(frozen=True)
class ProposedCalls:
    """The model's next tool calls, before they run: yielded only by ``Agent.run(steer=True)``. The face
    answers with ``generator.send(SteerReply(...))``; ``next()`` (None) approves. Not part of a trace."""

    iteration: int
    calls: tuple[ToolCall, ...]
    text: str | None = None
    type: Literal["proposed"] = "proposed"


@dataclass(frozen=True)
class SteerReply:
    """What the person beside the agent decided: approve the proposed calls (both fields None), run
    ``calls`` instead, or ``answer`` (``{"answer": [...], "citations": [{"file", "page"}]}``) now."""

    calls: tuple[ToolCall, ...] | None = None
    answer: dict[str, Any] | None = None


Step = SearchStep | ModelStep | AnswerStep | ErrorStep | ToolStep | SteerStep
