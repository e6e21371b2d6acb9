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
- ``native_tools``, ``vision`` (true / false / auto): override what litellm's model map says. A
  model without native tool calling gets the JSON-in-text protocol (``supports_tools`` is False);
  a model without vision gets each page's text instead of its image (the agent's context policy
  does that). Models litellm does not know (a custom vLLM model) are assumed to support both.
- ``force_tool_choice``: how the last step forces ``submit_answer``: ``"named"`` (default, the
  function by name), ``"required"``, or ``"none"`` (send no tool_choice).
- ``max_attempts`` (default 3; or ``max_retries`` = attempts - 1), ``retry_base_delay`` (1 s),
  ``retry_max_delay`` (30 s), ``sleep`` (a callable, for tests): retries with capped exponential
  backoff and jitter on rate limits, timeouts, connection and 5xx errors; never on
  authentication errors or bad requests. The last failure raises ``madqa.BackendError``
  naming the provider, the kind of error and the provider's own message (keys redacted; none
  for authentication errors, whose text echoes the key).
- Offline mocks through litellm's own client: ``mock_response`` / ``mock_tool_calls`` are
  forwarded on every call; ``mock_responses`` is a list used one item per call: a string (the
  reply text), an exception (raised by litellm, as a provider error would be), a dict
  ``{"tool_calls": [{"name", "arguments", "id"?}], "content"?: str}``, or a dict of raw
  ``mock_response`` / ``mock_tool_calls`` arguments.
"""

from __future__ import annotations

import json
import logging
import os
import random
import time
from collections.abc import Callable
from typing import Any

import madqa
from plugins.litellm_errors import Failure, classify
from plugins.litellm_messages import as_plain_text, content_text, read_arguments, search_request, without_images

log = logging.getLogger("madqa.litellm")

DEFAULT_ATTEMPTS = 3
DEFAULT_TIMEOUT_S = 120.0
PLACEHOLDER_KEY = "none"  # sent to an OpenAI-compatible api_base when no key is given
WHO = "backend litellm"
# Options a user sets (``[options.backend]``, ``--set backend.KEY=VALUE``, the web app's options box),
# with their defaults; None means "not sent" / "ask litellm's model map".
DEFAULTS: dict[str, Any] = {
    "api_base": None, "api_key_env": None, "temperature": None, "timeout": DEFAULT_TIMEOUT_S, "max_tokens": None,
    "completion_kwargs": None, "drop_params": True, "native_tools": None, "vision": None,
    "force_tool_choice": "named", "max_attempts": None, "max_retries": None, "retry_base_delay": 1.0,
    "retry_max_delay": 30.0, "mock_response": None, "mock_tool_calls": None, "mock_responses": None,
}
# Given by the program, not by a user: the key from the CLI or a web session, the corpus (for
# backends that read page text), a sleep function for tests.
INTERNAL = {"api_key": None, "corpus": None, "sleep": None}


def read_backend_options(options: dict[str, Any] | None) -> dict[str, Any]:
    """The backend's options with defaults; an unknown key raises PluginError listing the known ones."""
    given = dict(options or {})
    internal = {k: given.pop(k) for k in list(given) if k in INTERNAL}
    for name in ("vision", "native_tools"):  # yes/no/auto, also as text from a form
        if name in given:
            given[name] = _flag(given, name)
    return {**madqa.read_options(given, DEFAULTS, WHO), **internal}


