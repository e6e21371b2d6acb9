"""Pages drawn where a bomb cannot hurt (issue 25, break 1): page images and highlight boxes come from worker
processes under CPU-time and memory limits, never from the caller's process; a page past the limits fails
with a clear reason, quickly, and is not tried again; thumbnails are drawn at thumbnail size."""

from __future__ import annotations

import io
import json
import os
import resource
from pathlib import Path
from types import SimpleNamespace

import pymupdf
import pytest
from PIL import Image

from madqa import page_drawer, render
from madqa.corpus import Corpus
from madqa.errors import PageLimitError, RenderError
from madqa.index import ingest
from madqa.page_drawer import DrawLimits
from madqa.render import render_highlighted, render_page
from madqa.settings import Settings
from madqa.types import PageRef, SearchStep
from tests.attacks import image_bomb_pdf
from tests.conftest import make_pdf


@pytest.fixture
def corpus(tmp_path, settings, registry) -> Corpus:
    """An ordinary report and the red team's image bomb: 8 pages of real text, each with a 20000² image."""
    root = tmp_path / "docs"
    make_pdf(root / "report.pdf", ["Revenue was 7.5 million euros in 2024.", "Headcount grew to 112."])
    image_bomb_pdf(root / "bomb.pdf", pages=8)
    report = ingest(root, settings, registry, ocr="never")
    assert report.failures == [] and report.pages == 10  # its text is searchable; only drawing it is refused
    return Corpus.open(root, settings.corpora_dir)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def drawer_limits(pid: int) -> dict[str, str]:
    """The soft limits of process ``pid`` as /proc shows them (name -> value)."""
    lines = Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]
    return {line[:26].strip(): line[26:47].strip() for line in lines}


def test_pages_are_drawn_in_another_process_under_limits(corpus, settings, monkeypatch):
    def never_here(*args, **kwargs):
        raise AssertionError("a page was drawn (or its words read) in the caller's process")

    monkeypatch.setattr(pymupdf.Page, "get_pixmap", never_here)
    monkeypatch.setattr(pymupdf.Page, "get_text", never_here)
    image = render_page(corpus, "report.pdf", 1, settings, budget_px=300_000)
    assert Image.open(io.BytesIO(image.data)).size == (image.width, image.height)
    marked, highlight = render_highlighted(corpus, "report.pdf", 1, settings, ["Revenue was 7.5 million"],
                                           ["7.5 million"], budget_px=300_000)
    assert {b.kind for b in highlight.boxes} == {"quote", "answer"} and marked.data != image.data
    drawers = [w for w in page_drawer.POOL._idle if w.alive()]
    assert drawers and all(w.process.pid != os.getpid() for w in drawers)
    limits = drawer_limits(drawers[-1].process.pid)
    assert limits["Max address space"] == str(settings.pdf_memory_mb * 2**20)
    assert limits["Max cpu time"] != "unlimited" and limits["Max core file size"] == "0"
    assert int(Path(f"/proc/{drawers[-1].process.pid}/stat").read_text().rsplit(")", 1)[1].split()[16]) > 0  # niced


def test_an_image_bomb_page_is_refused_before_drawing_and_remembered(corpus, settings, monkeypatch):
    with pytest.raises(PageLimitError) as refused:
        render_page(corpus, "bomb.pdf", 3, settings)
    assert str(refused.value) == ("page 3 of bomb.pdf could not be drawn within the limits: its images declare "
                                  "400 megapixels, more than 250 (MADQA_RENDER_MAX_IMAGE_MP; a decompression "
                                  "bomb?)")
    asked: list[tuple] = []
    real_ask = page_drawer._ask
    monkeypatch.setattr(page_drawer, "_ask", lambda *args: asked.append(args) or real_ask(*args))
    render._refused.clear()  # what this process remembers; the page cache remembers it too
    for budget in (None, 90_000, 2_400_000):  # the model's image, a thumbnail, the page viewer
        with pytest.raises(PageLimitError, match="page 3 of bomb.pdf could not be drawn within the limits"):
            render_page(corpus, "bomb.pdf", 3, settings, budget_px=budget)
    with pytest.raises(PageLimitError):
        render_highlighted(corpus, "bomb.pdf", 3, settings, ["capybara census"])
    assert asked == []
    assert render_page(corpus, "report.pdf", 2, settings).width > 0 and len(asked) == 1
    # other limits are another question: an operator who allows bigger images gets the page drawn
    roomy = Settings.from_env(env={}, home=settings.home, render_max_image_mp=2000)
    assert render_page(corpus, "bomb.pdf", 3, roomy, budget_px=90_000).width > 0


