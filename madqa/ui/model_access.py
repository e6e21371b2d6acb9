"""Can this config reach its model from here? Keys first-class, before a run, not hidden in a step.

A litellm config needs its provider's key: the visitor's own (pasted in Settings), a key the
operator set in the server's environment, or a local server (``api_base``). Without one, Ask and
Compare say so up front, naming the provider and what to do; Evaluate refuses to score the run
(a keyless run would score 0.0 for a reason that has nothing to do with the model); config
menus mark such configs.

The provider -> variable table covers the shipped presets without importing litellm (seconds
on a busy machine); a test checks it against ``litellm.validate_environment``. Other providers
are asked of litellm itself, at run time only.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from madqa.settings import PipelineConfig
from madqa.text import with_article

PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
}
PROVIDER_NAMES = {"openai": "OpenAI", "anthropic": "Anthropic", "gemini": "Google Gemini", "mistral": "Mistral",
                  "groq": "Groq", "openrouter": "OpenRouter"}
LOCAL_PROVIDERS = ("ollama", "ollama_chat", "hosted_vllm", "lm_studio")  # reached by api_base, no key


def provider_of(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else "openai"


def required_keys(config: PipelineConfig, options: Mapping[str, Any] | None = None,
                  env: Mapping[str, str] | None = None, ask_litellm: bool = False) -> tuple[str, ...]:
    """The environment variables ``config`` lacks to reach its model here; () when it can run.

    ``options``: the visitor's backend options for this request (``api_key``, ``api_base``)."""
    env = os.environ if env is None else env
    options = options or {}
    if config.backend != "litellm" or (options.get("api_key") or "").strip():
        return ()
    backend = config.part_options("backend")
    if backend.get("api_base") or (options.get("api_base") or "").strip():
        return ()  # a server of the operator's or the visitor's own: it says itself whether it wants a key
    named = backend.get("api_key_env")
    if named:
        return () if env.get(str(named)) else (str(named),)
    provider = provider_of(config.model)
    if provider in LOCAL_PROVIDERS:
        return ()
    known = PROVIDER_KEYS.get(provider)
    if known is not None:
        return () if any(env.get(k) for k in known) else known
    if not ask_litellm and "litellm" not in sys.modules:
        return ()  # unknown provider: litellm tells at run time
    import litellm

    result = litellm.validate_environment(model=config.model)
    return () if result.get("keys_in_environment") else tuple(result.get("missing_keys") or ())


def key_problem(config: PipelineConfig, options: Mapping[str, Any] | None = None,
                env: Mapping[str, str] | None = None) -> str | None:
    """A plain sentence saying why ``config`` cannot reach its model and what to do; None when it can."""
    missing = required_keys(config, options, env, ask_litellm=True)
    if not missing:
        return None
    provider = PROVIDER_NAMES.get(provider_of(config.model), provider_of(config.model))
    return (f"{config.name} uses {config.model}, which needs {with_article(provider)} API key, and this server has none "
            f"({' or '.join(missing)} is not set). Paste your own key under Settings → API key (it stays in "
            "this browser session), or pick the offline config, which needs no key.")


def config_label(config: PipelineConfig, env: Mapping[str, str] | None = None) -> str:
    """A config's name in menus, marked when it cannot run here without a pasted key."""
    missing = required_keys(config, env=env)
    return f"{config.name} (needs {missing[0]} or your key)" if missing else config.name


def config_choices(configs: Mapping[str, PipelineConfig], env: Mapping[str, str] | None = None
                   ) -> list[tuple[str, str]]:
    """(label, name) pairs for a config menu: runnable configs first, keyless ones marked after them."""
    pairs = [(config_label(c, env), name) for name, c in configs.items()]
    return sorted(pairs, key=lambda pair: pair[0] != pair[1])


KEYLESS_HINT = "greyed: needs a provider key this server lacks; paste yours under API key"


def picker_info(configs: Mapping[str, PipelineConfig], info: str, env: Mapping[str, str] | None = None) -> str:
    """A config picker's info line, saying what greyed entries mean when there are any."""
    keyless = any(required_keys(c, env=env) for c in configs.values())
    return f"{info}; {KEYLESS_HINT}" if keyless and info else (KEYLESS_HINT if keyless else info)
