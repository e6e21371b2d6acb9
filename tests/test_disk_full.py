"""A disk that fills up during an upload (issue 12 item 11), made real with the kernel's file-size limit.

``RLIMIT_FSIZE`` makes every write past N bytes fail in the kernel (Python ignores SIGXFSZ, so the
write returns EFBIG), as a full disk fails a write with ENOSPC. The upload must fail cleanly with a
reason that names no server path, leave no file (not even an empty one) and no half-written index
generation, and the demo corpus must keep answering and showing pages meanwhile.
"""

from __future__ import annotations

import resource
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from madqa.agent import Agent
from madqa.plugins import collect, get_plugin_manager
from madqa.render import render_page
from madqa.settings import Settings, load_config
from madqa.types import AnswerStep, PageRef
from madqa.ui.pages import THUMB_BUDGET_PX, page_file
from madqa.ui.sessions import MAX_UPLOAD_FILES, SessionStore, new_session
from tests.conftest import DEMO_DOCS, make_pdf

pytestmark = pytest.mark.slow


@contextmanager
def disk_full_after(limit: int) -> Iterator[None]:
    """Writes past ``limit`` bytes in any file fail, in this process, until the block ends."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def generations(state_root: Path) -> list[str]:
    return sorted(p.name for p in state_root.rglob("*") if p.is_dir() and p.name.startswith(("tmp-gen", "gen-")))


def test_a_disk_full_upload_fails_cleanly_and_the_demo_keeps_serving(tmp_path: Path) -> None:
    settings = Settings.from_env(env={}, home=tmp_path / "home", ocr="never")
    registry = collect(get_plugin_manager(entry_points=False))
    demo = tmp_path / "demo"
    shutil.copytree(DEMO_DOCS, demo)
    store = SessionStore(settings, registry, demo)
    store.demo.start()
    assert store.demo.wait(300) and store.demo.corpus is not None
    token = new_session()["token"]
    folder = store.folder(token)
    kept = make_pdf(tmp_path / "kept.pdf", ["The okapi census counted 412 animals."])
    assert store.add_files(token, [("kept.pdf", kept)]).files[0].status == "indexed"
    before = generations(settings.corpora_dir)

    # 1. the disk fills while the file is copied: a partial file would be left (and counted)
    big = make_pdf(tmp_path / "big.pdf", [f"page {n} " + "lorem ipsum dolor " * 300 for n in range(60)])
    with disk_full_after(big.stat().st_size // 2):
        outcome = store.add_files(token, [("big.pdf", big)])
    [result] = outcome.files
    assert (result.status, result.saved_as) == ("failed", None)
    assert "the server's disk is full" in result.detail and str(tmp_path) not in result.detail
    assert sorted(p.name for p in folder.iterdir()) == ["kept.pdf"]  # no partial, no empty file

    # 2. the file fits but the index does not: the upload is undone, no half-written generation
    small = make_pdf(tmp_path / "small.pdf", ["quetzal " * 2000])
    with disk_full_after(small.stat().st_size + 4096):
        outcome = store.add_files(token, [("small.pdf", small)])
    [result] = outcome.files
    assert result.status == "failed" and "nothing of this upload was kept" in result.detail, result
    assert str(tmp_path) not in result.detail
    assert sorted(p.name for p in folder.iterdir()) == ["kept.pdf"]
    assert generations(settings.corpora_dir) == before  # no tmp-gen-* left, the current one unchanged
    corpus = store.own_corpus(token)
    assert corpus is not None and list(corpus.documents) == ["kept.pdf"]

    # 3. meanwhile the demo corpus answers and shows pages it never showed before (the cache cannot grow)
    demo_corpus = store.demo.get()
    config = load_config("offline")
    with disk_full_after(1024):
        steps = list(Agent(demo_corpus, config, registry, settings).run(
            "What was the operating income (EBIT) in 2023, in EUR thousand?"))
        image = render_page(demo_corpus, "finance/annual_report_2024.pdf", 3, settings, budget_px=123_456)
    assert isinstance(steps[-1], AnswerStep) and steps[-1].answer and image.data[:4] == b"\x89PNG"
    assert not [s for s in steps if getattr(s, "error", None)]  # every search showed its pages

    # 4. afterwards uploads work again, and the failures were not counted toward the limits
    again = store.add_files(token, [("small.pdf", small)])
    assert again.files[0].status == "indexed"
    assert len([p for p in folder.iterdir()]) == 2 < MAX_UPLOAD_FILES
    assert page_file(store.own_corpus(token), PageRef("small.pdf", 1), settings, THUMB_BUDGET_PX).is_file()