def test_a_page_past_the_cpu_limit_stops_its_drawer_not_the_caller(tmp_path):
    bomb = image_bomb_pdf(tmp_path / "heavy.pdf", pages=1, side=28_000, bits=16)  # ~7 s of CPU to draw here
    limits = DrawLimits(timeout_s=1, max_image_mp=10_000)
    before = cpu_seconds()
    with pytest.raises(PageLimitError) as stopped:
        page_drawer.draw(bomb, "heavy.pdf", 1, 90_000, "png", limits)
    assert str(stopped.value) == ("page 1 of heavy.pdf could not be drawn within the limits: it took more than 1 s "
                                  "of CPU, so it was stopped (MADQA_RENDER_TIMEOUT_S; a decompression bomb?)")
    assert cpu_seconds() - before < 1  # the drawing's CPU was spent elsewhere
    plain = make_pdf(tmp_path / "plain.pdf", ["an ordinary page"])
    assert page_drawer.draw(plain, "plain.pdf", 1, 90_000, "png", limits)[1] > 0  # a fresh drawer takes over


def test_a_page_past_the_memory_limit_is_refused(tmp_path):
    poster = pymupdf.open()
    poster.new_page(width=5000, height=5000).insert_text((72, 2500), "poster", fontsize=300)
    poster.save(tmp_path / "poster.pdf")
    with pytest.raises(PageLimitError, match=r"^page 1 of poster.pdf could not be drawn within the limits: it needs "
                                             r"more than 200 MB of memory, so it was stopped \(MADQA_PDF_MEMORY_MB"):
        page_drawer.draw(tmp_path / "poster.pdf", "poster.pdf", 1, 50_000_000, "png", DrawLimits(memory_mb=200))


def test_drawing_errors_name_the_file_never_the_server_path(tmp_path):
    broken = tmp_path / "secret-folder" / "broken.pdf"
    broken.parent.mkdir()
    broken.write_bytes(b"%PDF-1.4\nnot really")
    with pytest.raises(RenderError) as failed:
        page_drawer.draw(broken, "broken.pdf", 1, 90_000, "png", DrawLimits())
    assert "broken.pdf" in str(failed.value) and "secret-folder" not in str(failed.value)
    assert not isinstance(failed.value, PageLimitError)  # not remembered: not a question of limits


def test_thumbnails_are_drawn_at_thumbnail_size_and_a_bomb_page_gets_none(corpus, settings):
    from madqa.ui.ask_run import thumbnails
    from madqa.ui.pages import THUMB_BUDGET_PX

    ctx = SimpleNamespace(settings=settings, sessions=SimpleNamespace(corpus=lambda session, key: corpus))
    refs = (PageRef("report.pdf", 1), PageRef("bomb.pdf", 1), PageRef("report.pdf", 2))
    step = SearchStep(1, "capybara", "capybara", (), refs)
    shown = thumbnails(ctx, None, "mine", step)
    assert [ref for _, _, ref in shown] == [refs[0], refs[2]]
    for path, _, _ in shown:
        with Image.open(path) as thumb:
            width, height = thumb.size
        assert 0.9 * THUMB_BUDGET_PX < width * height <= THUMB_BUDGET_PX


def test_a_bomb_page_is_an_observation_for_the_model(corpus, registry, settings):
    from madqa.agent import Agent
    from madqa.settings import load_config
    from madqa.trace import Trace

    config = load_config("offline").with_overrides(backend="scripted")
    agent = Agent(corpus, config, registry, settings, {"script": [
        {"search": "capybara census"}, {"answer": ["7.5 million"], "citations": []}]})
    trace = Trace("How many capybaras?", config).consume(agent.run("How many capybaras?"))
    search = trace.searches[0]
    assert search.hits and all(h.file == "bomb.pdf" for h in search.hits) and search.new_pages == ()
    assert "could not be drawn within the limits: its images declare 400 megapixels" in search.error
    tool_result = json.dumps(agent.backend.calls[1]["messages"])
    assert "could not be shown: page" in tool_result and "MADQA_RENDER_MAX_IMAGE_MP" in tool_result
    assert trace.steps[-1].answer == ("7.5 million",)
