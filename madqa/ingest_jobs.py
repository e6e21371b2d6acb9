"""An ingest's PDF reading on cluster workers (``madqa index DIR --cluster URL``).

Each job reads one file (text layer, OCR, imported OCR) with the same ``DocumentReader`` (and its
memory/time limits) a local ingest uses and returns its pages; the driver puts them into the generation in the plan's order,
so a cluster ingest writes exactly what a single-process one does. A job lost with its worker is
run again by the cluster; its pages arrive once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from madqa.corpus import PageText
from madqa.errors import CorpusError
from madqa.page_readers import page_texts
from madqa.pdf_reader import DocumentReader, ReadLimits
from madqa.plugins import Registry, collect, get_plugin_manager
from madqa.settings import Settings

_LOCK = threading.Lock()
_REGISTRIES: dict[str | None, Registry] = {}


def _registry(settings: Settings) -> Registry:
    """This worker's plugin registry, collected once per plugins folder."""
    with _LOCK:
        if settings.plugins_dir not in _REGISTRIES:
            _REGISTRIES[settings.plugins_dir] = collect(get_plugin_manager(settings.plugins_dir), settings)
        return _REGISTRIES[settings.plugins_dir]


def read_job(job: tuple[str, str, Settings, str, dict[int, str]]) -> tuple[str, Any]:
    """Read one PDF on a worker, with the reader and limits a local ingest uses (a limited child
    process): ("ok", (pages, rows, warnings)), ("corpus", reason) or ("os", reason)."""
    path, file, settings, ocr, imported = job
    texts, _ = page_texts(_registry(settings), settings, ocr)
    reader = DocumentReader(texts.text, texts.ocr, ocr, ReadLimits.from_settings(settings))
    try:
        count, pages, warnings = reader.read(Path(path), file, imported)
    except CorpusError as exc:
        return "corpus", str(exc)
    except OSError as exc:
        return "os", exc.strerror or str(exc)
    finally:
        # the limited reader process goes back to this worker's pool for its next file: started anew
        # per file it cost ~0.6 CPU-s each, most of a 23-page file's reading (docs/performance.md)
        reader.close()
    return "ok", (count, [(p.file, p.page, p.text, p.source) for p in pages], warnings)


def read_jobs(executor: Any, to_read: list[tuple[str, Path, dict[int, str]]], settings: Settings,
              ocr: str) -> Iterator[Any]:
    """Each file's (pages, page list, warnings) or its CorpusError/OSError, in ``to_read``'s order,
    released as soon as every earlier file has arrived."""
    jobs = [(str(path), file, settings, ocr, imported) for file, path, imported in to_read]
    waiting: dict[int, tuple[str, Any]] = {}
    next_index = 0
    for index, outcome in executor.map(read_job, jobs):
        waiting[index] = outcome
        while next_index in waiting:
            kind, value = waiting.pop(next_index)
            next_index += 1
            if kind == "ok":
                count, rows, warnings = value
                yield count, [PageText(*row) for row in rows], warnings
            else:
                yield CorpusError(value) if kind == "corpus" else OSError(value)
