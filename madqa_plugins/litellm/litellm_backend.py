"""Backend ``litellm``: any chat model litellm can reach, by its litellm model string.

``openai/gpt-4o-mini``, ``anthropic/claude-sonnet-4-5``, ``gemini/gemini-2.5-flash``,
``ollama_chat/qwen2.5vl``, or any OpenAI-compatible server (vLLM, llama.cpp) as ``openai/<name>``
with ``api_base``. Messages go to ``litellm.completion`` in OpenAI chat form as the agent built
them (page images are OpenAI ``image_url`` parts with base64 data URLs; litellm translates them
for each provider).

Options (all optional), set like every part's: ``[options.backend]`` in a config file,
``--set backend.KEY=VALUE`` on the command line, ``backend.KEY=VALUE`` in the web app's options
box. An unknown key is refused with the list of known ones (``read_backend_options``).

- ``api_base``: passed to litellm (may go in a config). ``api_key_env``: the name of an
  environment variable holding the key; without it litellm reads the provider's variable
  (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``...). There is no ``api_key``
  option (a config's options are written into prediction rows); the program may still hand one
  over (the web app's API key field): it is never logged, never put in a decision, an error
  message or ``repr``. For ``openai/<name>`` with an ``api_base`` and no key anywhere, a
  placeholder key is sent (litellm's OpenAI client needs one; vLLM and llama.cpp accept any
  unless started with ``--api-key``).
- ``temperature``, ``timeout`` (seconds per attempt, default 120), ``max_tokens``;
  ``completion_kwargs``: a dict of further ``litellm.completion`` arguments (e.g.
  ``{"reasoning_effort": "low"}``); ``drop_params`` (default True: litellm drops parameters the
  model does not take, e.g. temperature for o-series).
- ``native_tools``, ``vision`` (true / false / auto): override what is known (madqa_plugins/litellm/litellm_protocol.py):
  what this process learned from the server, an Ollama server's ``/api/show`` capabilities, litellm's
  model map. A model without native tool calling gets the JSON-in-text protocol (``supports_tools``
  is False); a model without vision gets each page's text instead of its image (the agent's context
  policy does that). Models nothing is known about (a custom vLLM model) are assumed to support
  both until the server refuses: a refusal of ``tools`` ("does not support tools", vLLM's '"auto"
  tool choice requires --enable-auto-tool-choice', llama.cpp's "tools param requires --jinja flag")
  retries the same turn once in the JSON-in-text protocol and is remembered per (api_base, model)
  for the life of the process; a refusal of images sets ``supports_vision`` False and raises
  ``madqa.ServerLimitError("vision")`` for the loop to resend the turn as text.
- ``force_tool_choice``: how the last step forces ``submit_answer``: ``"named"`` (default, the
  function by name), ``"required"``, or ``"none"`` (send no tool_choice). A server that refuses a forced
  tool_choice (a 400 naming ``tool_choice``: vLLM / llama.cpp "Only 'auto' and 'none' tool_choice are
  supported", Anthropic with extended thinking) gets the same turn without it, learned per (api_base, model)
  and said once at WARNING.
- ``max_attempts`` (default 3; or ``max_retries`` = attempts - 1), ``retry_base_delay`` (1 s),
  ``retry_max_delay`` (30 s), ``overload_delay`` (5 s: the base delay after an overload, Anthropic's
  529 or a 503), ``sleep`` (a callable, for tests): retries with capped exponential backoff and
  jitter on rate limits, timeouts, connection errors, 5xx and reply bodies that are not JSON;
  never on authentication errors or bad requests; ``Retry-After`` is honoured (up to
  ``retry_max_delay``), and so is Gemini's ``RetryInfo.retryDelay`` in a 429's body. Errors name what
  fixes them (madqa_plugins/litellm/litellm_hints.py: the key's variable and ``api_key_env``, ``timeout``). The last failure raises ``madqa.BackendError``
  naming the provider, the kind of error and the provider's own message (keys redacted; none
  for authentication errors, whose text echoes the key).
- ``max_tokens_ceiling`` (16384): a reply cut off at max_tokens (``finish_reason`` length) is asked
  again once with twice ``max_tokens`` (4096 when it was not set), at most this many; still cut, the
  decision says ``length`` and the loop fails the question naming ``backend.max_tokens``.
- Server limits (too many images, no image input, an image too large, a prompt too long; the
  wordings in madqa_plugins/litellm/litellm_limits.py) raise ``madqa.ServerLimitError`` for the loop to send less.
- A reply without token counts gets an estimate (characters / 4, images by the provider's tile
  rule) with ``ModelDecision.estimated`` set.
- Offline mocks through litellm's own client: ``mock_response`` / ``mock_tool_calls`` are
  forwarded on every call; ``mock_responses`` is a list used one item per call: a string (the
  reply text), an exception (raised by litellm, as a provider error would be), a dict
  ``{"tool_calls": [{"name", "arguments", "id"?}], "content"?: str}``, or a dict of raw
  ``mock_response`` / ``mock_tool_calls`` arguments.
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import madqa
from madqa_plugins.litellm import litellm_hints as hints
from madqa_plugins.litellm import litellm_protocol as protocol
from madqa_plugins.litellm.litellm_errors import Failure, classify
from madqa_plugins.litellm.litellm_import import import_litellm
from madqa_plugins.litellm.litellm_messages import as_plain_text, without_images
from madqa_plugins.litellm.litellm_options import (
    DEFAULTS,
    LENGTH_RETRY_TOKENS,
    OPTIONS,
    PLACEHOLDER_KEY,
    Secret,
    attempts,
    flag,
    mock_kwargs,
    read_backend_options,
)
from madqa_plugins.litellm.litellm_replies import read_reply

log = logging.getLogger("madqa.litellm")
__all__ = ["DEFAULTS", "LiteLLMBackend", "import_litellm", "read_backend_options"]


class _ToolsRefused(Exception):
    """The server refused the ``tools`` parameter (internal: decide() retries in the text protocol)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.detail or failure.kind)
        self.failure = failure


