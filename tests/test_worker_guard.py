"""Workers end with the app however it dies (madqa.worker_guard): a reader OCR-ing a page when its parent is
killed with SIGKILL is gone within seconds (before, it went on for its whole CPU budget: MuPDF holds the GIL
while it OCRs, so only the kernel's parent-death signal reaches it mid-page), and a worker started from a
thread that then ends is not taken for an orphan."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pymupdf
import pytest

from madqa import page_drawer, pdf_reader
from madqa.worker_guard import spawn

REPO = Path(__file__).resolve().parent.parent


def noise_pdf(path: Path) -> Path:
    """A one-page scan of noise: no text layer, and OCR of it takes tens of CPU seconds."""
    from PIL import Image
    image = Image.effect_noise((1200, 1600), 120).convert("L")
    data = io.BytesIO()
    image.save(data, "PNG")
    doc = pymupdf.open()
    page = doc.new_page(width=600, height=800)
    page.insert_image(page.rect, stream=data.getvalue())
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path)
    return path


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_reader_ocr_ing_when_its_app_is_killed_ends_within_seconds(tmp_path: Path) -> None:
    noise_pdf(tmp_path / "docs" / "noise.pdf")
    script = tmp_path / "app.py"
    script.write_text(
        "import threading, time\n"
        "from madqa.index import ingest\nfrom madqa.plugins import collect, get_plugin_manager\n"
        "from madqa.settings import Settings\n"
        f"settings = Settings.from_env(env={{'MADQA_PDF_TIMEOUT_S': '120'}}, home={str(tmp_path / 'home')!r})\n"
        "threading.Thread(target=ingest, daemon=True, args=("
        f"{str(tmp_path / 'docs')!r}, settings, collect(get_plugin_manager(entry_points=False))),"
        " kwargs={'ocr': 'auto'}).start()\n"
        "time.sleep(600)\n", encoding="utf-8")
    app = subprocess.Popen([sys.executable, str(script)], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = None
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # a reader busy with the page: more than a CPU second into it
            busy = [w for w in children(app.pid) if alive(w) and cpu_s(w) > 1.5]
            if busy:
                worker = busy[0]
                break
            time.sleep(0.2)
        assert worker is not None, "no reader got busy with the page"
        os.kill(app.pid, signal.SIGKILL)
        app.wait(10)
        killed = time.monotonic()
        while alive(worker) and time.monotonic() - killed < 10:
            time.sleep(0.1)
        gone_after = time.monotonic() - killed
        assert not alive(worker), "the reader outlived its app by 10 s"
        assert gone_after < 3, gone_after
    finally:
        app.kill()
        app.wait(10)
        if worker is not None and alive(worker):
            os.kill(worker, signal.SIGKILL)


def test_a_worker_started_from_an_ended_thread_lives_on() -> None:
    """PR_SET_PDEATHSIG fires when the thread that started the worker ends: ``spawn`` starts every worker on
    one thread that lives as long as the process, so a web request's thread ending kills no pooled worker."""
    started: list[subprocess.Popen[bytes]] = []
    code = ("import os, sys, time; from madqa.worker_guard import guard_parent; guard_parent(int(sys.argv[1])); "
            "time.sleep(30)")
    thread = threading.Thread(target=lambda: started.append(
        spawn([sys.executable, "-c", code, str(os.getpid())], env={**os.environ, "PYTHONPATH": str(REPO)})))
    thread.start()
    thread.join()
    try:
        time.sleep(1.5)  # the starting thread is gone; the watchdog polled at least twice
        assert started[0].poll() is None
    finally:
        started[0].kill()
        started[0].wait(10)


def test_a_worker_whose_parent_is_already_gone_ends_at_once() -> None:
    code = "import sys, time; from madqa.worker_guard import guard_parent; guard_parent(1); time.sleep(30)"
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=20)
    assert done.returncode == 0


def test_readers_and_drawers_start_guarded() -> None:
    assert "guard_parent" in pdf_reader.WORKER_CODE
    assert page_drawer._Worker is pdf_reader._Worker  # the drawers are the same kind of worker
