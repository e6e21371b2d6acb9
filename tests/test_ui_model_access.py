"""Keyless configs in the pickers: marked with the variable they lack, listed after the runnable ones, and
the picker's info line says what the greyed entries mean (the greying itself is browser-side, in
test_ui_visitor.py). The reason names the provider and what to do."""

from __future__ import annotations

import pytest

from madqa.settings import list_configs
from madqa.ui.model_access import KEYLESS_HINT, PROVIDER_KEYS, config_choices, key_problem, picker_info


def test_keyless_configs_are_marked_with_what_they_lack_and_listed_last() -> None:
    configs = list_configs()
    choices = config_choices(configs, env={"ANTHROPIC_API_KEY": "sk-ant"})
    labels = dict((name, label) for label, name in choices)
    assert labels["offline"] == "offline" and labels["claude-sonnet-4.5"] == "claude-sonnet-4.5"
    assert labels["gpt-4.1-mini"] == "gpt-4.1-mini (needs OPENAI_API_KEY or your key)"
    assert labels["gemini-2.5-flash"] == "gemini-2.5-flash (needs GEMINI_API_KEY or your key)"
    marked = [label != name for label, name in choices]
    assert marked == sorted(marked)  # every runnable config before the first keyless one


def test_the_picker_says_what_greyed_means_only_when_something_is_greyed() -> None:
    configs = list_configs()
    assert picker_info(configs, "a preset", env={}) == f"a preset; {KEYLESS_HINT}"
    assert picker_info(configs, "", env={}) == KEYLESS_HINT
    offline = {"offline": configs["offline"]}
    assert picker_info(offline, "a preset", env={}) == "a preset"
    everything = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "GEMINI_API_KEY": "k"}
    assert picker_info({n: c for n, c in configs.items() if n != "local-openai-compatible"}, "x", env=everything) == "x"


def test_the_reason_names_the_provider_the_variable_and_what_to_do() -> None:
    config = list_configs()["gpt-4.1-mini"]
    reason = key_problem(config, env={})
    assert reason is not None
    assert "needs an OpenAI API key" in reason and "OPENAI_API_KEY" in reason and "Settings → API key" in reason
    assert key_problem(config, {"api_key": "sk-visitor"}, env={}) is None  # the visitor's own key is enough
    assert key_problem(config, env={"OPENAI_API_KEY": "sk-server"}) is None


def test_the_provider_key_table_agrees_with_litellm(monkeypatch) -> None:
    """The table exists so the web app need not import litellm to mark configs; it must say what litellm says."""
    litellm = pytest.importorskip("litellm")
    for variables in PROVIDER_KEYS.values():
        for name in variables:
            monkeypatch.delenv(name, raising=False)
    models = {"openai": "openai/gpt-4o", "anthropic": "anthropic/claude-sonnet-4-5", "gemini": "gemini/gemini-2.5-flash",
              "mistral": "mistral/mistral-large-latest", "groq": "groq/llama-3.1-8b-instant",
              "openrouter": "openrouter/openai/gpt-4o"}
    assert set(models) == set(PROVIDER_KEYS)
    for provider, model in models.items():
        missing = litellm.validate_environment(model=model)["missing_keys"]
        assert set(missing) == set(PROVIDER_KEYS[provider]), (provider, missing)
