"""The public web app's rules: the one place it asks "may this visitor do this?".

Visitors are strangers; the operator (environment, config files, CLI) is trusted. So the web app
offers only allowed backends (never a test-only one), takes only allow-listed part options from
the options box (those plugins declare ``visitor_safe``, see ``madqa.options``), sends the
server's keys only to their providers' own endpoints (or to the operator's allow-list), and lets
a visitor-typed ``api_base`` be used only with the visitor's own key and only when it resolves to
public addresses. Budgets and concurrency limits live in ``madqa.ui.limits``.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from madqa.errors import MadqaError
from madqa.options import Option
from madqa.plugins import Registry, collect, get_plugin_manager
from madqa.settings import PipelineConfig, Settings
from madqa.types import ErrorStep, SearchStep, Step
from madqa.ui.messages import hide_paths

TEST_ONLY_BACKENDS = frozenset({"scripted"})  # read scripts given by the caller: never a visitor's choice
VISITOR_BASE_PROVIDERS = ("openai", "hosted_vllm")  # a typed api_base is an OpenAI-compatible server
# What a config may ask of the server's keys (a visitor with their own key is not limited this way).
SERVER_KEY_LIMITS = {"top_k": 10, "max_steps": 15, "image_budget_px": 2_000_000}
# The most a visitor may ask of any run (what the web app's sliders offer): a changed top_k, max_steps or image budget
# outside these is refused whatever the backend; a named config's own values are the operator's and pass.
VISITOR_LIMITS = {"top_k": (1, 50), "max_steps": (1, 30), "image_budget_px": (100_000, 6_000_000)}
SERVER_KEY_BACKENDS = ("litellm",)  # backends that call a provider with the server's key when a visitor gives none
SERVER_KEY_STRATEGIES = ("llm-rewrite",)  # query strategies that do the same for their own model call
WEB_ATTEMPTS = 2  # a model call from the web app: tried twice, then the question ends with what it has
WEB_RETRY_MAX_DELAY_S = 5.0
ENDPOINT_FAILURE = ("the server at api_base gave no usable answer (it may be unreachable, refuse the "
                    "connection, time out, reject the key or fail; the web app does not say which)")
Resolver = Callable[[str, int], Iterable[str]]
log = logging.getLogger("madqa.ui")


class Refused(MadqaError):
    """A visitor asked for something the public web app does not allow; the message says what and why."""


# The part options a visitor may set in the options box: those each plugin declares ``visitor_safe``
# (``madqa.Option``), within its ``visitor_high``. Everything else — endpoints, key variables, models,
# mocks, resource knobs, and any option a plugin does not mark visitor-safe — is operator-only.
VisitorOptions = Mapping[str, Mapping[str, tuple[Option, ...]]]


def visitor_options(registry: Registry) -> dict[str, dict[str, tuple[Option, ...]]]:
    """Part -> option name -> the visitor-safe declarations of that name by the registry's components."""
    allowed: dict[str, dict[str, tuple[Option, ...]]] = {}
    for component in registry.list():
        for option in component.options:
            if option.visitor_safe:
                by_name = allowed.setdefault(component.kind, {})
                by_name[option.name] = (*by_name.get(option.name, ()), option)
    return allowed


