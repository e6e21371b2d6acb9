"""Ingesting folders of real PDFs: summaries, OCR, bad files, incremental runs, atomic swaps."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pymupdf
import pytest

from madqa.corpus import Corpus
from madqa.index import ingest
from tests.conftest import REPO, make_pdf, make_scanned_pdf

HAS_TESSERACT = shutil.which("tesseract") is not None


def _search(corpus, registry, q, k=5):
    return registry.create("retriever", "whoosh", corpus, {}).search(q, k)


def test_ingest_reports_and_searches(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "report.pdf", ["Annual revenue grew to 4.2 million euros.", "Headcount: 57 employees."])
    make_pdf(root / "sub" / "memo.pdf", ["Memo from Alice Smith about the budget."])
    make_pdf(root / "blank.pdf", [""])
    report = ingest(root, settings, registry, ocr="never")
    assert (report.files, report.pages, report.added, report.empty_pages, report.failures) == (3, 4, 3, 0, [])
    assert report.blank_pages == 1 and report.pages_without_text == []  # blank: nothing for OCR to find
    corpus = Corpus.open(root, settings.corpora_dir)
    assert set(corpus.documents) == {"report.pdf", "sub/memo.pdf", "blank.pdf"}
    doc = corpus.document("report.pdf")
    assert doc.pages == 2 and len(doc.sha256) == 64 and doc.sources == {"text": 2}
    assert corpus.document("blank.pdf").sources == {"blank": 1}
    hits = _search(corpus, registry, "employees").hits
    assert [(h.file, h.page) for h in hits] == [("report.pdf", 2)]
    assert "57 employees" in hits[0].snippet
    assert str(settings.home) in str(corpus.state_dir)  # state under MADQA_HOME, not the corpus folder
    assert not any(p.name.startswith("gen-") for p in root.rglob("*"))


def test_incremental_run_skips_adds_drops_and_updates(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", ["alpha apples"])
    make_pdf(root / "b.pdf", ["bravo bananas"])
    first = ingest(root, settings, registry, ocr="never")
    assert first.added == 2
    (root / "b.pdf").unlink()
    make_pdf(root / "c.pdf", ["charlie cherries"])
    make_pdf(root / "a.pdf", ["alpha avocados"])  # changed content
    second = ingest(root, settings, registry, ocr="never")
    assert (second.unchanged, second.added, second.updated, second.removed) == (0, 1, 1, 1)
    corpus = Corpus.open(root, settings.corpora_dir)
    assert set(corpus.documents) == {"a.pdf", "c.pdf"}
    assert _search(corpus, registry, "bananas").hits == ()
    assert _search(corpus, registry, "apples").hits == ()
    assert [h.file for h in _search(corpus, registry, "avocados").hits] == ["a.pdf"]
    third = ingest(root, settings, registry, ocr="never")
    assert (third.unchanged, third.added, third.updated, third.removed) == (2, 0, 0, 0)
    assert [h.file for h in _search(Corpus.open(root, settings.corpora_dir), registry, "cherries").hits] == ["c.pdf"]


def _bad_files(root: Path) -> dict[str, str]:
    """Write every kind of bad file; returns name -> the reason we expect to be reported."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "empty.pdf").write_bytes(b"")
    (root / "notes.pdf").write_text("just some text, not a PDF", encoding="utf-8")
    good = make_pdf(root / "tmp-source.pdf", ["truncated content here"]).read_bytes()
    (root / "tmp-source.pdf").unlink()
    (root / "truncated.pdf").write_bytes(good[: len(good) // 3])
    (root / "garbage.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 20)
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret plans")
    doc.save(root / "locked.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="pw", owner_pw="pw")
    return {"empty.pdf": "empty file", "notes.pdf": "not a PDF", "locked.pdf": "encrypted"}


def test_bad_files_are_reported_and_the_rest_indexed(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "good.pdf", ["the good document about zebras"])
    first = ingest(root, settings, registry, ocr="never")
    assert first.failures == []
    expected = _bad_files(root)
    make_pdf(root / "x" / "same.pdf", ["first same-name file"])
    make_pdf(root / "y" / "same.pdf", ["second same-name file"])
    make_pdf(root / "odd names" / "Ünïcödé résumé (1) #2.pdf", ["unicode named file about llamas"])
    report = ingest(root, settings, registry, ocr="never")
    reasons = dict(report.failures)
    for name, reason in expected.items():
        assert reason in reasons[name], (name, reasons)
    # a truncated or garbage PDF is either repaired by MuPDF or reported; never a crash
    for name in ("truncated.pdf", "garbage.pdf"):
        assert name in reasons or name in Corpus.open(root, settings.corpora_dir).documents
    corpus = Corpus.open(root, settings.corpora_dir)
    assert {"good.pdf", "x/same.pdf", "y/same.pdf", "odd names/Ünïcödé résumé (1) #2.pdf"} <= set(corpus.documents)
    assert any("same name" in m for f, m in report.warnings if f == "x/same.pdf")
    assert [h.file for h in _search(corpus, registry, "zebras").hits] == ["good.pdf"]
    assert [h.file for h in _search(corpus, registry, "llamas").hits] == ["odd names/Ünïcödé résumé (1) #2.pdf"]


def test_cli_exit_status_and_summary(tmp_path):
    root = tmp_path / "docs"
    make_pdf(root / "ok.pdf", ["fine"])
    (root / "bad.pdf").write_bytes(b"")
    env = {**os.environ, "MADQA_HOME": str(tmp_path / "home")}
    proc = subprocess.run([sys.executable, "-W", "error", "-m", "madqa", "index", str(root), "--ocr", "never"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "indexed 1 files, 1 pages" in proc.stdout
    assert "failed: bad.pdf: empty file (0 bytes)" in proc.stderr
    assert "Traceback" not in proc.stderr
    missing = subprocess.run([sys.executable, "-m", "madqa", "index", str(tmp_path / "nope")],
                             capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert missing.returncode == 2 and "does not exist" in missing.stderr


@pytest.mark.skipif(not HAS_TESSERACT, reason="tesseract-ocr is not installed")
def test_scanned_pages_are_ocrd_in_auto_mode_only(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_scanned_pdf(root / "scan.pdf", "Certificate of Registration\nRegistration number: 4471\nIssued to Quentin Blake")
    make_pdf(root / "typed.pdf", ["typed page about invoices"])
    never = ingest(root, settings, registry, ocr="never")
    assert never.ocr_pages == 0 and never.empty_pages == 1
    auto = ingest(root, settings, registry, ocr="auto")  # options changed: everything is re-read
    assert (auto.ocr_pages, auto.empty_pages, auto.updated) == (1, 0, 2)
    corpus = Corpus.open(root, settings.corpora_dir)
    assert corpus.document("scan.pdf").sources == {"ocr": 1}
    assert corpus.document("typed.pdf").sources == {"text": 1}
    assert [h.file for h in _search(corpus, registry, "registration").hits] == ["scan.pdf"]


def test_imported_ocr_jsonl(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "1007969.pdf", ["layer text one", "layer text two"])
    dump = tmp_path / "ocr.jsonl"
    rows = [{"file": "1007969.pdf", "page_number": 2, "total_pages": 2, "text": "imported walrus text"},
            {"file": "missing.pdf", "page_number": 1, "total_pages": 1, "text": "orphan"}]
    dump.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    report = ingest(root, settings, registry, ocr="never", ocr_jsonl=dump)
    assert report.imported_pages == 1
    assert any("1 OCR records name no page" in m for _, m in report.warnings)
    corpus = Corpus.open(root, settings.corpora_dir)
    assert corpus.document("1007969.pdf").sources == {"text": 1, "imported": 1}
    assert [(h.file, h.page) for h in _search(corpus, registry, "walrus").hits] == [("1007969.pdf", 2)]
    dump.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(Exception, match="line 1"):
        ingest(root, settings, registry, ocr_jsonl=dump)


def test_killed_index_leaves_previous_index_usable(tmp_path, settings, registry):
    root = tmp_path / "docs"
    for n in range(60):
        make_pdf(root / f"doc{n:03}.pdf", [f"document {n} about walruses and topic{n}"] * 3)
    ingest(root, settings, registry, ocr="never")
    before = Corpus.open(root, settings.corpora_dir).generation
    for n in range(60, 400):
        make_pdf(root / f"doc{n:03}.pdf", [f"document {n} about narwhals and topic{n}"] * 3)
    env = {**os.environ, "MADQA_HOME": str(settings.home)}
    outcomes = []
    for delay in (0.3, 0.6, 0.9, 1.2, 1.5):
        proc = subprocess.Popen([sys.executable, "-m", "madqa", "index", str(root), "--ocr", "never"],
                                env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        # whatever the moment of the kill, the current generation is whole: the old one or the new one
        corpus = Corpus.open(root, settings.corpora_dir)
        narwhals = len(_search(corpus, registry, "narwhals", k=2000).hits)
        assert len(_search(corpus, registry, "walruses", k=500).hits) == 180
        if corpus.generation == before:
            assert narwhals == 0 and len(corpus.documents) == 60
        else:
            assert narwhals == 340 * 3 and len(corpus.documents) == 400
            break
        outcomes.append(delay)
    assert outcomes, "no kill landed before the run finished; the test proved nothing"
    report = ingest(root, settings, registry, ocr="never")
    assert report.files == 400 and report.failures == []
    corpus = Corpus.open(root, settings.corpora_dir)
    assert len(_search(corpus, registry, "narwhals", k=2000).hits) == 340 * 3
    leftovers = [p.name for p in corpus.state_dir.iterdir() if p.name.startswith("tmp-")]
    assert leftovers == []


def test_page_sources_without_texts(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", ["some text here", "", ""])
    with pymupdf.open(root / "a.pdf") as doc:  # page 3: a drawing and no text, which OCR might read
        doc[2].draw_rect(pymupdf.Rect(100, 100, 300, 200), color=(0, 0, 0))
        doc.saveIncr()
    report = ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    assert corpus.page_sources() == {("a.pdf", 1): "text", ("a.pdf", 2): "blank", ("a.pdf", 3): "none"}
    assert corpus.page_source("a.pdf", 3) == "none" and corpus.page_source("a.pdf", 4) is None
    assert report.pages_without_text == [("a.pdf", 3)] and (report.empty_pages, report.blank_pages) == (1, 1)


def test_imported_ocr_by_bare_name_skips_names_shared_by_several_files(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "x" / "same.pdf", ["layer x"])
    make_pdf(root / "y" / "same.pdf", ["layer y"])
    make_pdf(root / "z" / "unique.pdf", ["layer z"])
    dump = tmp_path / "ocr.jsonl"
    dump.write_text("\n".join(json.dumps({"file": f, "page_number": 1, "total_pages": 1, "text": t}) for f, t in
                              (("same.pdf", "ambiguous okapi"), ("unique.pdf", "imported quokka"))), encoding="utf-8")
    report = ingest(root, settings, registry, ocr="never", ocr_jsonl=dump)
    corpus = Corpus.open(root, settings.corpora_dir)
    assert corpus.page_source("z/unique.pdf", 1) == "imported"
    assert corpus.page_source("x/same.pdf", 1) == corpus.page_source("y/same.pdf", 1) == "text"
    assert _search(corpus, registry, "okapi").hits == ()
    assert any("1 OCR records name no page" in m for _, m in report.warnings)


# A child indexer is only forked from a process with no other thread (forking a threaded process
# can deadlock), and the test process has threads by now: the child path runs in a fresh process.
_CHILD_INGEST = """
import sys
from pathlib import Path
from madqa import indexers
from madqa.index import ingest
from madqa.plugins import collect, get_plugin_manager
from madqa.settings import Settings
indexers.STREAM_MIN_FILES = 0
indexers._cpus = lambda: 2
if sys.argv[3] == "broken":
    from madqa_plugins.whoosh.whoosh_bm25 import WhooshRetriever
    def broken(folder, previous, added, removed, host):
        next(iter(added))
        raise ValueError("disk on fire")
    WhooshRetriever.update_index = staticmethod(broken)
assert indexers.can_stream(1), "the fresh process should index in a child"
ingest(Path(sys.argv[1]), Settings.from_env(env={}, home=Path(sys.argv[2])), collect(get_plugin_manager()), ocr="never")
"""


def _ingest_with_child(root, home, mode="ok"):
    return subprocess.run([sys.executable, "-c", _CHILD_INGEST, str(root), str(home), mode], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_indexing_in_a_child_process_gives_the_same_index(tmp_path, registry, monkeypatch):
    """Large ingests index in a forked child while reading; the result equals indexing in-process."""
    from madqa import indexers
    from madqa.settings import Settings

    root = tmp_path / "docs"
    for n in range(6):
        make_pdf(root / f"d{n}.pdf", [f"page one of {n} with walruses", f"narwhals page {n} reports"])
    monkeypatch.setattr(indexers, "STREAM_MIN_FILES", 10**9)
    ingest(root, Settings.from_env(env={}, home=tmp_path / "inline"), registry, ocr="never")
    proc = _ingest_with_child(root, tmp_path / "child")
    assert proc.returncode == 0, proc.stderr
    found = {}
    for mode in ("inline", "child"):
        corpus = Corpus.open(root, Settings.from_env(env={}, home=tmp_path / mode).corpora_dir)
        found[mode] = [[(h.file, h.page, round(h.score, 6)) for h in _search(corpus, registry, q, k=20).hits]
                       for q in ("walruses", "narwhals report", '"page one"', "zzz")]
    assert found["inline"] == found["child"] and found["child"][0]


def test_a_failing_child_indexer_is_reported(tmp_path):
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", ["some text"])
    proc = _ingest_with_child(root, tmp_path / "home", "broken")
    assert proc.returncode != 0 and "disk on fire" in proc.stderr and "PluginError" in proc.stderr


def test_a_generation_still_read_survives_later_ingests(tmp_path, settings, registry):
    """A long question reads generation 1 while its session uploads twice: gen 1 stays until closed."""
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", ["the first version mentions walruses"])
    ingest(root, settings, registry, ocr="never")
    reader = Corpus.open(root, settings.corpora_dir)
    for n in (2, 3):
        make_pdf(root / f"b{n}.pdf", [f"upload {n}"])
        ingest(root, settings, registry, ocr="never")
    assert reader.gen_dir.is_dir() and "walruses" in reader.page_text("a.pdf", 1)
    assert _search(reader, registry, "walruses").hits  # its index too
    reader.close()
    make_pdf(root / "b4.pdf", ["upload 4"])
    ingest(root, settings, registry, ocr="never")
    assert not reader.gen_dir.exists()  # nobody reads it any more: removed
    generations = [p for p in reader.state_dir.iterdir() if p.name.startswith("gen-")]
    assert len(generations) == 2


def test_a_retriever_without_a_previous_index_gets_every_page(tmp_path, settings, registry):
    """A retriever that had no index in the previous generation (installed later, or its folder lost)
    is given every page at the next ingest, not only the added ones."""
    import shutil

    root = tmp_path / "docs"
    make_pdf(root / "old.pdf", ["the walrus census of the northern colony"])
    ingest(root, settings, registry, ocr="never")
    first = Corpus.open(root, settings.corpora_dir)
    shutil.rmtree(first.retriever_dir("whoosh"))  # as if whoosh came after this generation was written
    first.close()
    make_pdf(root / "new.pdf", ["the narwhal count"])
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    assert [h.file for h in _search(corpus, registry, "walrus").hits] == ["old.pdf"]
    assert [h.file for h in _search(corpus, registry, "narwhal").hits] == ["new.pdf"]


def test_a_retriever_whose_name_needs_cleaning_finds_the_index_ingest_wrote(tmp_path, settings):
    """Ingest writes each index where Corpus.retriever_dir looks for it, whatever the plugin's name."""
    from madqa.plugins import collect, get_plugin_manager

    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "spaced.py").write_text('''
import madqa

class Spaced:
    def __init__(self, host, options):
        self.folder = host.corpus.retriever_dir("my bm25")

    def search(self, query, k=5):
        return madqa.SearchResult((), query, (self.folder / "marker").read_text())

    @staticmethod
    def update_index(folder, previous, added, removed, host):
        folder.mkdir(parents=True)
        (folder / "marker").write_text(f"{len(list(added))} pages")

@madqa.hookimpl
def register_retrievers(register):
    register("my bm25", Spaced, "a name with a space", takes_host=True)
''', encoding="utf-8")
    registry = collect(get_plugin_manager(plugins))
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", ["one", "two"])
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    assert registry.create("retriever", "my bm25", corpus, {}).search("x").note == "2 pages"


def test_whoosh_and_tantivy_share_one_analysis_per_page(tmp_path, registry, monkeypatch):
    """Both BM25 indexes name madqa_plugins.text.text_analysis.index_text: an ingest analyzes each page once for
    both, and indexes exactly what each analyzing its own pages indexes."""
    from madqa import indexers
    from madqa.settings import Settings
    from madqa_plugins.text import text_analysis

    calls = []
    analyze = text_analysis.Analysis.analyze

    def counted(self, text):
        calls.append(text)
        return analyze(self, text)

    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", ["C++ and image/png on page one", "the -v option, version 2.0"])
    make_pdf(root / "b.pdf", ["gnuplot's docu-\nment of max_steps", ""])
    monkeypatch.setattr(text_analysis.Analysis, "analyze", counted)
    ingest(root, Settings.from_env(env={}, home=tmp_path / "shared"), registry, ocr="never",
           retrievers=["whoosh", "tantivy"])
    assert len(calls) == 4  # one per page, not one per page and index
    monkeypatch.setattr(indexers, "shared_analysis", lambda factories: None)
    calls.clear()
    ingest(root, Settings.from_env(env={}, home=tmp_path / "apart"), registry, ocr="never",
           retrievers=["whoosh", "tantivy"])
    assert len(calls) == 8
    monkeypatch.setattr(text_analysis.Analysis, "analyze", analyze)
    for name in ("whoosh", "tantivy"):
        found = {}
        for mode in ("shared", "apart"):
            corpus = Corpus.open(root, Settings.from_env(env={}, home=tmp_path / mode).corpora_dir)
            retriever = registry.create("retriever", name, corpus, {})
            found[mode] = [[(h.file, h.page, round(h.score, 6)) for h in retriever.search(q, 10).hits]
                           for q in ("C++", "image/png", "-v", "2.0", "gnuplot document", '"max_steps"', "page")]
        assert found["shared"] == found["apart"] and all(found["shared"][:5]), name


def test_an_analysis_is_shared_only_when_the_indexes_name_the_same_one():
    from madqa.indexers import shared_analysis

    class A:
        index_analysis = staticmethod(str.lower)

    class B:
        index_analysis = staticmethod(str.upper)

    class Plain:
        pass

    assert shared_analysis([A, A, Plain]) is str.lower
    assert shared_analysis([A, Plain]) is None  # one index alone gains nothing from it
    assert shared_analysis([A, B]) is None
