"""``madqa dataset download`` end to end against a fake Hub and a fake document host on 127.0.0.1: the
gated questions, the document list, the PDFs through timeouts, 404s, 429s, cut bodies and a killed
process; then ``madqa run --dataset`` on what it wrote."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from madqa.cli import main
from madqa.collections import parse_spec
from madqa.evaluation.dataset import open_dataset
from madqa.evaluation.download import PAGE
from madqa.evaluation.fetch import retry_after
from tests.conftest import make_pdf
from tests.fake_hub import GOOD, NO_ACCESS, FakeDocHost, FakeHub
from tests.test_dataset import DEV, TEST, write_split

REPO_ROOT = Path(__file__).resolve().parents[1]
FAST = ["--timeout", "0.5", "--retry-delay", "0.05", "--retries", "3"]


def parquet(rows, schema=None) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), buf)
    return buf.getvalue()


def split_bytes(tmp_path: Path, rows) -> bytes:
    path = tmp_path / "split.parquet"
    write_split(path, rows)
    return path.read_bytes()


@pytest.fixture
def pdfs(tmp_path):
    """The two PDFs DEV cites, plus a third only listed; the lease is padded so it can trickle."""
    out = {}
    for name, pages in (("lab_manual.pdf", ["Lab manual. Safety first.", "Water boils at 100 degrees at sea level."]),
                        ("lease.pdf", ["Lease agreement signed by Ada Byron, tenant."]),
                        ("annex.pdf", ["An annex nobody asks about."])):
        out[name] = make_pdf(tmp_path / "src" / name, pages).read_bytes()
    out["lease.pdf"] += b"\n%" + b"padding " * 40_000 + b"\n"  # after %%EOF: still a valid PDF, ~320 KB
    return out


def hub_files(tmp_path, host_url, names) -> dict[str, bytes]:
    links = [{"document": n, "url": f"{host_url}/files/{n}"} for n in names]
    return {"data/dev-00000-of-00001.parquet": split_bytes(tmp_path, DEV),
            "data/test-00000-of-00001.parquet": split_bytes(tmp_path, TEST),
            "data/train-00000-of-00001.parquet": split_bytes(tmp_path, DEV),
            "data/documents/document_urls-00000-of-00001.parquet": parquet(links),
            "README.md": b"---\nlicense: cc-by-nc-4.0\n---\n"}


@pytest.fixture
def env(tmp_path, monkeypatch):
    """No real token, cache or endpoint reaches the fakes; MADQA_HOME is the test's."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_TOKEN", GOOD)
    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    # run --dataset loads the plugins, and the MiniLM one sets both offline switches for the process
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT", "HF_TOKEN_PATH"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def manifest(root: Path) -> dict:
    return json.loads((root / "pdfs" / "manifest.json").read_text())["documents"]


@pytest.mark.slow
def test_download_through_misbehaving_hosts_then_run(tmp_path, env, pdfs, capsys):
    behaviour = {"/files/lab_manual.pdf": "cut", "/files/lease.pdf": "429", "/files/annex.pdf": "timeout"}
    with FakeDocHost({f"/files/{n}": b for n, b in pdfs.items()}, behaviour, stall=1.0) as host, \
            FakeHub(hub_files(tmp_path, host.url, pdfs)) as hub:
        env.setenv("HF_ENDPOINT", hub.url)  # read at call time, after huggingface_hub was imported
        root = tmp_path / "MADQA"
        assert main(["dataset", "download", "--to", str(root), *FAST]) == 0
        err = capsys.readouterr().err
        assert "3 downloaded, 0 already there, 0 failed" in err and "4 files for dev, test, train" in err
        # a cut body resumes with Range; a 429 waits its Retry-After; a timeout is retried
        assert host.ranges("/files/lab_manual.pdf") == [None, f"bytes={len(pdfs['lab_manual.pdf']) // 2}-"]
        assert "resumed at" in err
        first, second = host.times["/files/lease.pdf"]
        assert second - first >= 0.9
        assert host.count["/files/annex.pdf"] == 2
        for name, body in pdfs.items():
            assert (root / "pdfs" / name).read_bytes() == body
            assert manifest(root)[name]["sha256"] == hashlib.sha256(body).hexdigest()
        assert not list(root.rglob("*.part"))

        # idempotent: nothing fetched again, and it says so
        served = len(host.requests)
        hub_gets = sum(1 for method, path, _ in hub.requests if method == "GET" and "/resolve/" in path)
        assert main(["dataset", "download", "--to", str(root), *FAST]) == 0
        assert "nothing to download: all 3 PDFs already in" in capsys.readouterr().err
        assert len(host.requests) == served
        assert sum(1 for m, p, _ in hub.requests if m == "GET" and "/resolve/" in p) == hub_gets

    # what it wrote is what run --dataset reads: the Hub's document list included
    data = open_dataset(root, "dev")
    assert data.docs_dir == root / "pdfs" and data.missing_documents == []
    served = parse_spec(f"madqa={root}")  # app.py --corpus madqa=PATH
    assert served.documents == root / "pdfs"
    assert served.question_files() == [root / "data" / "dev-00000-of-00001.parquet"]
    out = tmp_path / "dev.jsonl"
    assert main(["run", "--dataset", str(root), "--split", "dev", "-o", str(out)]) == 0
    assert "indexed 3 files" in capsys.readouterr().err
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["d1", "d2"]


