"""Long jobs in the app draw one progress bar, not one over every output component."""

from __future__ import annotations

import gc
from pathlib import Path

from madqa.settings import Settings
from madqa.ui import build_app
from tests.browser_support import GRADIO_QUIRKS, close_app
from tests.conftest import make_pdf

pytestmark = GRADIO_QUIRKS


def test_upload_and_evaluation_show_progress_on_one_component(tmp_path: Path, registry) -> None:
    make_pdf(tmp_path / "docs" / "a.pdf", ["Kestrel Dynamics had 42 staff."])
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    app = build_app(settings, registry, demo_dir=tmp_path / "docs")
    try:
        config = app.get_config_file()
        elem = {c["id"]: c["props"].get("elem_id") for c in config["components"]}
        deps = {d.get("api_name"): d for d in config["dependencies"] if d.get("api_name")}
        for api, where in (("add_documents", "corpus-results"), ("evaluate", "eval-metrics")):
            dep = deps[api]
            assert len(dep["outputs"]) > 3  # many outputs ...
            assert [elem[i] for i in dep["show_progress_on"]] == [where]  # ... one progress bar
    finally:
        close_app(app)
        gc.collect()
