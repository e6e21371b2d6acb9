"""Ingest a folder of PDFs into a new corpus generation, incrementally, and swap it in atomically."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import shutil
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymupdf

from madqa.corpus import (
    MANIFEST,
    PAGES_DB,
    Corpus,
    DocumentRecord,
    in_use,
    read_current,
    state_dir_for,
    write_current,
)
from madqa.errors import CorpusError
from madqa.indexers import IndexFeed, IndexProgress, index_names, rebuild_indexes
from madqa.ingest_files import PageProgress, Progress, document_reads, imported_for, store_files
from madqa.ingest_limits import IngestClock, PageLimits, clocked, read_limits, within_limits
from madqa.ingest_plan import FilePlan, defer_reads, nothing_changed, plan_files, reusable_files, sha256_file
from madqa.ingest_report import IngestReport
from madqa.languages import DEFAULT as DEFAULT_LANGUAGE
from madqa.languages import language_named, language_record, stored_language, tesseract_language
from madqa.ocr import find_tessdata
from madqa.page_readers import page_texts
from madqa.pdf_reader import DocumentReader
from madqa.plugins import Registry
from madqa.repair import check_generation
from madqa.settings import Settings

pymupdf.TOOLS.mupdf_display_errors(False)  # MuPDF's own stderr chatter; we report per file instead

EMPTY_LISTED = 20  # pages with no text named in a report (the count covers them all)


def find_pdfs(root: Path) -> list[Path]:
    """Every ``*.pdf`` under ``root`` (any case), recursively, skipping hidden entries and links out."""
    found = []
    real_root = os.path.realpath(root)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith(".") or not name.lower().endswith(".pdf"):
                continue
            path = Path(dirpath) / name
            if os.path.commonpath([real_root, os.path.realpath(path)]) != real_root:
                continue  # a symlink pointing outside the corpus folder is never followed
            found.append(path)
    return found


def load_ocr_jsonl(path: Path) -> dict[tuple[str, int], str]:
    """Page texts from a MADQA-format OCR dump: one JSON object per page (file, page_number, text)."""
    texts: dict[tuple[str, int], str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"cannot read OCR file {path}: {exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            key = (str(row["file"]), int(row["page_number"]))
            text = row.get("text") or ""
        except (ValueError, KeyError, TypeError) as exc:
            raise CorpusError(f"{path}: line {number} is not a page record ({exc})") from exc
        texts[key] = str(text)
    return texts


def ingest(
    root: str | Path,
    settings: Settings,
    registry: Registry,
    *,
    ocr: str | None = None,
    ocr_jsonl: str | Path | None = None,
    progress: Progress | None = None,
    rebuild: str | None = None,
    executor: Any = None,
    retrievers: list[str] | None = None,
    index_progress: IndexProgress | None = None,
    page_progress: PageProgress | None = None,
    corpora_dir: Path | None = None,
    page_limits: PageLimits | None = None,
    timeout_s: float | None = None,
    timeout_words: str = "an ingest may take",
    language: str | None = None,
    read_at_most: int | None = None,
) -> IngestReport:
    """Ingest every PDF under ``root`` into a new generation and make it current.

    Unchanged files (same content hash and options) are reused from the previous generation, unless
    it is damaged (checked first; ``rebuild`` says why it is known to be): then every file is read
    again. Failures are reported per file. With an ``executor`` (``madqa.cluster``) the files are read
    on its workers, with the same reader and limits; this process alone writes and swaps the
    generation. ``retrievers`` names the indexes to write (default: ``settings.index_retrievers``, else
    every BM25 one; ``dense`` only when named); ``index_progress(retriever, done, total, detail)`` hears
    the slow ones (embedding: pages, windows/s, time left); ``page_progress(file, page, pages, source)``
    hears each page as it is read (an OCR of a long scan, page by page). ``corpora_dir`` is where the corpus's
    state lives (default: ``settings.corpora_dir``; the web app keeps a session's under its upload folder).
    ``page_limits`` fail files with too many pages (``PageLimits``). Past ``timeout_s`` the ingest stops
    with IngestStopped (``timeout_words`` says whose limit it is) and leaves the corpus as it was.
    ``language`` (a code, name or Tesseract name of ``madqa.LANGUAGES``; default ``settings.language``) is
    stored with the corpus and chooses its analysis and OCR language; when neither is given the corpus
    keeps the language it has, and a new one is detected from its pages' text. A changed language
    rebuilds the text indexes from the stored page texts (only scanned files are read again, for OCR in
    the new language). With ``read_at_most`` at most that many new or changed files are read
    (``defer_reads``): the generation is swapped in sooner and ``report.pending`` says how many wait for the
    next ingest (a served collection is searchable while it grows, ``madqa.collection_index``). Raises
    CorpusError only when nothing can be done at all.
    """
    started = time.perf_counter()
    root = Path(root)
    request = _checked_request(root, settings, registry, ocr, ocr_jsonl, retrievers, language)
    clock = IngestClock(timeout_s, timeout_words)
    progress, page_progress, index_progress = clocked(clock, progress, page_progress, index_progress)
    state = state_dir_for(root, corpora_dir or settings.corpora_dir)
    state.mkdir(parents=True, exist_ok=True)
    report = IngestReport(root=str(root))
    with open(state / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one ingest per corpus at a time
        _remove_stale(state)
        gen = _start_generation(root, state, settings, registry, request, report, rebuild, page_limits, read_at_most)
        previous = gen.previous
        if previous is not None and previous.language == gen.code and nothing_changed(
                previous, gen.plan, registry, request.retrievers):
            gen.tmp_dir.rmdir()  # a no-op re-index: the current generation stays current
            report.unchanged = len(gen.plan)
            report.language, report.language_note = previous.language, previous.language_note
            previous.close()
            return _summarise(report, previous.gen_dir, dict(previous.documents), request.imported, gen.ambiguous,
                              started)
        documents, changed, info = _read_generation(gen, registry, request, executor, report, progress,
                                                    page_progress, index_progress, page_limits)
        _swap_in(gen, root, documents, changed, info, report)
    return _summarise(report, state / gen.name, documents, request.imported, gen.ambiguous, started)


@dataclass(frozen=True)
class _IngestRequest:
    """An ingest's arguments, checked before any work: OCR mode, imported OCR, indexes and asked language."""

    ocr: str
    ocr_jsonl: Path | None
    imported: dict[tuple[str, int], str]
    retrievers: list[str] | None
    asked: str | None  # the language code asked for (``language`` or ``settings.language``), None: keep or detect


def _checked_request(root: Path, settings: Settings, registry: Registry, ocr: str | None,
                     ocr_jsonl: str | Path | None, retrievers: list[str] | None,
                     language: str | None) -> _IngestRequest:
    """The ingest's arguments with their defaults; CorpusError (or the registry's error for an unknown
    retriever, the languages' for an unknown language) before any work."""
    if not root.is_dir():
        raise CorpusError(f"corpus folder {str(root)!r} does not exist or is not a folder")
    ocr = ocr or settings.ocr
    if ocr not in ("auto", "always", "never"):
        raise CorpusError(f"--ocr must be auto, always or never, not {ocr!r}")
    imported = load_ocr_jsonl(Path(ocr_jsonl)) if ocr_jsonl else {}
    if retrievers is None and settings.index_retrievers.strip():
        retrievers = [n.strip() for n in settings.index_retrievers.split(",") if n.strip()]
    index_names(registry, retrievers)  # an unknown or unavailable name fails before any work
    wanted = language or settings.language or None
    asked = language_named(wanted).code if wanted else None  # a bad name fails before any work
    return _IngestRequest(ocr, Path(ocr_jsonl) if ocr_jsonl else None, imported, retrievers, asked)


@dataclass(frozen=True)
class _Generation:
    """A generation being written (under the corpus lock): where, from which previous one, in which
    language, with which options, and the plan and reader of its files."""

    state: Path
    name: str
    tmp_dir: Path
    previous_name: str | None
    previous: Corpus | None
    kept: dict[str, Any] | None  # the language record the previous generation stores (when none is asked)
    code: str  # the language the indexes are written in (detected again after reading when neither is known)
    ocr_note: str | None
    options: dict[str, Any]
    ambiguous: set[str]  # file names more than one PDF has (imported OCR records cannot tell them apart)
    read_settings: Settings  # ``settings`` with the OCR language chosen, here and on cluster workers
    plan: list[FilePlan]
    room: int | None  # pages left under ``page_limits.total`` (None: no total limit)
    reader: DocumentReader


def _start_generation(root: Path, state: Path, settings: Settings, registry: Registry, request: _IngestRequest,
                      report: IngestReport, rebuild: str | None, page_limits: PageLimits | None,
                      read_at_most: int | None) -> _Generation:
    """Open the previous generation, choose the language and options, make the new one's folder and plan its
    files; a damaged previous generation or OCR that is off is a warning in ``report``."""
    previous_name = read_current(state)
    previous, damage = _open_previous(root, state, previous_name, registry, rebuild)
    if damage:
        report.warnings.append(("", f"the stored index was damaged ({damage}); every PDF was read again "
                                    "into a new generation"))
    asked, ocr = request.asked, request.ocr
    kept = None if asked or previous_name is None else stored_language(state / previous_name / MANIFEST)
    code = asked or (kept or {}).get("code") or DEFAULT_LANGUAGE  # detected below when neither
    ocr_language, ocr_note = tesseract_language(code, settings.ocr_language, find_tessdata())
    options = {"ocr": ocr, "ocr_language": ocr_language, "ocr_dpi": settings.ocr_dpi,
               "ocr_jsonl": sha256_file(request.ocr_jsonl) if request.ocr_jsonl else None}
    reusable = reusable_files(previous, options)
    paths = find_pdfs(root)
    names = Counter(p.name for p in paths)
    ambiguous = {name for name, count in names.items() if count > 1}
    read_settings = dataclasses.replace(settings, ocr_language=ocr_language)  # here and on cluster workers
    texts, ocr_problem = page_texts(registry, read_settings, ocr)
    if ocr_problem:
        report.warnings.append(("", f"OCR is off: {ocr_problem}"))
    generation = f"gen-{time.strftime('%Y%m%d%H%M%S')}-{os.getpid()}-{time.monotonic_ns() % 10**6}"
    tmp_dir = state / f"tmp-{generation}"
    tmp_dir.mkdir()
    plan = plan_files(root, paths, previous, reusable, report.failures)
    plan, room = within_limits(plan, previous, page_limits, report)
    if read_at_most is not None:
        plan, report.pending = defer_reads(plan, previous, reusable, read_at_most)
    reader = DocumentReader(texts.text, texts.ocr, ocr, read_limits(read_settings, page_limits, room))
    return _Generation(state, generation, tmp_dir, previous_name, previous, kept, code, ocr_note, options,
                       ambiguous, read_settings, plan, room, reader)


def _read_generation(gen: _Generation, registry: Registry, request: _IngestRequest, executor: Any,
                     report: IngestReport, progress: Progress | None, page_progress: PageProgress | None,
                     index_progress: IndexProgress | None, page_limits: PageLimits | None,
                     ) -> tuple[dict[str, DocumentRecord], set[str], dict[str, Any]]:
    """Read the plan's files into the new generation's page store and indexes, and settle its language.

    Returns the documents, the changed files and the language record; on any failure (a full disk, a stop)
    the half-written generation is removed and the failure raised."""
    previous, plan = gen.previous, gen.plan
    reused = {file for file, _, _, reuse in plan if reuse}
    # every page of a previous file that is not reused as it is leaves the indexes
    feed = IndexFeed(registry, gen.tmp_dir, previous, set(previous.documents) - reused if previous else set(),
                     files_to_read=len(plan) - len(reused), retrievers=request.retrievers, progress=index_progress,
                     language=gen.code)
    try:
        reads = document_reads(plan, gen.reader, imported_for(request.imported, gen.ambiguous), executor,
                                gen.read_settings, request.ocr, page_progress)
        documents, changed = store_files(plan, previous, reads, gen.tmp_dir, report, feed, progress,
                                           page_limits if gen.room is not None else None)
        feed.finish()
        info = language_record(request.asked, gen.kept, lambda: _stored_texts(gen.tmp_dir), gen.ocr_note)
        if info["code"] != gen.code:  # detected as another language than the indexes were written in
            rebuild_indexes(registry, gen.tmp_dir, request.retrievers, info["code"], index_progress)
    except BaseException:
        feed.abort()
        shutil.rmtree(gen.tmp_dir, ignore_errors=True)  # e.g. a full disk: no half-written generation left
        raise
    finally:
        gen.reader.close()
    return documents, changed, info


def _swap_in(gen: _Generation, root: Path, documents: dict[str, DocumentRecord], changed: set[str],
             info: dict[str, Any], report: IngestReport) -> None:
    """Write the new generation's manifest and make it current; the previous one is closed and old ones go."""
    previous = gen.previous
    removed = set(previous.documents) - set(documents) if previous else set()
    report.removed = len(removed - changed)
    report.language, report.language_note = info["code"], info["note"]
    report.warnings.extend(("", w) for w in info["warnings"])
    manifest = {"root": str(root), "generation": gen.name, "options": gen.options, "language": info,
                "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "documents": [documents[f].to_dict() for f in sorted(documents)],
                "failures": [{"file": f, "reason": r} for f, r in report.failures]}
    try:
        (gen.tmp_dir / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
    except BaseException:
        shutil.rmtree(gen.tmp_dir, ignore_errors=True)
        raise
    os.rename(gen.tmp_dir, gen.state / gen.name)
    write_current(gen.state, gen.name)
    if previous:
        previous.close()
    _remove_old(gen.state, keep={gen.name, gen.previous_name})


def _summarise(report: IngestReport, gen_dir: Path, documents: dict[str, DocumentRecord],
               imported: dict[Any, Any], ambiguous: set[str], started: float) -> IngestReport:
    """Fill in the report's totals for the generation now current (``gen_dir``)."""
    report.generation = gen_dir.name
    report.files = len(documents)
    sources: Counter[str] = Counter()
    for doc in documents.values():
        sources.update(doc.sources)
    report.pages = sum(d.pages for d in documents.values())
    report.ocr_pages, report.imported_pages, report.empty_pages = sources["ocr"], sources["imported"], sources["none"]
    report.blank_pages = sources["blank"]
    if report.empty_pages:
        db = sqlite3.connect((gen_dir / PAGES_DB).as_uri() + "?mode=ro", uri=True)
        try:
            report.pages_without_text = [(f, p) for f, p in db.execute(
                "SELECT file, page FROM pages WHERE source='none' ORDER BY file, page LIMIT ?", (EMPTY_LISTED,))]
        finally:
            db.close()
    if imported:
        matched = {(d.file, p) for d in documents.values() for p in range(1, d.pages + 1)}
        by_name = {(Path(f).name, p) for f, p in matched if Path(f).name not in ambiguous}
        unmatched = sum(1 for key in imported if key not in matched and key not in by_name)
        if unmatched:
            report.warnings.append(("", f"{unmatched} OCR records name no page of a PDF in the folder"))
    report.elapsed_s = time.perf_counter() - started
    return report


def _stored_texts(gen_dir: Path) -> Iterator[str]:
    """The page texts of the generation at ``gen_dir``, in file then page order, one at a time."""
    db = sqlite3.connect((gen_dir / PAGES_DB).as_uri() + "?mode=ro", uri=True)
    try:
        yield from (text for (text,) in db.execute("SELECT text FROM pages ORDER BY file, page"))
    finally:
        db.close()


def _open_previous(root: Path, state: Path, name: str | None, registry: Registry,
                   rebuild: str | None) -> tuple[Corpus | None, str | None]:
    """The current generation to reuse from, or None and why it cannot be (damaged: madqa.repair)."""
    if name is None:
        return None, None
    try:
        previous = Corpus(root, state, name)
    except CorpusError as exc:
        return None, str(exc)
    problem = rebuild or check_generation(previous, registry)
    if problem:
        previous.close()
        return None, problem
    return previous, None


def _remove_stale(state: Path) -> None:
    """Remove half-written generations left by a killed run (we hold the lock, so none is live)."""
    for entry in state.iterdir():
        if entry.name.startswith("tmp-") and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.name.startswith("CURRENT.tmp"):
            entry.unlink(missing_ok=True)


def _remove_old(state: Path, keep: set[str | None]) -> None:
    """Drop generations older than the previous one, except those an open Corpus still reads
    (a long question in the web app while its session uploads twice); a later ingest drops them."""
    for entry in state.iterdir():
        if entry.name.startswith("gen-") and entry.name not in keep and entry.is_dir() and not in_use(entry):
            shutil.rmtree(entry, ignore_errors=True)


def open_or_build(root: str | Path, settings: Settings, registry: Registry,
                  progress: Progress | None = None, check: bool = False,
                  rebuild: str | None = None, page_progress: PageProgress | None = None,
                  language: str | None = None) -> tuple[Corpus, IngestReport | None]:
    """Open the corpus at ``root``, ingesting it first when it was never indexed or is damaged (its
    manifest; with ``check`` also its page store and indexes, see madqa.repair; ``rebuild``: known to be).
    A ``language`` other than the stored one ingests again (the indexes are rebuilt from the stored texts)."""
    problem = rebuild
    if problem is None:
        try:
            corpus = Corpus.open(root, settings.corpora_dir)
        except CorpusError:
            if not Path(root).is_dir():
                raise
        else:
            problem = check_generation(corpus, registry) if check else None
            if problem is None and (language is None or language_named(language).code == corpus.language):
                return corpus, None
            corpus.close()
    report = ingest(root, settings, registry, progress=progress, rebuild=problem, page_progress=page_progress,
                    language=language)
    return Corpus.open(root, settings.corpora_dir), report