def test_every_failure_is_reported_and_a_rerun_fetches_only_those(tmp_path, env, pdfs, capsys):
    names = [*pdfs, "gone.pdf", "login.pdf", "broken.pdf", "../escape.pdf", "notes.txt"]
    docs = {f"/files/{n}": pdfs.get(n, pdfs["annex.pdf"]) for n in names}
    behaviour = {"/files/gone.pdf": "404", "/files/login.pdf": "html", "/files/broken.pdf": "500-always"}
    with FakeDocHost(docs, behaviour) as host, FakeHub(hub_files(tmp_path, host.url, names)) as hub:
        env.setenv("HF_ENDPOINT", hub.url)
        root = tmp_path / "MADQA"
        assert main(["dataset", "download", "--to", str(root), *FAST[:-1], "1"]) == 1
        err = capsys.readouterr().err
        assert "3 downloaded, 0 already there, 5 failed" in err
        assert "failed: gone.pdf: HTTP 404" in err
        assert "failed: login.pdf: the server sent something that is not a PDF" in err
        assert "failed: broken.pdf: HTTP 500" in err and "gave up after 2 attempts" in err
        assert "failed: ../escape.pdf: unsafe file name" in err and "notes.txt' does not end in .pdf" in err
        assert "run the same command again" in err
        assert not (tmp_path / "escape.pdf").exists() and not (root / "escape.pdf").exists()
        assert sorted(p.name for p in (root / "pdfs").iterdir()) == ["annex.pdf", "lab_manual.pdf", "lease.pdf",
                                                                      "manifest.json"]
        assert host.count["/files/broken.pdf"] == 2
        # run --dataset warns about the ones still missing
        data = open_dataset(root, "dev")
        assert set(data.missing_documents) >= {"gone.pdf", "login.pdf", "broken.pdf"}

        host.behaviour.clear()
        before = dict(host.count)
        assert main(["dataset", "download", "--to", str(root), *FAST]) == 1  # the two bad names stay refused
        err = capsys.readouterr().err
        assert "3 downloaded, 3 already there, 2 failed" in err
        fetched_again = {p for p, n in host.count.items() if n > before.get(p, 0)}
        assert fetched_again == {"/files/gone.pdf", "/files/login.pdf", "/files/broken.pdf"}


@pytest.mark.parametrize(("token", "said"), [
    (None, "no Hugging Face token was found"),
    (NO_ACCESS, "the token has no access to OxRML/MADQA"),
    ("hf_typo", "rejected the token"),
])
def test_a_gated_refusal_says_what_to_do(tmp_path, env, pdfs, capsys, token, said):
    with FakeDocHost({}) as host, FakeHub(hub_files(tmp_path, host.url, pdfs)) as hub:
        env.setenv("HF_ENDPOINT", hub.url)
        if token is None:
            env.delenv("HF_TOKEN")
        else:
            env.setenv("HF_TOKEN", token)
        root = tmp_path / "fresh"  # hf_hub_download would quietly return a file already there
        assert main(["dataset", "download", "--to", str(root), *FAST]) == 2
        err = capsys.readouterr().err
        assert said in err and PAGE in err and "Traceback" not in err
        assert not host.requests and not (root / "pdfs").exists()


