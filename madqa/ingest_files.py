"""Reading an ingest's planned files into a new generation: new and changed files read (here or on cluster
workers) into its page store and index feed, unchanged ones copied from the previous generation.

``madqa.index.ingest`` plans the files (``ingest_plan``) and owns the generation; this module fills it.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from madqa import abbreviations
from madqa.corpus import PAGES_DB, Corpus, DocumentRecord
from madqa.errors import CorpusError
from madqa.indexers import IndexFeed
from madqa.ingest_jobs import read_jobs
from madqa.ingest_limits import PageLimits
from madqa.ingest_plan import FilePlan
from madqa.ingest_report import IngestReport
from madqa.pdf_reader import DocumentReader
from madqa.settings import Settings

Progress = Callable[[str, int, int], None]  # (file, done, total)
PageProgress = Callable[[str, int, int, str], None]  # (file, page, pages, source): each page as it is read


def imported_for(imported: dict[tuple[str, int], str], ambiguous: set[str]) -> Callable[[str], dict[int, str]]:
    """Per file, its pages' imported OCR texts by page number: matched by path, or by bare name when no
    other PDF shares it (imported records cannot tell such files apart)."""
    by_file: dict[str, dict[int, str]] = {}
    for (file, number), text in imported.items():
        by_file.setdefault(file, {})[number] = text

    def pages(file: str) -> dict[int, str]:
        name = Path(file).name
        found = {} if name in ambiguous or name == file else dict(by_file.get(name, {}))
        found.update(by_file.get(file, {}))
        return found

    return pages


def document_reads(plan: list[FilePlan], reader: DocumentReader,
                    imported_for: Callable[[str], dict[int, str]], executor: Any, settings: Settings,
                    ocr: str, page_progress: PageProgress | None = None) -> Iterator[Any]:
    """(pages, page list, warnings) or the CorpusError/OSError, for each file to read, in plan order.

    ``page_progress`` hears every page read here (files read on cluster workers arrive whole)."""
    to_read = [(file, path) for file, path, _, reuse in plan if not reuse]
    if executor is None:
        yield from reader.read_all([
            (path, file, imported_for(file), _pages_of(page_progress, file) if page_progress else None)
            for file, path in to_read])
        return
    yield from read_jobs(executor, [(file, path, imported_for(file)) for file, path in to_read], settings, ocr)


def _pages_of(page_progress: PageProgress, file: str) -> Callable[[int, int, str], None]:
    """``page_progress`` for the pages of one file: (page, pages, source)."""
    return lambda page, pages, source: page_progress(file, page, pages, source)


def store_files(
    plan: list[FilePlan], previous: Corpus | None, reads: Iterator[Any], tmp_dir: Path,
    report: IngestReport, feed: IndexFeed, progress: Progress | None, limits: PageLimits | None = None,
) -> tuple[dict[str, DocumentRecord], set[str]]:
    """Read new and changed files into the page store and the index feed, copy unchanged ones' pages; a file
    that would take the corpus past ``limits.total`` pages is a failure.

    Returns the documents and the changed files (in the previous generation, read again).
    """
    db = _page_store(tmp_dir, previous)
    documents: dict[str, DocumentRecord] = {}
    changed: set[str] = set()
    by_hash: dict[str, str] = {}
    for done, (file, path, sha, reuse) in enumerate(plan, 1):
        if progress:
            progress(file, done, len(plan))
        old = previous.documents.get(file) if previous else None
        try:
            if reuse:
                documents[file] = _copy_unchanged(db, old, file)
                report.unchanged += 1
            else:
                if old is not None:
                    changed.add(file)
                outcome = next(reads)  # this file's, read in a limited process here or on a worker
                held = _pages_held(documents, previous, plan) if limits else 0
                documents[file] = _store_read(db, feed, outcome, file, path, sha, held, limits)
                report.warnings.extend((file, w) for w in documents[file].warnings)
                if old is not None:
                    report.updated += 1
                else:
                    report.added += 1
            if sha in by_hash:
                report.warnings.append((file, f"same content as {by_hash[sha]}"))
            by_hash.setdefault(sha, file)
        except CorpusError as exc:
            report.failures.append((file, str(exc)))
        except OSError as exc:
            changed.discard(file)
            report.failures.append((file, f"cannot be read ({exc.strerror or exc})"))
    _warn_same_names(documents, report)
    db.commit()
    db.close()
    return documents, changed


def _page_store(tmp_dir: Path, previous: Corpus | None) -> sqlite3.Connection:
    """The new generation's page store, with the previous generation's attached as ``prev`` to copy from."""
    db = sqlite3.connect(tmp_dir / PAGES_DB)
    db.execute("CREATE TABLE pages (file TEXT, page INTEGER, text TEXT, source TEXT, PRIMARY KEY (file, page))")
    abbreviations.create_table(db)
    if previous is not None:
        db.execute("ATTACH DATABASE ? AS prev", ((previous.gen_dir / PAGES_DB).as_uri() + "?mode=ro",))
    return db


def _copy_unchanged(db: sqlite3.Connection, old: DocumentRecord | None, file: str) -> DocumentRecord:
    """Copy a reused file's pages and abbreviations from the previous generation; its record there."""
    if old is None:  # plan_files and defer_reads reuse only what the previous generation holds
        raise RuntimeError(f"{file!r} is planned for reuse but the previous generation does not hold it")
    db.execute("INSERT INTO pages SELECT * FROM prev.pages WHERE file=?", (file,))
    abbreviations.copy_file(db, file)
    return old


def _pages_held(documents: dict[str, DocumentRecord], previous: Corpus | None, plan: list[FilePlan]) -> int:
    """The pages the new generation holds so far: those stored, and those of files still to be copied."""
    held = sum(d.pages for d in documents.values())
    if previous is None:  # nothing is reused without a previous generation
        return held
    return held + sum(previous.documents[f].pages for f, _, _, reused in plan if reused and f not in documents)


def _store_read(db: sqlite3.Connection, feed: IndexFeed, outcome: Any, file: str, path: Path, sha: str,
                held: int, limits: PageLimits | None) -> DocumentRecord:
    """Store a file's read pages (``outcome``: pages, page list, warnings) and feed them to the indexes; its
    record. The read's CorpusError/OSError is raised, and a CorpusError when its pages would take the corpus
    (``held`` pages so far) past ``limits.total``."""
    if isinstance(outcome, Exception):
        raise outcome
    count, pages, warnings = outcome
    if limits and held + count > limits.total:
        raise CorpusError(f"the PDF has {count:,} pages: with them the corpus would have "
                          f"{held + count:,}, more than {limits.total_words}")
    db.executemany("INSERT INTO pages VALUES (?, ?, ?, ?)", [(p.file, p.page, p.text, p.source) for p in pages])
    abbreviations.store(db, ((p.file, p.page, p.text) for p in pages))
    feed.add(pages)
    return DocumentRecord(file, sha, path.stat().st_size, count, dict(Counter(p.source for p in pages)),
                          tuple(warnings))


def _warn_same_names(documents: dict[str, DocumentRecord], report: IngestReport) -> None:
    names = Counter(Path(f).name for f in documents)
    for file in sorted(documents):
        if names[Path(file).name] > 1:
            report.warnings.append((file, "another file has the same name in another folder; cite by path"))
