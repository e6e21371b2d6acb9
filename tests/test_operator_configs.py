"""The operator's own configs in the web app (``MADQA_CONFIG_DIR``, ``MADQA_CONFIG`` as a path): offered beside the
presets, the path's config the default, and every problem one line of the error that stops the start."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from madqa.errors import SettingsError
from madqa.settings import Settings, list_configs
from madqa.ui.build import served_configs
from madqa.ui.policy import WebPolicy

VLLM = """name = "own-vllm"
description = "a local vLLM server"
backend = "litellm"
model = "openai/qwen2.5-vl"
[options.backend]
api_base = "http://127.0.0.1:8000/v1"
"""


def served(settings: Settings, **changes: str) -> tuple[dict, str]:
    settings = replace(settings, **changes)
    return served_configs(settings, WebPolicy.from_settings(settings))


def test_a_folder_of_own_configs_is_offered_beside_the_presets(settings: Settings, tmp_path: Path) -> None:
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "vllm.toml").write_text(VLLM, encoding="utf-8")
    (folder / "hosted.toml").write_text('backend = "litellm"\nmodel = "openai/gpt-4.1-mini"\n', encoding="utf-8")
    configs, default = served(settings, config_dir=str(folder))
    assert {"own-vllm", "hosted"} <= set(configs)
    assert {n for n, c in list_configs().items() if c.backend in ("offline", "litellm")} <= set(configs)
    assert configs["own-vllm"].options["backend"]["api_base"] == "http://127.0.0.1:8000/v1"
    assert default == "offline"


def test_a_config_path_is_offered_and_is_the_default(settings: Settings, tmp_path: Path) -> None:
    own = tmp_path / "own.toml"
    own.write_text(VLLM, encoding="utf-8")
    configs, default = served(settings, config=str(own))
    assert default == "own-vllm" and configs[default].model == "openai/qwen2.5-vl"


def test_every_problem_is_one_line_and_stops_the_start(settings: Settings, tmp_path: Path) -> None:
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "broken.toml").write_text("backend = \n", encoding="utf-8")
    (folder / "typo.toml").write_text('backend = "litellm"\nmodle = "x"\n', encoding="utf-8")
    (folder / "offline.toml").write_text('backend = "offline"\n', encoding="utf-8")  # a preset's name
    (folder / "scripted.toml").write_text('name = "mine"\nbackend = "scripted"\n', encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        served(settings, config_dir=str(folder), config=str(tmp_path / "missing.toml"))
    lines = str(caught.value).splitlines()[1:]
    assert len(lines) == 5, lines
    text = "\n".join(lines)
    assert "broken.toml" in text and "cannot be read" in text
    assert "typo.toml" in text and "modle" in text
    assert "'offline' is a preset's" in text
    assert "'mine': its backend 'scripted' is not offered" in text
    assert "missing.toml" in text and "no such file" in text


def test_a_missing_folder_and_an_unknown_name_are_said(settings: Settings, tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="MADQA_CONFIG_DIR .* is not a folder"):
        served(settings, config_dir=str(tmp_path / "nowhere"))
    with pytest.raises(SettingsError, match="MADQA_CONFIG_DIR adds your own"):
        served(settings, config="no-such-config")


def test_the_operators_addresses_are_in_no_view_yet_still_apply(settings: Settings) -> None:
    from madqa.settings import PipelineConfig
    from madqa.ui.built_configs import config_toml
    from madqa.ui.config_builder import built_list
    from madqa.ui.config_panel import options_text, part_values, resolve_config

    own = PipelineConfig(name="own", backend="litellm", model="openai/m", query_strategy="llm-rewrite",
                         options={"backend": {"api_base": "http://10.0.0.7:8000/v1"},
                                  "query_strategy": {"api_base": "http://10.0.0.8/v1", "api_key_env": "MY_KEY",
                                                     "threshold": 0.4},
                                  "retriever": {"uri": "http://milvus.internal:19530"}})
    shown = [options_text(own), built_list([own]), config_toml(own)]
    for view in shown:
        assert "10.0.0" not in view and "MY_KEY" not in view and "milvus.internal" not in view, view
    assert "query_strategy.threshold=0.4" in shown[0]  # a visitor's own kind of option is still shown
    policy = WebPolicy.from_settings(replace(settings, allow_private_api_base=True))
    values = ["own", *part_values(own, settings), "", ""]
    config, _ = resolve_config({"own": own}, values, policy, settings)
    assert config.options == own.options and config.name == "own"  # nothing changed: the operator's options apply
