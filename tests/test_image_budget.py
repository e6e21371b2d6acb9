"""One image budget (issue 26, point 1): the CLI flag or the web app's slider, then a config's own value, then
``MADQA_IMAGE_BUDGET``, then 1.2 MP, decided by ``madqa.settings.image_budget_px`` alone.

``PipelineConfig`` used to carry its own 1,200,000 default and the agent always passed it, so with
``MADQA_IMAGE_BUDGET=200000`` the page sent to the model was still 1,189,349 px; ``madqa ask --budget 6``
(meant as a model budget) failed with "image budget 6 px".
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image

from madqa.agent import Agent
from madqa.cli import main
from madqa.errors import SettingsError
from madqa.settings import DEFAULT_IMAGE_BUDGET_PX, PipelineConfig, Settings, image_budget_px, load_config
from madqa.ui.config_panel import part_values, resolve_config, slider_mp
from madqa.ui.policy import WebPolicy
from tests.conftest import make_pdf

SCRIPT = [{"search": "revenue 2024"}, {"answer": ["7.5 million"], "citations": [{"file": "report.pdf", "page": 1}]}]


def pixels_sent(calls: list[dict]) -> list[int]:
    """Width x height of every page image in the requests a scripted backend received."""
    sizes = []
    for call in calls:
        for message in call["messages"]:
            for part in message["content"] if isinstance(message.get("content"), list) else ():
                if part.get("type") == "image_url":
                    data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                    with Image.open(io.BytesIO(data)) as image:
                        sizes.append(image.width * image.height)
    return sizes


def sent(corpus, registry, settings: Settings, **overrides: object) -> list[int]:
    config = load_config("offline").with_overrides(backend="scripted", **overrides)
    agent = Agent(corpus, config, registry, settings, {"script": SCRIPT})
    assert list(agent.run("What was the revenue in 2024?"))[-1].answer == ("7.5 million",)
    return pixels_sent(agent.backend.calls)


def test_the_environment_variable_bounds_the_image_the_backend_receives(corpus, registry, settings):
    small = Settings.from_env(env={"MADQA_IMAGE_BUDGET": "200000"}, home=settings.home)
    sizes = sent(corpus, registry, small)
    assert sizes and all(150_000 < px <= 200_000 for px in sizes), sizes  # 1,189,349 px before
    assert all(px > 1_000_000 for px in sent(corpus, registry, settings))  # unset: 1.2 MP


def test_a_configs_own_value_beats_the_environment_and_the_flag_beats_both(corpus, registry, settings):
    small = Settings.from_env(env={"MADQA_IMAGE_BUDGET": "200000"}, home=settings.home)
    assert all(300_000 < px <= 400_000 for px in sent(corpus, registry, small, image_budget_px=400_000))
    config = PipelineConfig(image_budget_px=400_000)
    assert image_budget_px(small, config, chosen=300_000) == 300_000  # the CLI flag or the slider
    assert image_budget_px(small, config) == 400_000  # the config's own
    assert image_budget_px(small, PipelineConfig()) == 200_000  # MADQA_IMAGE_BUDGET
    assert image_budget_px(Settings.from_env(env={})) == DEFAULT_IMAGE_BUDGET_PX == 1_200_000
    assert load_config("offline").image_budget_px is None  # a preset that says nothing leaves it to the setting


def test_the_web_slider_shows_the_setting_and_changes_the_config_only_when_moved():
    small = Settings.from_env(env={"MADQA_IMAGE_BUDGET": "200000"})
    config = load_config("offline")
    assert slider_mp(config, small) == 0.2 and part_values(config, small)[7] == 0.2
    values = [config.name, *part_values(config, small), "", ""]
    policy = WebPolicy(backends=("offline",))
    same, _ = resolve_config({config.name: config}, values, policy, settings=small)
    assert same == config and image_budget_px(small, same) == 200_000  # untouched: the name says nothing new
    values[8] = 0.5
    moved, _ = resolve_config({config.name: config}, values, policy, settings=small)
    assert moved.image_budget_px == 500_000 and "image_budget_px=500000" in moved.name


def test_the_cli_flag_is_image_budget_and_budget_warns_that_it_is_deprecated(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    make_pdf(tmp_path / "docs" / "a.pdf", ["The pump runs at 40 litres per minute."])
    out = tmp_path / "page.png"
    assert main(["render", "--corpus", str(tmp_path / "docs"), "a.pdf", "1", "-o", str(out),
                 "--image-budget", "100000"]) == 0
    with Image.open(out) as image:
        assert 80_000 < image.width * image.height <= 100_000
    capsys.readouterr()
    assert main(["render", "--corpus", str(tmp_path / "docs"), "a.pdf", "1", "-o", str(out), "--budget", "50000"]) == 0
    assert "--budget is deprecated" in capsys.readouterr().err
    with Image.open(out) as image:
        assert image.width * image.height <= 50_000
    for flag in ("--budget", "--image-budget"):
        with pytest.raises(SystemExit) as exit_info:
            main(["ask", "--corpus", str(tmp_path / "docs"), "How fast?", flag, "6"])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and f"argument {flag}" in err
        assert "pixels per page image" in err and "budget.max_calls" in err  # says what it is, and what was meant


def test_bad_budgets_name_where_they_came_from():
    with pytest.raises(SettingsError, match="MADQA_IMAGE_BUDGET 6 is outside"):
        Settings.from_env(env={"MADQA_IMAGE_BUDGET": "6"})
    with pytest.raises(SettingsError, match="config's image_budget_px 6 is outside"):
        PipelineConfig(image_budget_px=6).validate()
