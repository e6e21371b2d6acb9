"""Query strategy ``llm-rewrite``: a (cheaper) chat model reformulates a stale query.

It sees the question, the searches so far (as run, and whether each found new pages) and the
query at hand, and answers with one new query. The call goes through the ``litellm`` backend's
own client (``madqa_plugins/litellm/litellm_backend.py``: key handling, retries, error classification, mocks),
so it works beside any backend, the offline one included. On a provider error or an empty or
unusable reply the query is kept as written and the note says why (the kind of error only).
Tokens and cost of the rewrite go in the note and in the run's usage and cost (the search step's
``usage`` / ``cost_usd``).

Options (``[options.query_strategy]`` or ``--set query_strategy.KEY=VALUE``):

- ``model`` (``openai/gpt-4.1-nano``): any litellm model string; ``api_base`` for an
  OpenAI-compatible server.
- ``api_key_env``: the name of an environment variable holding the key. Without it litellm reads
  the provider's usual variable (``OPENAI_API_KEY``...). A key given for the run (a web visitor's
  own, ``--api-key``) takes over when it is for this model's provider or comes with an ``api_base``
  (the rewrite then goes there): see ``use_run_key``. There is deliberately no ``api_key``
  option: part options are written into config names and saved configs, so a key given there
  would end up in prediction files.
- ``when`` (``stale``): ``stale`` rewrites only a query at or above ``threshold`` (0.7, the
  reports' lexical similarity) to an earlier one, or after a search that showed no new page;
  ``always`` rewrites every query, the first included.
- ``temperature`` (0.0), ``timeout`` (20 s), ``max_attempts`` (2).
- ``mock_response`` / ``mock_responses``: litellm offline mocks, as for the litellm backend.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

import madqa
from madqa_plugins.strategies.query_history import closest_query, last_search_stale, norm, past_queries

OPTIONS: tuple[madqa.Option, ...] = (
    madqa.Option("model", str, "openai/gpt-4.1-nano", "the litellm model that rewrites"),
    madqa.Option("api_base", str, None, "its server URL"),
    madqa.Option("api_key_env", str, None, "environment variable holding its key"),
    madqa.Option("when", str, "stale", "stale: only a query repeating itself or finding nothing new; always",
                 choices=("stale", "always"), visitor_safe=True),
    madqa.Option("threshold", float, 0.7, "a query this similar to an earlier one counts as repeating", low=0, high=1,
                 visitor_safe=True),
    madqa.Option("temperature", float, 0.0, "sampling temperature", low=0),
    madqa.Option("timeout", float, 20.0, "seconds per attempt", low=0, above=True),
    madqa.Option("max_attempts", int, 2, "attempts per rewrite", low=1),
    madqa.Option("mock_response", object, None, "litellm's offline mock (tests)"),
    madqa.Option("mock_responses", list, None, "litellm's offline mocks, one per call (tests)"),
)
DEFAULTS: dict[str, Any] = {o.name: o.default for o in OPTIONS}
WHO = "query strategy llm-rewrite"
MAX_QUERY_CHARS = 300
PROMPT = """You rewrite search queries for a keyword (BM25) search engine over the pages of a collection of PDF documents.
The query language: words (all must match), "quoted phrases", OR, NOT, and * wildcards.
A query that repeats earlier ones finds the same pages again. Write one clearly different query that is likely to find
the pages answering the question: use synonyms, abbreviations or their expansions, other phrasings, or fewer terms.
Reply with the query only, on one line, without explanations."""


def _describe_history(state: Any) -> str:
    queries = list(getattr(state, "queries", []) or [])
    counts = list(getattr(state, "new_page_counts", []) or [])
    if not queries:
        return "none yet"
    lines = []
    for n, query in enumerate(queries):
        new = counts[n] if n < len(counts) else None
        found = "?" if new is None else ("no new page" if new == 0 else f"{new} new pages")
        lines.append(f"{n + 1}. {query} -> {found}")
    return "\n".join(lines)


def parse_query(text: str | None) -> str | None:
    """The query in a model's reply: the first non-empty line, or a ``{"query"|"search": ...}`` object."""
    if not text or not text.strip():
        return None
    value = madqa.find_json_object(text)
    if isinstance(value, dict):
        found = value.get("query", value.get("search"))
        return found.strip()[:MAX_QUERY_CHARS] if isinstance(found, str) and found.strip() else None
    line = next((ln.strip() for ln in text.strip().splitlines() if ln.strip() and not ln.strip().startswith("```")), "")
    for prefix in ("query:", "search:", "new query:", "rewritten query:"):
        if line.lower().startswith(prefix):
            line = line[len(prefix):].strip()
    line = line.strip("`").strip()
    if len(line) > 1 and line[0] == line[-1] == "'" or (line.count('"') == 2 and line[0] == line[-1] == '"'):
        line = line[1:-1].strip()
    return line[:MAX_QUERY_CHARS] or None