def _import_litellm() -> Any:
    """litellm, imported on first use (it takes seconds), quiet and offline-friendly.

    Without LITELLM_LOCAL_MODEL_COST_MAP litellm fetches its model/cost map from GitHub at import,
    retrying for seconds when offline; the map bundled with the installed version is used instead
    unless the variable is already set.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" prints
    return litellm


class _Secret:
    """Holds a key so that printing, repr() or vars() of its holder never shows it."""

    __slots__ = ("_value",)

    def __init__(self, value: str | None) -> None:
        self._value = value or None

    def reveal(self) -> str | None:
        return self._value

    def __bool__(self) -> bool:
        return self._value is not None

    def __repr__(self) -> str:
        return "<hidden>" if self._value else "<none>"

    __str__ = __repr__

    def __reduce__(self) -> Any:  # never pickled along with a backend
        raise TypeError("a secret cannot be pickled")


class LiteLLMBackend:
    """Decides through ``litellm.completion``; see the module docstring for the options."""

    def __init__(self, model: str, options: dict[str, Any] | None = None) -> None:
        options = read_backend_options(options)
        if not isinstance(model, str) or not model.strip():
            raise madqa.SettingsError("the litellm backend needs a model, e.g. openai/gpt-4o-mini")
        self._litellm = _import_litellm()
        self.model = model.strip()
        key = options.get("api_key")
        if key is None and options.get("api_key_env"):
            key = os.environ.get(str(options["api_key_env"])) or None
            if key is None:
                raise madqa.SettingsError(f"litellm option api_key_env names {options['api_key_env']!r}, "
                                          "which is not set in the environment")
        self._api_key = _Secret(key)
        self.api_base: str | None = options.get("api_base") or None
        self.provider = self._provider()
        self.who = f"the {self.provider} server at api_base" if self.api_base else self.provider  # in errors
        # An OpenAI-compatible server (vLLM, llama.cpp) usually takes any key, but litellm's OpenAI
        # client refuses to start without one: give it a placeholder rather than fail.
        self.placeholder_key = (not self._api_key and bool(self.api_base) and self.provider == "openai"
                                and not os.environ.get("OPENAI_API_KEY"))
        if self.placeholder_key:
            self._api_key = _Secret(PLACEHOLDER_KEY)
        self.temperature = options.get("temperature")
        self.timeout = _positive(options, "timeout")
        self.max_tokens = options.get("max_tokens")
        if self.max_tokens is not None and (not isinstance(self.max_tokens, int) or isinstance(self.max_tokens, bool)
                                            or self.max_tokens < 1):
            raise madqa.SettingsError(f"litellm option max_tokens must be a whole number >= 1, not {self.max_tokens!r}")
        self.drop_params = bool(options.get("drop_params", True))
        extra = options.get("completion_kwargs") or {}
        if not isinstance(extra, dict):
            raise madqa.SettingsError("litellm option completion_kwargs must be a dict")
        if {"api_key", "messages", "model", "tools", "tool_choice"} & set(extra):
            raise madqa.SettingsError("litellm completion_kwargs cannot set api_key, model, messages, tools "
                                      "or tool_choice; use the backend's own options")
        self._extra = dict(extra)
        self.force_tool_choice = options.get("force_tool_choice", "named")
        if self.force_tool_choice not in ("named", "required", "none"):
            raise madqa.SettingsError("litellm option force_tool_choice must be named, required or none, "
                                      f"not {self.force_tool_choice!r}")
        self.max_attempts = _attempts(options)
        self.retry_base_delay = _positive(options, "retry_base_delay", zero=True)
        self.retry_max_delay = _positive(options, "retry_max_delay", zero=True)
        self._sleep: Callable[[float], Any] = options.get("sleep") or time.sleep
        self._rng = random.Random()
        self._mock_each = {k: options[k] for k in ("mock_response", "mock_tool_calls") if options.get(k) is not None}
        self._mock_queue: list[Any] | None = (list(options["mock_responses"])
                                              if options.get("mock_responses") is not None else None)
        self._calls = 0
        self._caps = self._capabilities(_flag(options, "native_tools"), _flag(options, "vision"))
        self.supports_tools: bool = self._caps["native_tools"]
        self.supports_vision: bool = self._caps["vision"]
        level = logging.WARNING if self._caps["missing"] else logging.INFO
        log.log(level, "%s", self._caps["message"])

    def __repr__(self) -> str:
        base = ", api_base=<set>" if self.api_base else ""
        return (f"LiteLLMBackend(model={self.model!r}, provider={self.provider!r}{base}, "
                f"native_tools={self.supports_tools}, vision={self.supports_vision})")

    # --- capabilities ------------------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """What the model can do, where that came from, and a message for people.

        ``known``: litellm's model map has the model; ``litellm_function_calling`` and
        ``litellm_vision``: what litellm says (None when it does not know the model);
        ``native_tools`` and ``vision``: what this backend does (options override litellm);
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

    def _capabilities(self, native_tools: Any, vision: Any) -> dict[str, Any]:
        known = self._known()
        said = {name: (self._supports(f"supports_{name}") if known else None)
                for name in ("function_calling", "vision")}
        tools_used = bool(native_tools) if native_tools is not None else said["function_calling"] is not False
        vision_used = bool(vision) if vision is not None else said["vision"] is not False
        missing: list[str] = []
        lines: list[str] = []
        if not known and (native_tools is None or vision is None):
            lines.append(f"litellm does not know model {self.model}: assuming it accepts images and tool "
                         "calls (set the options vision / native_tools to false if it does not)")
        if not vision_used:
            missing.append("vision")
            why = "option vision=false" if vision is not None else "litellm's model map"
            lines.append(f"model {self.model} does not accept images ({why}): it gets each page's text "
                         "instead of its image")
        if not tools_used:
            missing.append("tools")
            why = "option native_tools=false" if native_tools is not None else "litellm's model map"
            lines.append(f"model {self.model} has no native tool calling ({why}): it gets a JSON-in-text "
                         "protocol instead")
        if self.placeholder_key:
            lines.append("no API key given for the server at api_base: sending a placeholder key (set "
                         "OPENAI_API_KEY, or --set backend.api_key_env=NAME, if the server needs a real one)")
        missing_keys = [] if self._mocked() or self._api_key else self._missing_keys()
        if missing_keys:
            missing.append("api_key")
            lines.append(f"no API key for {self.provider}: {self._key_hint(missing_keys)}")
        if not lines:
            lines.append(f"model {self.model} ({self.provider}): accepts images and tool calls")
        return {"model": self.model, "provider": self.provider, "known": known,
                "litellm_function_calling": said["function_calling"], "litellm_vision": said["vision"],
                "native_tools": tools_used, "vision": vision_used, "missing": missing,
                "missing_keys": missing_keys, "message": "; ".join(lines)}

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
        request: dict[str, Any] = {"model": self.model, "num_retries": 0, "drop_params": self.drop_params}
        if self.supports_tools:
            request["messages"] = messages if self.supports_vision else without_images(messages)
            request["tools"] = tools
            if force_answer and tools and self.force_tool_choice != "none":
                names = [t.get("function", {}).get("name") for t in tools]
                forced = "submit_answer" if "submit_answer" in names else names[-1]
                request["tool_choice"] = ({"type": "function", "function": {"name": forced}}
                                          if self.force_tool_choice == "named" else "required")
        else:
            request["messages"] = as_plain_text(messages, force_answer, self.supports_vision)
        for name, value in (("temperature", self.temperature), ("timeout", self.timeout),
                            ("max_tokens", self.max_tokens), ("api_base", self.api_base)):
            if value is not None:
                request[name] = value
        request.update(self._extra)
        response = self._complete(request)
        return self._decision(response, force_answer)

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
            if not failure.retryable or attempt == self.max_attempts:
                break
            delay = self._delay(attempt, failure.retry_after)
            log.warning("%s %s; retrying in %.1f s (attempt %d of %d)", failure.provider, failure.kind, delay,
                        attempt, self.max_attempts)
            self._sleep(delay)
        assert failure is not None
        message = f"{failure.provider} {failure.kind}"
        if failure.retryable and self.max_attempts > 1:
            message += f", after {self.max_attempts} attempts"
        if failure.detail:
            message += f": {failure.detail}"
        if failure.kind.startswith("found no API key"):
            message += f": {self._key_hint(self._missing_keys())}"
        raise madqa.BackendError(message)  # raised outside the except: no chained provider exception

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        ceiling = min(self.retry_max_delay, self.retry_base_delay * 2 ** (attempt - 1))
        delay = ceiling / 2 + self._rng.uniform(0, ceiling / 2)  # "equal jitter"
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.retry_max_delay))
        return delay

    def _next_mock(self) -> dict[str, Any]:
        if self._mock_queue is None:
            return dict(self._mock_each)
        if not self._mock_queue:
            raise madqa.BackendError("litellm mock responses ran out")
        return {**self._mock_each, **_mock_kwargs(self._mock_queue.pop(0))}

    def _decision(self, response: Any, force_answer: bool) -> madqa.ModelDecision:
        notes: list[str] = []
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        finish_reason = getattr(choices[0], "finish_reason", None) if choices else None
        if message is None:
            notes.append("the model returned no message")
        text = content_text(getattr(message, "content", None)) if message is not None else None
        calls: list[madqa.ToolCall] = []
        for n, call in enumerate(getattr(message, "tool_calls", None) or []):
            function = getattr(call, "function", None)
            name = str(getattr(function, "name", "") or "")
            arguments, note, error = read_arguments(getattr(function, "arguments", None))
            if note:
                notes.append(f"{name or 'tool call'}: {note}")
            call_id = str(getattr(call, "id", "") or f"call_{self._calls}_{n}")
            calls.append(madqa.ToolCall(name, {} if error else arguments, call_id, error))
        if not self.supports_tools and not calls and text:
            search = search_request(text)
            if search is not None and force_answer:
                notes.append(f"the model asked to search on the last step: {text.strip()[:200]}")
                text = None
            elif search is not None:
                calls.append(madqa.ToolCall("search_documents", {"query": search}, f"json_{self._calls}"))
        usage = getattr(response, "usage", None)
        prompt = _int(getattr(usage, "prompt_tokens", 0))
        completion = _int(getattr(usage, "completion_tokens", 0))
        raw: dict[str, Any] = {"finish_reason": finish_reason, "model": str(getattr(response, "model", "") or ""),
                               "provider": self.provider}
        if notes:
            raw["notes"] = notes
        return madqa.ModelDecision(text=text, tool_calls=tuple(calls), usage=madqa.Usage(prompt, completion),
                                   cost_usd=self._cost(response), raw=raw)

    def _cost(self, response: Any) -> float | None:
        try:
            cost = self._litellm.completion_cost(completion_response=response)
        except Exception:  # a model without prices in litellm's map
            return None
        return float(cost) if isinstance(cost, (int, float)) else None