def test_split_and_no_pdfs_fetch_only_the_questions_asked_for(tmp_path, env, pdfs, capsys):
    with FakeDocHost({}) as host, FakeHub(hub_files(tmp_path, host.url, pdfs)) as hub:
        env.setenv("HF_ENDPOINT", hub.url)
        root = tmp_path / "MADQA"
        assert main(["dataset", "download", "--to", str(root), "--split", "dev", "--no-pdfs"]) == 0
        assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.parquet")) == [
            "data/dev-00000-of-00001.parquet", "data/documents/document_urls-00000-of-00001.parquet"]
        assert not host.requests
    with pytest.raises(SystemExit):
        main(["dataset", "download", "--timeout", "0"])
    assert "more than 0" in capsys.readouterr().err


@pytest.mark.slow
def test_a_killed_download_resumes_with_the_right_checksum(tmp_path, env, pdfs, capsys):
    lease = "/files/lease.pdf"
    with FakeDocHost({f"/files/{n}": b for n, b in pdfs.items()}, {lease: "trickle"}) as host, \
            FakeHub(hub_files(tmp_path, host.url, pdfs)) as hub:
        host.trickle_size, host.trickle_pause = 8192, 0.1
        env.setenv("HF_ENDPOINT", hub.url)
        root = tmp_path / "MADQA"
        child_env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        proc = subprocess.Popen([sys.executable, "-m", "madqa", "dataset", "download", "--to", str(root), *FAST],
                                cwd=REPO_ROOT, env=child_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        part = root / "pdfs" / "lease.pdf.part"
        deadline = time.monotonic() + 30
        while not (part.exists() and part.stat().st_size >= 16384) and time.monotonic() < deadline \
                and proc.poll() is None:
            time.sleep(0.02)
        alive = proc.poll() is None
        proc.kill()
        proc.wait(timeout=10)
        said = proc.stderr.read().decode()
        proc.stderr.close()
        assert alive and part.exists(), said
        kept = part.stat().st_size
        assert 0 < kept < len(pdfs["lease.pdf"]) and not (root / "pdfs" / "lease.pdf").exists()
        host.behaviour.clear()
        assert main(["dataset", "download", "--to", str(root), *FAST]) == 0
        assert host.ranges(lease)[-1] == f"bytes={kept}-"
        assert f"resumed at {kept:,}" in capsys.readouterr().err
        body = (root / "pdfs" / "lease.pdf").read_bytes()
        assert body == pdfs["lease.pdf"]
        assert manifest(root)["lease.pdf"]["sha256"] == hashlib.sha256(body).hexdigest()


def test_a_server_that_ignores_range_gets_a_fresh_start(tmp_path, env, pdfs, capsys):
    with FakeDocHost({f"/files/{n}": b for n, b in pdfs.items()}, {"/files/lease.pdf": "ignore-range"}) as host, \
            FakeHub(hub_files(tmp_path, host.url, pdfs)) as hub:
        env.setenv("HF_ENDPOINT", hub.url)
        root = tmp_path / "MADQA"
        assert main(["dataset", "download", "--to", str(root), *FAST]) == 0
        assert host.ranges("/files/lease.pdf")[1] is not None  # it asked to resume; the server sent it all
        assert (root / "pdfs" / "lease.pdf").read_bytes() == pdfs["lease.pdf"]


def test_retry_after_reads_seconds_and_dates():
    assert retry_after("3") == 3.0 and retry_after(None) is None and retry_after("soon") is None
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


def test_offline_mode_says_which_switch_to_unset(tmp_path, env, capsys):
    import huggingface_hub.constants

    env.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # as if set before huggingface_hub's import
    env.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    assert main(["dataset", "download", "--to", str(tmp_path / "MADQA")]) == 2
    assert "offline mode (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE" in capsys.readouterr().err
