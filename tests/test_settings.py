"""Settings from the environment and the named configs shipped in madqa/presets."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from madqa.errors import SettingsError
from madqa.settings import PipelineConfig, Settings, list_configs, load_config


def test_defaults_never_use_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = Settings.from_env(env={"HOME": "/home/someone"})
    assert settings.home.is_absolute() and Path.cwd() not in settings.home.parents
    assert (settings.host, settings.port, settings.config) == ("127.0.0.1", 7860, "offline")


def test_environment_and_gradio_port(tmp_path):
    env = {"MADQA_HOME": str(tmp_path), "MADQA_IMAGE_BUDGET": "800_000", "GRADIO_SERVER_PORT": "9001",
           "MADQA_OCR": "never"}
    s = Settings.from_env(env=env)
    assert (s.home, s.image_budget_px, s.port, s.ocr) == (tmp_path, 800_000, 9001, "never")
    assert Settings.from_env(env={**env, "MADQA_PORT": "9002"}).port == 9002  # ours wins over Gradio's


@pytest.mark.parametrize("env,message", [({"MADQA_PORT": "http"}, "whole number"), ({"MADQA_OCR": "maybe"}, "ocr"),
                                         ({"MADQA_IMAGE_FORMAT": "gif"}, "png"), ({"MADQA_IMAGE_BUDGET": "5"}, "budget")])
def test_bad_settings_are_named(env, message):
    with pytest.raises(SettingsError, match=message):
        Settings.from_env(env=env)


def test_every_preset_loads_and_names_installed_components(registry):
    configs = list_configs()
    assert "offline" in configs and len(configs) >= 3
    for name, config in configs.items():
        assert config.name == name and config.description
        for kind, component in (("backend", config.backend), ("retriever", config.retriever),
                                ("reranker", config.reranker), ("query_strategy", config.query_strategy)):
            assert component in registry.names(kind), (name, kind, component)


def test_unknown_or_bad_configs(tmp_path):
    with pytest.raises(SettingsError, match="unknown config 'nope'.*offline"):
        load_config("nope")
    with pytest.raises(SettingsError, match=r"config file '.*missing\.toml' does not exist \(or name a config: .*offline"):
        load_config(str(tmp_path / "missing.toml"))  # a typo in a path: not "unknown config" as if it were a name
    bad = tmp_path / "bad.toml"
    bad.write_text('backend = "offline"\ncolour = "blue"\n', encoding="utf-8")
    with pytest.raises(SettingsError, match="unknown keys"):
        load_config(str(bad))
    with pytest.raises(SettingsError, match="top_k"):
        PipelineConfig().with_overrides(top_k=0)


def test_overrides_rename_the_config():
    base = load_config("offline")
    assert base.with_overrides(top_k=5, backend=None) is base  # nothing really changed
    changed = base.with_overrides(query_strategy="relax", top_k=3)
    assert changed.name == "offline[query_strategy=relax,top_k=3]" and changed.top_k == 3


def test_part_options_from_toml_flags_and_overrides(tmp_path):
    from madqa.settings import PipelineConfig, load_config, parse_option

    path = tmp_path / "mine.toml"
    path.write_text('retriever = "whoosh"\n[options.retriever]\nanalyzer = "stemming"\n'
                    '[options.query_strategy]\nthreshold = 0.7\n', encoding="utf-8")
    config = load_config(str(path))
    assert config.part_options("retriever") == {"analyzer": "stemming"}
    assert config.part_options("reranker") == {}
    assert parse_option("query_strategy.threshold=0.5") == {"query_strategy": {"threshold": 0.5}}
    assert parse_option("retriever.analyzer=stemming") == {"retriever": {"analyzer": "stemming"}}
    changed = config.with_overrides(options=parse_option("query_strategy.threshold=0.5"))
    assert changed.part_options("query_strategy") == {"threshold": 0.5}
    assert changed.part_options("retriever") == {"analyzer": "stemming"}
    assert changed.name == "mine[query_strategy.threshold=0.5]"
    assert config.with_overrides(options=parse_option("retriever.analyzer=stemming")) is config
    assert changed.to_dict()["options"]["query_strategy"] == {"threshold": 0.5}
    for bad in ("analyzer=stemming", "model.name=x", "retriever.=1", "retriever.analyzer"):
        with pytest.raises(SettingsError):
            parse_option(bad)
    with pytest.raises(SettingsError):
        PipelineConfig(options={"model": {"x": 1}}).validate()


def test_backend_options_from_toml_and_flags(tmp_path):
    from madqa.settings import PipelineConfig, load_config, parse_options

    path = tmp_path / "local.toml"
    path.write_text('backend = "litellm"\nmodel = "openai/local"\n[options.backend]\n'
                    'api_base = "http://127.0.0.1:9/v1"\ntimeout = 30\n', encoding="utf-8")
    config = load_config(str(path))
    assert config.part_options("backend") == {"api_base": "http://127.0.0.1:9/v1", "timeout": 30}
    changed = config.with_overrides(options=parse_options(["backend.timeout=5", "backend.vision=false"]))
    assert changed.part_options("backend") == {"api_base": "http://127.0.0.1:9/v1", "timeout": 5, "vision": False}
    assert changed.name == "local[backend.timeout=5,backend.vision=False]"
    for secret in ("api_key", "API_KEY", "token"):  # a key in a config would be written into every row
        with pytest.raises(SettingsError, match="api_key_env"):
            PipelineConfig(options={"backend": {secret: "sk-1"}}).validate()


def test_cli_set_reaches_the_retriever(tmp_path, monkeypatch, capsys):
    from madqa import cli
    from madqa.cli import common  # noqa: F401  (cli.common below)

    seen = {}

    class Spy:
        def search(self, query, k):
            import madqa
            return madqa.SearchResult((), query)

    def factory(corpus, options):
        seen.update(options)
        return Spy()

    monkeypatch.setattr(cli.common, "open_corpus", lambda *a: SimpleNamespace(documents={}))  # no file: scope
    original = cli.common.registry

    def patched(settings):
        reg = original(settings)
        monkeypatch.setattr(reg, "create", lambda kind, name, *a: factory(*a))
        return reg

    monkeypatch.setattr(cli.common, "registry", patched)
    monkeypatch.setenv("MADQA_HOME", str(tmp_path))
    assert cli.main(["search", "--corpus", str(tmp_path), "q", "--set", "analyzer=stemming", "--set", "boost=2"]) == 0
    assert seen == {"analyzer": "stemming", "boost": 2}


PAPER_AGENTS = {"madqa-paper-gpt-5-mini": ("openai_agent.py", "named"),
                "madqa-paper-gemini-2.5-flash": ("gemini_agent.py", "none"),
                "madqa-paper-claude-sonnet-4.5": ("anthropic_agent.py", "named")}


@pytest.mark.parametrize("name", sorted(PAPER_AGENTS))
def test_the_paper_agents_presets_say_what_they_reproduce_and_hold_the_official_values(name):
    from madqa.context import ContextOptions
    from madqa_plugins.litellm.litellm_backend import LiteLLMBackend

    config = load_config(name)
    script, choice = PAPER_AGENTS[name]
    assert config.description.startswith("Reproduces the MADQA paper's") and script in config.description
    # process_dataset.py's --top-k 4 and --max-iterations 5; 200 DPI on a Letter page; search only
    assert (config.top_k, config.max_steps, config.image_budget_px) == (4, 5, 1700 * 2200)
    assert config.tools == ("search_documents",) and config.answer_always_present is True
    assert config.part_options("backend")["force_tool_choice"] == choice
    assert ContextOptions.from_options(config.part_options("context")).image_format == "png"
    backend = LiteLLMBackend(config.model, {**config.part_options("backend"), "api_key": "sk-test"})
    assert backend.force_tool_choice == choice  # the backend takes the options as written


def test_madqa_s_own_presets_are_labelled_as_madqa_s_defaults_not_the_paper_s():
    for name in ("gemini-2.5-flash", "gpt-4.1-mini", "claude-sonnet-4.5"):
        config = load_config(name)
        assert "madqa's defaults" in config.description and "paper defaults" not in config.description
        assert (config.top_k, config.max_steps) == (5, 10)
    assert not any("paper defaults" in c.description for c in list_configs().values())