# --- options ---------------------------------------------------------------------------------


def _flag(options: dict[str, Any], name: str) -> bool | None:
    """A yes/no option (a bool, or text such as "false" from a form); None when not given."""
    value = options.get(name)
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    if text in ("", "auto"):
        return None
    raise madqa.SettingsError(f"litellm option {name} must be true, false or auto, not {value!r}")


def _positive(options: dict[str, Any], name: str, zero: bool = False) -> float:
    value = options.get(name)
    if value is None:
        return float(DEFAULTS[name])
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (value == 0 and not zero):
        raise madqa.SettingsError(f"litellm option {name} must be a number of seconds "
                                  f"{'>= 0' if zero else '> 0'}, not {value!r}")
    return float(value)


def _attempts(options: dict[str, Any]) -> int:
    if options.get("max_attempts") is not None:
        value, name = options["max_attempts"], "max_attempts"
    elif options.get("max_retries") is not None:
        value, name = options["max_retries"], "max_retries"
        value = value + 1 if isinstance(value, int) and not isinstance(value, bool) else value
    else:
        return DEFAULT_ATTEMPTS
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise madqa.SettingsError(f"litellm option {name} must be a whole number (attempts at least 1)")
    return value


# --- mocks -----------------------------------------------------------------------------------


def _mock_kwargs(item: Any) -> dict[str, Any]:
    """litellm mock arguments for one scripted reply (see the module docstring)."""
    if isinstance(item, (str, BaseException)):
        return {"mock_response": item}
    if isinstance(item, dict) and "tool_calls" in item:
        calls = []
        for n, call in enumerate(item["tool_calls"]):
            arguments = call.get("arguments", {})
            calls.append({"id": call.get("id") or f"mock_call_{n}", "type": "function",
                          "function": {"name": call["name"], "arguments": arguments if isinstance(arguments, str)
                                       else json.dumps(arguments)}})
        return {"mock_response": item.get("content", ""), "mock_tool_calls": calls}
    if isinstance(item, dict) and {"mock_response", "mock_tool_calls"} & set(item):
        return {k: item[k] for k in ("mock_response", "mock_tool_calls") if k in item}
    raise madqa.SettingsError(f"cannot use {type(item).__name__} as a litellm mock response")


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def _factory(model: str, options: dict[str, Any]) -> LiteLLMBackend:
    return LiteLLMBackend(model, options)


@madqa.hookimpl
def register_backends(register: madqa.Register) -> None:
    register("litellm", _factory,
             "any chat model through litellm: openai/..., anthropic/..., gemini/..., ollama_chat/..., "
             "or an OpenAI-compatible server (vLLM, llama.cpp) as openai/<name> with api_base",
             requires=("litellm",))