class LLMRewrite:
    """Asks a chat model for a reformulation; see the module docstring."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        if options and "api_key" in options:
            raise madqa.PluginError(f"{WHO}: give the key's environment variable as api_key_env, not the key "
                                    "itself (part options are saved with the config)")
        opts = madqa.read_options(options, OPTIONS, WHO)
        self.when = opts["when"]
        self.threshold = float(opts["threshold"])
        backend_options: dict[str, Any] = {"native_tools": False, "vision": False, "temperature": opts["temperature"],
                                           "timeout": opts["timeout"], "max_attempts": int(opts["max_attempts"])}
        if opts["api_base"]:
            backend_options["api_base"] = opts["api_base"]
        if opts["api_key_env"]:
            key = os.environ.get(str(opts["api_key_env"]))
            if not key:
                raise madqa.PluginError(f"{WHO}: environment variable {opts['api_key_env']} is not set")
            backend_options["api_key"] = key
        for name in ("mock_response", "mock_responses"):
            if opts[name] is not None:
                backend_options[name] = opts[name]
        self._model, self._backend_options = str(opts["model"]), backend_options
        self.client = self._client(backend_options)
        self.model = self.client.model

    def _client(self, backend_options: dict[str, Any]) -> Any:
        # imports litellm: only when this strategy is used
        from madqa_plugins.litellm.litellm_backend import LiteLLMBackend

        quiet = logging.getLogger("madqa.litellm")
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # "no images, no tools" is what a rewriter wants, not a warning
        try:
            return LiteLLMBackend(self._model, backend_options)
        finally:
            quiet.setLevel(level)

    def use_run_key(self, api_key: str, api_base: str | None, provider: str | None) -> bool:
        """Rewrite with the key given for this run (a web visitor's own, the CLI's ``--api-key``), sent
        where that key goes: the run's ``api_base`` if it has one (already checked by the caller), else
        this model's provider when it is the run's ``provider``. Returns whether the key is used; when
        not (another provider), the strategy keeps the key it was configured with."""
        if not api_key or (not api_base and provider != self.client.provider):
            return False
        options = {**self._backend_options, "api_key": api_key}
        if api_base:
            options["api_base"] = api_base
        self.client = self._client(options)
        return True

    def __repr__(self) -> str:
        return f"LLMRewrite(model={self.model!r}, when={self.when!r})"

    def _reason(self, query: str, state: Any) -> str | None:
        """Why this query should be rewritten, or None to leave it alone."""
        if self.when == "always":
            return "every query is rewritten (when=always)"
        past = past_queries(state)
        if not past:
            return None
        closest, score = closest_query(query, past)
        if score >= self.threshold:
            return f"too close to {closest!r} ({score:.2f})"
        return "the previous search showed no new page" if last_search_stale(state) else None

    def rewrite(self, query: str, state: Any) -> tuple[Any, ...]:
        why = self._reason(query, state)
        if why is None:
            return query, None
        question = getattr(state, "question", "") or ""
        messages = [{"role": "system", "content": PROMPT},
                    {"role": "user", "content": f"Question: {question}\n\nEarlier searches:\n{_describe_history(state)}"
                                                f"\n\nQuery to rewrite: {query}"}]
        try:
            decision = self.client.decide(messages, [], False)
        except madqa.BackendError as exc:  # its message names the provider and the kind of error, never the key
            return query, f"{why}; the rewrite model failed ({exc}); kept the query"
        except Exception as exc:  # anything else: the class name only (its text may echo a request)
            return query, f"{why}; the rewrite model failed ({type(exc).__name__}); kept the query"
        text = decision.text
        if not text:  # the JSON-in-text protocol turns {"search": ...} into a call
            text = next((json.dumps(c.arguments) for c in decision.tool_calls), None)
        rewritten = parse_query(text)
        cost = f", ${decision.cost_usd:.6f}" if decision.cost_usd else ""
        spent = f"{self.model}, {decision.usage.prompt_tokens}+{decision.usage.completion_tokens} tokens{cost}"
        issued = {norm(q) for q in getattr(state, "queries", []) or []}
        if rewritten is None:
            return query, f"{why}; the rewrite model gave no query ({spent}); kept the query", decision
        if norm(rewritten) in issued | {norm(query)}:
            return query, f"{why}; the rewrite model repeated a query already run ({spent}); kept the query", decision
        return rewritten, f"{why}: rewritten by {spent}", decision


@madqa.hookimpl(trylast=True)
def register_query_strategies(register: madqa.Register) -> None:
    register("llm-rewrite", lambda host, options: LLMRewrite(options),
             "a cheaper chat model (litellm) reformulates a query that repeats itself or found nothing new",
             requires=("litellm",), options=OPTIONS, takes_host=True)