class _ChoiceRefused(_ToolsRefused):
    """The server refused the forced ``tool_choice`` (internal: decide() sends the turn again without it)."""


class LiteLLMBackend:
    """Decides through ``litellm.completion``; see the module docstring for the options."""

    reads_conversation = True  # a follow-up's earlier turns go to the model as text (madqa.conversation)

    def __init__(self, model: str, options: dict[str, Any] | None = None) -> None:
        options = read_backend_options(options)
        if not isinstance(model, str) or not model.strip():
            raise madqa.SettingsError("the litellm backend needs a model, e.g. openai/gpt-4o-mini")
        self._litellm = import_litellm()
        self.model = model.strip()
        key = options.get("api_key")
        self._key_source = "given" if key else "provider"  # where a rejected key came from (litellm_hints.py)
        self._key_env: str | None = options.get("api_key_env") or None
        if key is None and options.get("api_key_env"):
            self._key_source = "env"
            key = os.environ.get(str(options["api_key_env"])) or None
            if key is None:
                raise madqa.SettingsError(f"litellm option api_key_env names {options['api_key_env']!r}, "
                                          "which is not set in the environment")
        self._api_key = Secret(key)
        self.api_base: str | None = options.get("api_base") or None
        self.provider = self._provider()
        self.who = f"the {self.provider} server at api_base" if self.api_base else self.provider  # in errors
        # An OpenAI-compatible server (vLLM, llama.cpp) usually takes any key, but litellm's OpenAI
        # client refuses to start without one: give it a placeholder rather than fail.
        self.placeholder_key = (not self._api_key and bool(self.api_base) and self.provider == "openai"
                                and not os.environ.get("OPENAI_API_KEY"))
        if self.placeholder_key:
            self._api_key = Secret(PLACEHOLDER_KEY)
            self._key_source = "placeholder"
        self.temperature = options.get("temperature")
        # types, ranges and choices were checked against OPTIONS (litellm_options.py) by read_backend_options
        self.timeout = float(options["timeout"])
        self.max_tokens: int | None = options["max_tokens"]
        self.max_tokens_ceiling: int = options["max_tokens_ceiling"]
        self.drop_params = bool(options["drop_params"])
        extra = options["completion_kwargs"] or {}
        if {"api_key", "messages", "model", "tools", "tool_choice"} & set(extra):
            raise madqa.SettingsError("litellm completion_kwargs cannot set api_key, model, messages, tools "
                                      "or tool_choice; use the backend's own options")
        self._extra = dict(extra)
        self.force_tool_choice: str = options["force_tool_choice"]
        self.max_attempts = attempts(options)
        self.retry_base_delay = float(options["retry_base_delay"])
        self.retry_max_delay = float(options["retry_max_delay"])
        self.overload_delay = float(options["overload_delay"])
        self._sleep: Callable[[float], Any] = options.get("sleep") or time.sleep
        self._rng = random.Random()
        self._mock_each = {k: options[k] for k in ("mock_response", "mock_tool_calls") if options.get(k) is not None}
        self._mock_queue: list[Any] | None = (list(options["mock_responses"])
                                              if options.get("mock_responses") is not None else None)
        self._calls = 0
        self._options = {"tools": flag(options, "native_tools"), "vision": flag(options, "vision")}
        self._caps = self._capabilities(self._options["tools"], self._options["vision"])
        guessed = self._caps["protocol_source"] in ("assumed", "learned") or not self.supports_tools
        level = logging.WARNING if self._caps["missing"] or guessed else logging.INFO
        log.log(level, "%s", self._caps["message"])

    @property
    def supports_tools(self) -> bool:
        """Native tool calls, as now known: False once a server refused them (learned during a run);
        the loop asks again before every model call (``madqa.backend_capabilities``)."""
        return bool(self._caps["native_tools"])

    @property
    def supports_vision(self) -> bool:
        """Page images, as now known: False once a server refused them (learned during a run)."""
        return bool(self._caps["vision"])

    def __repr__(self) -> str:
        base = ", api_base=<set>" if self.api_base else ""
        return (f"LiteLLMBackend(model={self.model!r}, provider={self.provider!r}{base}, "
                f"native_tools={self.supports_tools}, vision={self.supports_vision})")

    # --- capabilities ------------------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """What the model can do, where that came from, and a message for people.

        ``known``: litellm's model map has the model; ``litellm_function_calling`` and
        ``litellm_vision``: what litellm says (None when it does not know the model);
        ``server_capabilities``: an Ollama server's /api/show list (None when not asked or not said);
        ``native_tools`` and ``vision``: what this backend does now; ``protocol`` ("native" or
        "text") with ``protocol_source`` (option, learned, server, model map, assumed) and
        ``protocol_reason``, and ``vision_source`` / ``vision_reason`` likewise;
        ``missing``: among "tools", "vision", "api_key"; ``missing_keys``: the environment
        variables litellm looks for when no key was found (names only); ``message``: one line.
        """
        return {k: list(v) if isinstance(v, list) else v for k, v in self._caps.items()}

    def _provider(self) -> str:
        try:
            return str(self._litellm.get_llm_provider(model=self.model, api_base=self.api_base)[1])
        except Exception:
            raise madqa.SettingsError(
                f"litellm cannot tell the provider of model {self.model!r}: write it as provider/model, "
                "e.g. openai/gpt-4o-mini, anthropic/claude-sonnet-4-5, gemini/gemini-2.5-flash, "
                "ollama_chat/llama3.1, or openai/<name> with api_base for an OpenAI-compatible server"
            ) from None

    def _known(self) -> bool:
        """Whether litellm's model map has an entry for the model (not just a provider default)."""
        try:
            info = self._litellm.get_model_info(self.model)
        except Exception:
            return False
        return info.get("key") in self._litellm.model_cost

    def _supports(self, check: str) -> bool | None:
        try:
            return bool(getattr(self._litellm, check)(self.model))
        except Exception:
            return None

    def _capabilities(self, native_tools: bool | None, vision: bool | None) -> dict[str, Any]:
        known = self._known()
        said = {name: (self._supports(f"supports_{name}") if known else None)
                for name in ("function_calling", "vision")}
        server_caps = None
        if self.provider in protocol.OLLAMA_PROVIDERS and (native_tools is None or vision is None) \
                and not self._mocked():
            server_caps = protocol.ollama_capabilities(self.api_base, self.model)
        tools = protocol.choose("tools", native_tools, self.api_base, self.model, server_caps,
                                said["function_calling"])
        sees = protocol.choose("vision", vision, self.api_base, self.model, server_caps, said["vision"])
        missing: list[str] = []
        lines: list[str] = []
        if tools.source == "assumed" or sees.source == "assumed":
            lines.append(f"litellm does not know model {self.model}: assuming it accepts images and tool "
                         "calls until the server refuses them (or set the options vision / native_tools)")
        if not sees.value:
            missing.append("vision")
            lines.append(f"model {self.model} does not accept images ({sees.reason}): it gets each page's text "
                         "instead of its image")
        if not tools.value:
            missing.append("tools")
            lines.append(f"model {self.model} has no native tool calling ({tools.reason}): it gets a JSON-in-text "
                         "protocol instead")
        if self.placeholder_key:
            lines.append("no API key given for the server at api_base: sending a placeholder key (set "
                         "OPENAI_API_KEY, or --set backend.api_key_env=NAME, if the server needs a real one)")
        missing_keys = [] if self._mocked() or self._api_key else self._missing_keys()
        if missing_keys:
            missing.append("api_key")
            lines.append(f"no API key for {self.provider}: {self._key_hint(missing_keys)}")
        if not lines:
            lines.append(f"model {self.model} ({self.provider}): accepts images and native tool calls "
                         f"({tools.reason})")
        return {"model": self.model, "provider": self.provider, "known": known,
                "litellm_function_calling": said["function_calling"], "litellm_vision": said["vision"],
                "server_capabilities": server_caps, "native_tools": tools.value, "vision": sees.value,
                **protocol.describe(self.model, tools, sees), "missing": missing,
                "missing_keys": missing_keys, "message": "; ".join(lines)}

    def _adopt_learned(self) -> None:
        """Take up what any backend of this (api_base, model) learned since (another thread's refusal);
        an explicit option always wins."""
        for capability, (value, reason) in protocol.learned(self.api_base, self.model).items():
            if capability not in ("tools", "vision"):  # (tool_choice: read by _turn)
                continue
            now = self.supports_tools if capability == "tools" else self.supports_vision
            if self._options.get(capability) is None and now != value:
                self._learn(capability, value, reason, here=False)

    def _learn(self, capability: str, value: bool, reason: str, here: bool) -> None:
        """Use what the server said about ``capability`` ("tools" or "vision") from now on; ``here``:
        this backend saw the refusal (it is remembered for the process and said at WARNING)."""
        if here:
            protocol.learn(self.api_base, self.model, capability, value, reason)
        said = f"the server said: {reason}"
        if capability == "tools":
            self._caps.update(native_tools=value, protocol="native" if value else "text", protocol_source="learned",
                              protocol_reason=said)
            line = f"model {self.model} now gets the JSON-in-text protocol ({said})"
        else:
            self._caps.update(vision=value, vision_source="learned", vision_reason=said)
            line = f"model {self.model} now gets each page's text instead of its image ({said})"
        if not value and capability not in self._caps["missing"]:
            self._caps["missing"] = [*self._caps["missing"], capability]
        self._caps["message"] = f"{self._caps['message']}; {line}"
        if here and capability == "tools":
            log.warning("%s refused tool calls (%s): model %s now gets the JSON-in-text protocol, for the rest "
                        "of this process (set backend.native_tools=false to skip the first refusal)",
                        self.who, reason, self.model)
        elif here:
            log.warning("%s refused page images (%s): model %s now gets each page's text, for the rest of this "
                        "process (set backend.vision=false to skip the first refusal)", self.who, reason, self.model)

    def _missing_keys(self) -> list[str]:
        try:
            found = self._litellm.validate_environment(model=self.model, api_base=self.api_base)
        except Exception:
            return []
        return [k for k in found.get("missing_keys") or [] if "KEY" in k.upper()]

    def _key_hint(self, missing_keys: list[str]) -> str:
        """How to give a key: the variable litellm reads, another one named by backend.api_key_env,
        or the web app's API key field (keys are never taken from the command line or a config)."""
        variable = " or ".join(missing_keys) if missing_keys else "the provider's API key variable"
        return (f"set {variable} in the environment, or name another variable with --set backend.api_key_env=NAME "
                "(in the web app: paste a key in the API key field)")

    def _mocked(self) -> bool:
        return bool(self._mock_each) or self._mock_queue is not None

    # --- one decision ------------------------------------------------------------------------

    def decide(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
               force_answer: bool) -> madqa.ModelDecision:
        self._calls += 1
        self._adopt_learned()
        notes: list[str] = []
        try:
            try:
                request, response = self._turn(messages, tools, force_answer, self.max_tokens)
            except _ChoiceRefused as refused:  # answer offered alone, not forced; learned per (api_base, model)
                notes.append(self._choice_refused(refused.failure))
                request, response = self._turn(messages, tools, force_answer, self.max_tokens)
        except _ToolsRefused as refused:  # the same turn again, once, in the JSON-in-text protocol
            reason = refused.failure.detail or refused.failure.kind
            self._learn("tools", False, reason, here=True)
            notes.append(f"the server refused tool calls ({reason}); this turn was sent again in the JSON-in-text "
                         "protocol")
            try:
                request, response = self._turn(messages, tools, force_answer, self.max_tokens)
            except _ToolsRefused as again:
                raise madqa.BackendError(f"{again.failure.provider} {again.failure.kind}: {again}") from None
        decision = self._decision(request, response, force_answer, notes)
        bigger = self._bigger_max_tokens()
        if decision.finish_reason == "length" and bigger is not None:
            cut_usage, cut_cost, estimated = decision.usage, decision.cost_usd, decision.estimated
            cut = f"the reply was cut off at max_tokens={self.max_tokens or 'the server default'}"
            notes.append(f"{cut}; asked again with max_tokens={bigger}")
            try:
                request, response = self._turn(messages, tools, force_answer, bigger)
            except madqa.BackendError as exc:  # e.g. a server whose context cannot hold the larger reply
                return replace(decision, raw={**decision.raw, "notes": [
                    *(decision.raw.get("notes") or []), f"{cut}; asking again with max_tokens={bigger} failed: {exc}"]})
            longer = self._decision(request, response, force_answer, notes)
            cost = None if cut_cost is None and longer.cost_usd is None else (cut_cost or 0.0) + (longer.cost_usd or 0.0)
            decision = madqa.ModelDecision(longer.text, longer.tool_calls, longer.answer, cut_usage + longer.usage, cost,
                                           longer.raw, longer.finish_reason, estimated or longer.estimated,
                                           longer.replay)
        return decision

    def _choice_refused(self, failure: Failure) -> str:
        """Learn that the server takes no forced tool_choice (vLLM / llama.cpp "Only 'auto' and 'none'
        tool_choice are supported", Anthropic with extended thinking): said once at WARNING; the note."""
        reason = failure.detail or failure.kind
        protocol.learn(self.api_base, self.model, "tool_choice", False, reason)
        log.warning("%s refused a forced tool_choice (%s): the answer step of model %s now offers submit_answer "
                    "alone without forcing it, for the rest of this process (set backend.force_tool_choice=none "
                    "to skip the first refusal)", self.who, reason, self.model)
        return (f"the server refused a forced tool choice ({reason}); submit_answer is offered alone without "
                "forcing it, for the rest of this run (backend.force_tool_choice=none says so up front)")

    def _forces(self) -> bool:
        """Whether the answer step names its tool in tool_choice: not after the server refused it."""
        return self.force_tool_choice != "none" and "tool_choice" not in protocol.learned(self.api_base, self.model)

    def _bigger_max_tokens(self) -> int | None:
        """The max_tokens of the one retry after a reply cut off at max_tokens; None: no retry."""
        ceiling = self.max_tokens_ceiling or 0
        wanted = 2 * self.max_tokens if self.max_tokens else LENGTH_RETRY_TOKENS
        bigger = min(wanted, ceiling)
        return bigger if bigger > (self.max_tokens or 0) else None

    def _turn(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], force_answer: bool,
              max_tokens: int | None) -> tuple[dict[str, Any], Any]:
        """(the request, litellm's response) of one turn in the protocol in use now."""
        request: dict[str, Any] = {"model": self.model, "num_retries": 0, "drop_params": self.drop_params}
        if self.supports_tools:
            request["messages"] = messages if self.supports_vision else without_images(messages)
            request["tools"] = tools
            if force_answer and tools and self._forces():
                names = [t.get("function", {}).get("name") for t in tools]
                forced = "submit_answer" if "submit_answer" in names else names[-1]
                request["tool_choice"] = ({"type": "function", "function": {"name": forced}}
                                          if self.force_tool_choice == "named" else "required")
        else:
            request["messages"] = as_plain_text(messages, force_answer, self.supports_vision, bool(tools), tools)
        for name, value in (("temperature", self.temperature), ("timeout", self.timeout),
                            ("max_tokens", max_tokens), ("api_base", self.api_base)):
            if value is not None:
                request[name] = value
        request.update(self._extra)
        return request, self._complete(request)

    def _complete(self, request: dict[str, Any]) -> Any:
        failure: Failure | None = None
        for attempt in range(1, self.max_attempts + 1):
            kwargs = {**request, **self._next_mock()}
            if self._api_key:
                kwargs["api_key"] = self._api_key.reveal()
            try:
                return self._litellm.completion(**kwargs)
            except Exception as exc:  # classified here; the exception itself is not kept (it may echo the key)
                try:
                    failure = classify(exc, self.who, self._litellm, trust_exception=not self.api_base,
                                       secrets=tuple(k for k in (self._api_key.reveal(),) if k))
                except Exception:  # never let classifying chain the provider's exception into ours
                    failure = Failure(f"call failed ({type(exc).__name__})", False, self.who)
            finally:
                kwargs.clear()
            if failure.tools_refused and "tools" in request:
                raise _ToolsRefused(failure)
            if failure.choice_refused and "tool_choice" in request:
                raise _ChoiceRefused(failure)
            if not failure.retryable or attempt == self.max_attempts:
                break
            delay = self._delay(attempt, failure.retry_after, failure.overloaded)
            log.warning("%s %s; retrying in %.1f s (attempt %d of %d)", failure.provider, failure.kind, delay,
                        attempt, self.max_attempts)
            self._sleep(delay)
        assert failure is not None
        message = f"{failure.provider} {failure.kind}"
        if (failure.status == 413 or failure.limit is not None and failure.limit.limit == "image_size") and \
                not hints.has_images(request.get("messages")):  # a 413 on a request with no image: the request itself
            message = (f"{failure.provider} {failure.kind}: {hints.too_large(request)}" if failure.status == 413
                       else f"{failure.provider} refused the request as too large: {hints.too_large(request)}")
            failure = replace(failure, limit=None)
        if failure.retryable and self.max_attempts > 1:
            message += f", after {self.max_attempts} attempts"
        if failure.detail:
            message += f": {failure.detail}"
        if failure.kind.startswith("found no API key"):
            message += f": {self._key_hint(self._missing_keys())}"
        if failure.kind.startswith(("rejected the API key", "refused access to the model")):
            message += f"; {hints.key_hint(self.provider, self._key_source, self._key_env)}"
        if failure.kind.startswith("did not answer in time"):
            message += f"; {hints.timeout_hint(self.timeout)}"
        if failure.kind.startswith("could not be reached") and self._local_default():
            message += (f" (nothing answers at {self._local_default()}, litellm's address for a local "
                        f"{self.provider} server: start it with `ollama serve`, or give its address with --api-base)")
        if failure.kind.startswith("does not know the model or endpoint") and self._v1_missing():
            message += (f" (an OpenAI-compatible server's api_base usually ends in /v1: "
                        f"{str(self.api_base).rstrip('/')}/v1)")
        if failure.limit is not None:
            if failure.limit.limit == "vision":  # learned: the loop resends the turn as page text
                self._learn("vision", False, failure.detail or failure.kind, here=True)
            raise madqa.ServerLimitError(message, failure.limit.limit, failure.limit.value)
        raise madqa.BackendError(message)  # raised outside the except: no chained provider exception

    def _local_default(self) -> str | None:
        """The address litellm calls for an Ollama model given no api_base (OLLAMA_API_BASE, else localhost)."""
        if self.api_base or self.provider not in ("ollama", "ollama_chat"):
            return None
        return os.environ.get("OLLAMA_API_BASE") or "http://localhost:11434"

    def _v1_missing(self) -> bool:
        """Whether an OpenAI-compatible api_base lacks the /v1 its server serves under (vLLM, llama.cpp, LM
        Studio): a 404 then says no more than "Not Found"."""
        if not self.api_base or self.provider not in ("openai", "hosted_vllm", "lm_studio", "llamafile"):
            return False
        return not urlsplit(self.api_base).path.rstrip("/").endswith("/v1")

    def _delay(self, attempt: int, retry_after: float | None, overloaded: bool = False) -> float:
        base = max(self.retry_base_delay, self.overload_delay) if overloaded else self.retry_base_delay
        ceiling = min(self.retry_max_delay, base * 2 ** (attempt - 1))
        delay = ceiling / 2 + self._rng.uniform(0, ceiling / 2)  # "equal jitter"
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.retry_max_delay))
        return delay

    def _next_mock(self) -> dict[str, Any]:
        if self._mock_queue is None:
            return dict(self._mock_each)
        if not self._mock_queue:
            raise madqa.BackendError("litellm mock responses ran out")
        return {**self._mock_each, **mock_kwargs(self._mock_queue.pop(0))}

    def _decision(self, request: dict[str, Any], response: Any, force_answer: bool,
                  notes: list[str]) -> madqa.ModelDecision:
        return read_reply(response, request, notes, provider=self.provider, call_no=self._calls,
                          cost=self._cost(response))

    def _cost(self, response: Any) -> float | None:
        try:
            cost = self._litellm.completion_cost(completion_response=response)
        except Exception:  # a model without prices in litellm's map
            return None
        return float(cost) if isinstance(cost, (int, float)) else None


def _factory(host: madqa.Host, options: dict[str, Any]) -> LiteLLMBackend:
    """The backend for ``host.model``; the run's own key and api_base (``host``) over the options' api_base."""
    given = {**options, **{k: v for k, v in (("api_key", host.api_key), ("api_base", host.api_base)) if v is not None}}
    return LiteLLMBackend(host.model or "", given)


@madqa.hookimpl
def register_backends(register: madqa.Register) -> None:
    register("litellm", _factory,
             "any chat model through litellm: openai/..., anthropic/..., gemini/..., ollama_chat/..., "
             "or an OpenAI-compatible server (vLLM, llama.cpp) as openai/<name> with api_base",
             requires=("litellm",), options=OPTIONS, takes_host=True)
