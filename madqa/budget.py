"""Budgets on model use: tokens, cost (litellm's cost map, as each call reports it) and model calls.

A ``Budget`` is charged after every model call and says when it is spent; the loop then forces
the answer step (or, when it is spent before a question starts, makes no call) and the answer's
flags say why. The answer is reserved: ``max_calls=N`` allows N-1 searching calls and one answer.
A call whose server sent no usage is charged an estimate (``madqa.usage``: characters / 4, images by
the provider's tile rule), and a call litellm cannot price is charged at
``FALLBACK_USD_PER_MTOK`` against a cost limit; both are flagged (``estimated_calls``), never
silently left out. A query strategy's own model call (``llm-rewrite``) is charged like the loop's.

The one mechanism for model spending: one budget per question comes from the config
(``[options.budget]``, ``--set budget.max_calls=5``); a caller hands ``Agent.run(budget=...)`` the
budgets that outlive the question (the CLI's run, a web visitor's day on the server's keys,
``madqa.ui.limits``), and all are charged. A spent budget forces the answer; nothing raises
mid-question. Thread-safe: a session budget may be charged by several questions at once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from madqa.errors import SettingsError
from madqa.options import read_options
from madqa.types import Usage

DEFAULTS: dict[str, Any] = {"max_tokens": None, "max_cost_usd": None, "max_calls": None}
# What a call litellm cannot price is charged against a cost limit, per million tokens (input and
# output alike): the output price of a frontier model (Claude Sonnet 4.5, GPT-4.1: $8-15), so an
# estimate errs on the side of stopping early.
FALLBACK_USD_PER_MTOK = 15.0


@dataclass
class Budget:
    """Limits (None: none) and what has been spent against them; ``name`` is used in the reason."""

    max_tokens: int | None = None
    max_cost_usd: float | None = None
    max_calls: int | None = None
    name: str = "question"
    tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    unpriced_calls: int = 0  # calls whose cost litellm's map could not tell (charged at the fallback price)
    estimated_calls: int = 0  # calls whose tokens or cost were estimated, not reported
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        for key in ("max_tokens", "max_calls"):
            value = getattr(self, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise SettingsError(f"budget {key} must be a whole number of at least 1, not {value!r}")
        cost = self.max_cost_usd
        if cost is not None and (isinstance(cost, bool) or not isinstance(cost, (int, float)) or cost <= 0):
            raise SettingsError(f"budget max_cost_usd must be a positive number of dollars, not {cost!r}")

    @classmethod
    def from_options(cls, options: dict[str, Any] | None, name: str = "question") -> Budget:
        """From a config's ``budget`` table; unknown keys raise with the known ones listed."""
        opts = read_options(options, DEFAULTS, "budget")
        if isinstance(opts["max_cost_usd"], int) and not isinstance(opts["max_cost_usd"], bool):
            opts["max_cost_usd"] = float(opts["max_cost_usd"])
        return cls(name=name, **opts)

    @property
    def limited(self) -> bool:
        return any(v is not None for v in (self.max_tokens, self.max_cost_usd, self.max_calls))

    @property
    def counts_tokens(self) -> bool:
        """Whether tokens matter to this budget (a token or a cost limit)."""
        return self.max_tokens is not None or self.max_cost_usd is not None

    def charge(self, usage: Usage | None, cost_usd: float | None = None, calls: int = 1,
               estimated: bool = False) -> None:
        """Count one model call's tokens and cost (None: litellm could not price it; charged at
        ``FALLBACK_USD_PER_MTOK`` when a cost limit is set). ``estimated``: the tokens are an estimate."""
        usage = usage or Usage()
        with self._lock:
            self.calls += calls
            self.tokens += usage.total_tokens
            if cost_usd is None:
                self.unpriced_calls += calls
                if self.max_cost_usd is not None:
                    self.cost_usd += usage.total_tokens * FALLBACK_USD_PER_MTOK / 1e6
                    estimated = True
            else:
                self.cost_usd += float(cost_usd)
            if estimated:
                self.estimated_calls += calls

    @property
    def answer_due(self) -> str | None:
        """Why the next call must be the answer: it is the last one ``max_calls`` allows; else None."""
        with self._lock:
            if self.max_calls is not None and self.calls + 1 >= self.max_calls:
                return f"{self.name} budget of {self.max_calls} model calls reached"
        return None

    @property
    def exhausted(self) -> str | None:
        """Why the budget is spent ("question budget of 3 model calls reached"), or None."""
        with self._lock:
            guess = f", {self.estimated_calls} call(s) estimated" if self.estimated_calls else ""
            if self.max_calls is not None and self.calls >= self.max_calls:
                return f"{self.name} budget of {self.max_calls} model calls reached"
            if self.max_tokens is not None and self.tokens >= self.max_tokens:
                return f"{self.name} budget of {self.max_tokens:,} tokens reached ({self.tokens:,} used{guess})"
            if self.max_cost_usd is not None and self.cost_usd >= self.max_cost_usd - 1e-12:  # float sums
                return f"{self.name} budget of ${self.max_cost_usd:g} reached (${self.cost_usd:.4f} spent{guess})"
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens, "max_cost_usd": self.max_cost_usd, "max_calls": self.max_calls,
                "tokens": self.tokens, "cost_usd": round(self.cost_usd, 8), "calls": self.calls,
                "unpriced_calls": self.unpriced_calls, "estimated_calls": self.estimated_calls}