def _split(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (the system resolver; a literal IP resolves to itself)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def public_address(address: str) -> bool:
    """True for a globally routable address; False for loopback, private, link-local (cloud metadata),
    CGNAT, multicast, reserved and unspecified ones, IPv4-mapped IPv6 included."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    if mapped is not None:
        ip = mapped
    return ip.is_global and not ip.is_multicast


@dataclass(frozen=True)
class WebPolicy:
    """What the web app lets a visitor do; ``from_settings`` reads it from the operator's settings."""

    backends: tuple[str, ...] = ("offline", "litellm")
    providers: tuple[str, ...] = ("openai", "anthropic", "gemini")
    allowed_api_bases: tuple[str, ...] = ()
    allow_private_api_base: bool = False
    provider_timeout_s: float = 30.0
    resolver: Resolver = system_resolver
    visitor_options: VisitorOptions = field(default_factory=dict)  # none unless derived from a registry

    @classmethod
    def from_settings(cls, settings: Settings, resolver: Resolver | None = None,
                      registry: Registry | None = None) -> WebPolicy:
        """The operator's policy; visitor options from ``registry``'s declarations (default: the plugins
        ``settings`` load)."""
        registry = registry or collect(get_plugin_manager(settings.plugins_dir))
        return cls(backends=tuple(b for b in _split(settings.web_backends) if b not in TEST_ONLY_BACKENDS),
                   providers=_split(settings.web_providers), allowed_api_bases=_split(settings.allowed_api_bases),
                   allow_private_api_base=settings.allow_private_api_base,
                   provider_timeout_s=settings.web_provider_timeout_s,
                   resolver=resolver or system_resolver, visitor_options=visitor_options(registry))

    def __repr__(self) -> str:  # the allow-list may name internal hosts: not for visitors' eyes
        return f"WebPolicy(backends={self.backends}, providers={len(self.providers)}, allowed_api_bases=<{len(self.allowed_api_bases)}>)"

    # --- what is offered -------------------------------------------------------------------

    def offered_backends(self, installed: Iterable[str]) -> list[str]:
        """The installed backends a visitor may pick, in the registry's order."""
        return [name for name in installed if self.backend_allowed(name)]

    def backend_allowed(self, name: str) -> bool:
        return name in self.backends and name not in TEST_ONLY_BACKENDS

    def offered_configs(self, configs: Mapping[str, PipelineConfig]) -> dict[str, PipelineConfig]:
        """The named configs whose backend a visitor may use."""
        return {name: c for name, c in configs.items() if self.backend_allowed(c.backend)}

    # --- one request -----------------------------------------------------------------------

    def check_config(self, config: PipelineConfig, base: PipelineConfig) -> None:
        """Refused unless the config's backend is offered, the top_k, max_steps and image budget the visitor changed
        from the named config ``base`` are within ``VISITOR_LIMITS``, and every option the visitor changed is on
        the visitor allow-list with an allowed value."""
        if not self.backend_allowed(config.backend):
            raise Refused(f"backend {config.backend!r} is not offered in the web app "
                          f"(offered: {', '.join(self.backends) or 'none'})")
        for name, (least, most) in VISITOR_LIMITS.items():
            value = getattr(config, name)
            if value is not None and value != getattr(base, name) and not least <= value <= most:
                raise Refused(f"{name} {value:,} is outside {least:,}..{most:,}, what the web app allows")
        for part, table in config.options.items():
            for key, value in table.items():
                if base.options.get(part, {}).get(key, _MISSING) == value:
                    continue  # the operator's own option, from the named config
                declared = self.visitor_options.get(part, {}).get(key)
                if not declared:
                    raise Refused(f"option {part}.{key} cannot be set in the web app (operator-only: "
                                  "config files, the command line or the environment)")
                if not any(option.visitor_allows(value) for option in declared):
                    raise Refused(f"option {part}.{key}={value!r} is outside what the web app allows")

    def backend_options(self, config: PipelineConfig, api_key: str | None, api_base: str | None) -> dict[str, Any]:
        """The backend options for one visitor request, or Refused.

        The server's keys (the environment's) only go to a provider's own endpoint or to an
        operator-listed ``api_base``; a typed ``api_base`` needs the visitor's own key and must
        resolve to public addresses (unless the operator allows private ones)."""
        key, base = (api_key or "").strip(), (api_base or "").strip()
        if config.backend != "litellm":
            return {"api_key": key} if key else {}  # other backends get no endpoint from a visitor
        provider = litellm_provider(config.model)
        listed = bool(base) and self.operator_listed(base)
        if base and not listed:
            if not key:
                raise Refused("an api_base you type needs your own API key: the server's keys are only sent to "
                              "their providers' own endpoints")
            if provider not in VISITOR_BASE_PROVIDERS:
                raise Refused("an api_base you type must be an OpenAI-compatible server: use a model named "
                              "openai/NAME")
            self.check_endpoint(base)
        elif not base and provider not in self.providers:
            raise Refused(f"model {config.model!r} (provider {provider}) is not offered in the web app "
                          f"(providers: {', '.join(self.providers) or 'none'}); an OpenAI-compatible server of "
                          "your own needs an api_base and your own key")
        if not key:
            self.check_server_key_config(config)
        options: dict[str, Any] = {"timeout": self.provider_timeout_s, "max_attempts": WEB_ATTEMPTS,
                                   "retry_max_delay": WEB_RETRY_MAX_DELAY_S}
        if key:
            options["api_key"] = key
        if base:
            options["api_base"] = base
        return options

    def spends_server_key(self, config: PipelineConfig, options: Mapping[str, Any]) -> bool:
        """Whether a run of ``config`` with these backend ``options`` spends the server's keys: a backend (or a
        query strategy) that calls a provider, with no key of the visitor's. Such a run is charged to the
        visitor's budgets on the server's keys (``Limits.budgets``). A strategy that calls a model spends the
        visitor's key when one is given (``use_run_key``); an offline backend's steps count as calls then."""
        if str(options.get("api_key") or "").strip():
            return False
        return config.backend in SERVER_KEY_BACKENDS or config.query_strategy in SERVER_KEY_STRATEGIES

    def check_server_key_config(self, config: PipelineConfig) -> None:
        """Refused when a config would make one question on the server's keys unusually large."""
        for name, most in SERVER_KEY_LIMITS.items():
            if getattr(config, name) is not None and getattr(config, name) > most:  # None: the operator's setting
                raise Refused(f"{name} {getattr(config, name):,} is above {most:,}, the most the web app allows on "
                              "the server's keys (give your own API key for more)")

    def operator_listed(self, base: str) -> bool:
        """Whether ``base`` starts with one of the operator's ``MADQA_ALLOWED_API_BASES``."""
        wanted = base.rstrip("/") + "/"
        return any(wanted.startswith(allowed.rstrip("/") + "/") for allowed in self.allowed_api_bases)

    def check_endpoint(self, url: str) -> None:
        """Refused unless ``url`` is http(s) without credentials and its host resolves only to public
        addresses (resolving only: nothing is sent). The operator may allow private addresses."""
        try:
            parts = urlsplit(url)
            host, port = parts.hostname, parts.port
        except ValueError:
            raise Refused("api_base is not a valid URL") from None
        if parts.scheme not in ("http", "https") or not host:
            raise Refused("api_base must be an http:// or https:// URL with a host name")
        if parts.username is not None or parts.password is not None:
            raise Refused("api_base cannot carry a user name or password; give the key in the API key field")
        if self.allow_private_api_base:
            return
        try:
            addresses = list(self.resolver(host, port or (443 if parts.scheme == "https" else 80)))
        except (OSError, UnicodeError):
            raise Refused("api_base names a host that cannot be resolved") from None
        if not addresses or not all(public_address(a) for a in addresses):
            raise Refused("api_base must be a public address: loopback, private, link-local (cloud metadata) and "
                          "reserved addresses are refused")


_MISSING = object()
OPERATOR_OPTION_WORDS = ("api_base", "url", "uri", "endpoint", "host", "key", "token", "password", "secret", "allow")


def operator_option(part: str, key: str) -> bool:
    """Whether a config's option is the operator's to know alone: every backend option (its api_base, timeouts, key
    variable) and any part's endpoint, key variable or allowed list (``llm-rewrite``'s ``api_base``...)."""
    return part == "backend" or any(word in key.lower() for word in OPERATOR_OPTION_WORDS)


def shown_options(options: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """A config's option tables as a visitor may see them: the operator's options (``operator_option``) left out.
    What is left out still applies: the panels and builders merge a visitor's options into the named config's."""
    shown = {part: {k: v for k, v in table.items() if not operator_option(part, k)} for part, table in options.items()}
    return {part: table for part, table in shown.items() if table}


def shown_config(config: PipelineConfig) -> dict[str, Any]:
    """``config.to_dict()`` as a visitor may see it (reports, downloads): the operator's options left out."""
    data = config.to_dict()
    data["options"] = shown_options(config.options)
    return data


def litellm_provider(model: str) -> str:
    """litellm's provider of a model string (``openai/gpt-4.1-mini`` -> ``openai``); Refused when litellm
    cannot tell. A ``provider/`` prefix is read without importing litellm (seconds on a cold start)."""
    prefix, slash, _ = str(model).strip().partition("/")
    if slash and prefix in _known_providers():
        return prefix
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    try:
        return str(litellm.get_llm_provider(model=model)[1])
    except Exception:  # kept broad: litellm raises several types for a visitor's unknown model name
        raise Refused(f"cannot tell the provider of model {model!r}: write it as provider/model, e.g. "
                      "openai/gpt-4.1-mini") from None


def _known_providers() -> frozenset[str]:
    """litellm's provider names once it is imported; before that the common ones (importing it takes seconds)."""
    import sys

    listed = getattr(sys.modules.get("litellm"), "provider_list", None)  # None while another thread imports it
    if listed is not None:
        return frozenset(str(p.value if hasattr(p, "value") else p) for p in listed)
    return frozenset({*VISITOR_BASE_PROVIDERS, "anthropic", "gemini", "mistral", "groq", "deepseek", "xai",
                      "openrouter", "together_ai", "fireworks_ai", "cohere", "cohere_chat", "ollama", "ollama_chat",
                      "azure", "bedrock", "vertex_ai", "huggingface", "lm_studio", "llamafile"})


def visitor_steps(steps: Iterable[Step], options: Mapping[str, Any]) -> Iterator[Step]:
    """``steps`` with a backend failure at a typed api_base told as ``ENDPOINT_FAILURE`` and no server path
    in an error (``hide_paths``), in the chat and the trace alike."""
    for step in steps:
        if isinstance(step, ErrorStep) and step.where == "backend" and options.get("api_base"):
            log.warning("model call at a typed api_base failed: %s", step.message)  # for the operator only
            step = replace(step, message=ENDPOINT_FAILURE)
        elif isinstance(step, ErrorStep):
            step = replace(step, message=hide_paths(step.message))
        elif isinstance(step, SearchStep) and step.error:
            step = replace(step, error=hide_paths(step.error))
        yield step


def visitor_row(row: dict[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """A prediction row of the batch runner with a typed api_base's failure told as ``ENDPOINT_FAILURE``, and
    no server path in its errors: a bug's text (``internal: ...``) goes to the log, the row keeps its kind."""
    error = row.get("error")
    if isinstance(error, str) and error.startswith("internal: "):
        log.error("question %r failed in the web app: %s", row.get("id"), error)
        row = {**row, "error": "internal: " + error.removeprefix("internal: ").split(":", 1)[0]
               + " (the server log has the details)"}
    trajectory = [{**s, **{k: hide_paths(s[k]) for k in ("message", "error") if isinstance(s.get(k), str)}}
                  if isinstance(s, dict) else s for s in row.get("trajectory") or []]
    if "trajectory" in row:
        row = {**row, "trajectory": trajectory}
    if isinstance(row.get("error"), str):
        row = {**row, "error": hide_paths(row["error"])}
    error = row.get("error")
    if not (options.get("api_base") and isinstance(error, str) and error.startswith("backend: ")):
        return row
    detail = error.removeprefix("backend: ")
    trajectory = [{**s, "message": ENDPOINT_FAILURE} if isinstance(s, dict) and s.get("message") == detail else s
                  for s in trajectory]
    return {**row, "error": f"backend: {ENDPOINT_FAILURE}", "trajectory": trajectory}
