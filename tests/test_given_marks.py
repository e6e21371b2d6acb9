"""Highlights only of what a session was given (issue 39 item 2): a citation pick comes back from the browser,
and a raw client could send any quote through ``/gradio_api/queue/join``; each new one drew a 2.4 MP image on
disk. Now a pick whose marks this session's answers never handed out shows the plain page (one image per page,
shared), the record is capped per session, and the page-image folder is kept under its size and the
free-space floor."""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from madqa.settings import Settings
from madqa.types import AnswerStep, PageRef, Passage
from madqa.ui import pages
from madqa.ui.ask import show_page
from madqa.ui.given_marks import GivenMarks, give_answer_marks, mark_key
from madqa.ui.messages import answer_message, citation_marks, citation_value

TOKEN = "tok-" + "x" * 20


def answer(quote: str = "Revenue in 2024 was 7.5 million.") -> AnswerStep:
    return AnswerStep(iteration=1, answer=("7.5 million",), citations=(PageRef("report.pdf", 1),), quotes=(quote,))


def test_a_given_citation_round_trips_through_its_value_and_its_thumbnail() -> None:
    marks, step = GivenMarks(), answer("x" * 900)  # a long quote: the value cuts it, the key cuts it the same
    give_answer_marks(marks, {"token": TOKEN}, "demo", step)
    value = citation_value("demo", step.citations[0], step.quote_of(0), step.answer)
    assert marks.given(TOKEN, mark_key("demo", step.citations[0], *citation_marks(value)))
    quotes, answers = [step.quote_of(0) or ""], list(step.answer)  # what cited_pages keeps for the gallery
    assert marks.given(TOKEN, mark_key("demo", step.citations[0], quotes, answers))
    options = answer_message(step, "demo").get("options", [])
    assert options  # what the chat's chips send back
    for option in options:
        assert marks.given(TOKEN, mark_key("demo", PageRef("report.pdf", 1), *citation_marks(option["value"])))


def test_closest_passages_round_trip_and_others_are_not_given() -> None:
    marks = GivenMarks()
    lines = tuple(f"line {n} of the passage" for n in range(12))
    step = AnswerStep(iteration=1, answer=(), citations=(), closest_passages=(Passage("memo.pdf", 2, lines),))
    give_answer_marks(marks, {"token": TOKEN}, "demo", step)
    value = citation_value("demo", PageRef("memo.pdf", 2), lines=lines)
    assert marks.given(TOKEN, mark_key("demo", PageRef("memo.pdf", 2), *citation_marks(value)))
    forged = json.dumps({**json.loads(value), "lines": ["a quote never given"]})
    assert not marks.given(TOKEN, mark_key("demo", PageRef("memo.pdf", 2), *citation_marks(forged)))
    assert not marks.given("another-session", mark_key("demo", PageRef("memo.pdf", 2), *citation_marks(value)))
    assert not marks.given(None, mark_key("demo", PageRef("memo.pdf", 2), *citation_marks(value)))
    assert not marks.given(TOKEN, mark_key("other", PageRef("memo.pdf", 2), *citation_marks(value)))


def test_the_record_is_capped_per_session_and_in_sessions() -> None:
    marks = GivenMarks(per_session=3, sessions=2)
    for n in range(5):
        marks.give("a", f"k{n}")
    assert [marks.given("a", f"k{n}") for n in range(5)] == [False, False, True, True, True]
    marks.give("b", "k")
    marks.give("c", "k")
    assert not marks.given("a", "k4") and marks.given("b", "k") and marks.given("c", "k")
    marks.forget("c")
    assert not marks.given("c", "k")


@pytest.fixture
def viewer(tmp_path: Path, corpus, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:  # noqa: ANN001
    folder = tmp_path / "pages"
    folder.mkdir()
    monkeypatch.setattr(pages, "_folder", folder)
    ctx = SimpleNamespace(settings=settings, marks=GivenMarks(), corpus_or_error=lambda session, key: corpus)
    return SimpleNamespace(ctx=ctx, folder=folder)


def test_made_up_quotes_draw_the_plain_page_once(viewer: SimpleNamespace) -> None:
    ctx, ref = viewer.ctx, PageRef("report.pdf", 1)
    session = {"token": TOKEN}
    for n in range(30):
        path, caption = show_page(ctx, session, "demo", ref, ([f"made-up quote number {n}"], ["7.5"]))
        assert "Nothing is highlighted" in caption and "-hl" not in Path(path).name
    assert len([p for p in viewer.folder.iterdir() if not p.name.startswith(".")]) == 1
    give_answer_marks(ctx.marks, session, "demo", answer())
    path, caption = show_page(ctx, session, "demo", ref, (["Revenue in 2024 was 7.5 million."], ["7.5 million"]))
    assert "-hl" in Path(path).name and "marked in yellow" in caption
    assert len(list(viewer.folder.iterdir())) == 2
    path, caption = show_page(ctx, {"token": "someone-else"}, "demo", ref,
                              (["Revenue in 2024 was 7.5 million."], ["7.5 million"]))
    assert "-hl" not in Path(path).name  # another session's answer is not this one's to draw


def test_a_page_image_is_refused_when_the_disk_is_nearly_full(viewer: SimpleNamespace, settings: Settings,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages.shutil, "disk_usage", lambda path: SimpleNamespace(free=settings.min_free_mb * 2**20))
    with pytest.raises(OSError) as raised:
        pages.store(viewer.folder / "a.png", b"x" * 1000, settings)
    assert raised.value.errno == errno.ENOSPC and not list(viewer.folder.iterdir())


def test_the_folder_is_pruned_to_its_size_oldest_first(tmp_path: Path) -> None:
    now = time.time()
    for n in range(10):
        path = tmp_path / f"{n}.png"
        path.write_bytes(b"x" * 1000)
        os.utime(path, (now - 100 + n, now - 100 + n))
    removed = pages.prune(tmp_path, max_bytes=4000)
    assert removed == 7 and sorted(p.name for p in tmp_path.iterdir()) == ["7.png", "8.png", "9.png"]


def test_steer_downloads_keep_only_the_latest_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each steered row wrote one more ``madqa-steer-*`` folder, never deleted (the other event that writes files
    per call without a bound); now the latest few are kept, as Evaluate's and "You search"'s are."""
    import tempfile

    from madqa.ui import steer

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(steer, "_steer_folders", [])
    paths = [steer.write_rows([{"id": n}]) for n in range(30)]
    assert len(list(tmp_path.glob("madqa-steer-*"))) == 8
    assert Path(paths[-1]).read_text(encoding="utf-8") == '{"id": 29}\n'
