"""The command line as a new user meets it: bad numbers refused, folders made, summaries that name
what is wrong, a no-op re-index that changes nothing, aligned listings, and a clear line when the
wrong Python runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from madqa.cli import main
from tests.conftest import REPO, make_pdf


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MADQA_CONFIG", raising=False)
    return tmp_path / "home"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    make_pdf(tmp_path / "docs" / "a.pdf", ["The pump runs at 40 litres per minute.", "", "Filter type F-200."])
    make_pdf(tmp_path / "docs" / "b.pdf", ["Warranty: two years from delivery."])
    return tmp_path / "docs"


@pytest.mark.parametrize("argv", [["search", "--corpus", "D", "pump", "-k", "0"],
                                  ["search", "--corpus", "D", "pump", "-k", "-2"],
                                  ["search", "--corpus", "D", "pump", "-k", "five"],
                                  ["ask", "--corpus", "D", "q", "--top-k", "0"],
                                  ["render", "--corpus", "D", "a.pdf", "0", "-o", "x.png"]])
def test_nonsense_numbers_are_refused_before_anything_runs(argv, home, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "must be at least 1" in err or "whole number" in err
    assert not home.exists()  # nothing was indexed or written


def test_render_into_a_missing_folder_creates_it(home, docs, tmp_path, capsys):
    out = tmp_path / "new" / "deeper" / "page.png"
    assert main(["render", "--corpus", str(docs), "a.pdf", "1", "-o", str(out)]) == 0
    assert out.read_bytes().startswith(b"\x89PNG")
    assert main(["render", "--corpus", str(docs), "a.pdf", "1", "-o", str(tmp_path / "new")]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_index_summary_names_the_pages_with_no_text(home, docs, capsys):
    assert main(["index", str(docs), "--ocr", "never"]) == 0
    out = capsys.readouterr().out
    assert "with no text: 0, blank: 1" in out  # a.pdf p.2 is blank: nothing to OCR, not listed
    assert "pages with no text" not in out


def test_a_no_op_reindex_keeps_the_generation_and_a_change_makes_a_new_one(home, docs, capsys):
    def generations() -> list[str]:
        return sorted(p.name for p in home.glob("corpora/*/gen-*"))

    assert main(["index", str(docs)]) == 0
    first = generations()
    assert len(first) == 1
    assert main(["index", str(docs)]) == 0
    assert generations() == first
    assert "2 unchanged" in capsys.readouterr().out
    make_pdf(docs / "c.pdf", ["A third file."])
    assert main(["index", str(docs)]) == 0
    assert len(generations()) == 2 and first[0] in generations()
    (docs / "c.pdf").unlink()  # a removed file is a change too
    assert main(["index", str(docs)]) == 0
    out = capsys.readouterr().out
    assert "1 removed" in out
    assert main(["search", "--corpus", str(docs), "third"]) == 0
    assert "c.pdf" not in capsys.readouterr().out


def test_plugins_are_listed_in_aligned_columns(home, capsys):
    assert main(["plugins"]) == 0
    table, _, options = capsys.readouterr().out.partition("\n\n")  # the components, then each one's options
    lines = [line for line in table.splitlines() if line.strip()]
    assert "retriever whoosh options" in options and "* analyzer" in options
    header = lines[0]
    assert header.split() == ["KIND", "NAME", "PLUGIN", "WHAT"]
    starts = [header.index(col) for col in ("NAME", "PLUGIN", "WHAT")]
    for line in lines[1:]:
        for start in starts:  # every column starts where its header does, after a space
            assert line[start - 1] == " " and line[start] != " ", line


def test_configs_mark_the_default(home, monkeypatch, capsys):
    monkeypatch.setenv("MADQA_CONFIG", "gpt-4.1-mini")
    assert main(["configs"]) == 0
    out = capsys.readouterr().out
    marked = [line for line in out.splitlines() if line.startswith("* ")]
    assert len(marked) == 1 and marked[0].split()[1] == "gpt-4.1-mini"
    assert "MADQA_CONFIG=gpt-4.1-mini" in out


def test_python_without_madqas_packages_gets_one_clear_line():
    # -S: no site-packages, as a system python3 without the virtualenv would run it
    proc = subprocess.run([sys.executable, "-S", "-m", "madqa", "plugins"], capture_output=True, text=True,
                          cwd=REPO, timeout=60, env={**os.environ, "PYTHONPATH": ""})
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "lacks madqa's packages" in proc.stderr and "scripts/install" in proc.stderr


def test_install_waits_for_the_apt_lock_and_installs_the_madqa_command():
    script = (REPO / "scripts" / "install").read_text(encoding="utf-8")
    apt_lines = [line for line in script.splitlines() if "apt-get" in line and "command -v" not in line]
    assert apt_lines and all("DPkg::Lock::Timeout=" in line for line in apt_lines if " update" in line
                             or " install" in line)
    assert "-e ." in script


@pytest.mark.slow
def test_the_madqa_command_from_the_virtualenv_runs(home):
    exe = Path(sys.prefix) / "bin" / "madqa"
    if not exe.exists():  # CI's scripts/install makes it; a venv set up by hand may lack it
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "-e", str(REPO)], check=True,
                       timeout=300, capture_output=True)
    proc = subprocess.run([str(exe), "configs"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MADQA_HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    assert "offline" in proc.stdout
