"""What an ingest reads: each file's plan (reuse the previous generation's pages, or read it), whether
anything changed at all, and a round's cap on reads (``defer_reads``, for a collection that grows).

A plan row is ``(file, path, sha256, reuse)`` in file order; ``madqa.index.ingest`` reads the rows whose
``reuse`` is False and copies the others from the previous generation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from madqa.corpus import Corpus, DocumentRecord, safe_relpath
from madqa.errors import CorpusError
from madqa.indexers import index_names
from madqa.plugins import Registry
from madqa.protocols import retriever_indexing

FilePlan = tuple[str, Path, str, bool]  # (file, path, sha256, reuse)
Reusable = Callable[[DocumentRecord], bool]


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def reusable_files(previous: Corpus | None, options: dict[str, Any]) -> Reusable:
    """Whether a previous file's pages can be kept as they are: read with the same options, or with only another
    OCR language when none of its pages was OCR'd (a text-layer PDF reads the same in any language)."""
    if previous is None:
        return lambda doc: False
    before = dict(previous.manifest.get("options") or {})
    same = before == options
    same_but_ocr_language = {**before, "ocr_language": None} == {**options, "ocr_language": None}
    return lambda doc: same or (same_but_ocr_language and not doc.sources.get("ocr"))


def nothing_changed(previous: Corpus, plan: list[FilePlan], registry: Registry, retrievers: list[str] | None) -> bool:
    """True when every file is reused as it is, none was removed and every retriever this ingest
    indexes has a usable index in the previous generation: the ingest would copy that generation,
    so it is kept."""
    if not all(reuse for *_, reuse in plan) or {file for file, *_ in plan} != set(previous.documents):
        return False
    for name in index_names(registry, retrievers):
        indexing = retriever_indexing(registry.get("retriever", name).factory)
        if indexing.index_on_first_use:
            continue
        folder = previous.retriever_dir(name)
        usable = indexing.index_usable
        if not folder.is_dir() or (usable is not None and not usable(folder)):
            return False
    return True


def plan_files(root: Path, paths: list[Path], previous: Corpus | None, reusable: Reusable,
               failures: list[tuple[str, str]]) -> list[FilePlan]:
    """A plan row for every usable file, in order; unusable ones (unsafe names, unreadable) go to ``failures``."""
    plan = []
    for path in paths:
        file = path.relative_to(root).as_posix()
        try:
            file = safe_relpath(path, root)
            sha = sha256_file(path)
        except CorpusError as exc:
            failures.append((file, str(exc)))
            continue
        except OSError as exc:
            failures.append((file, f"cannot be read ({exc.strerror or exc})"))
            continue
        old = previous.documents.get(file) if previous else None
        plan.append((file, path, sha, old is not None and old.sha256 == sha and reusable(old)))
    return plan


def defer_reads(plan: list[FilePlan], previous: Corpus | None, reusable: Reusable, most: int) -> tuple[list[FilePlan], int]:
    """The plan with at most ``most`` files to read (in plan order), and how many were deferred. A deferred file
    the previous generation holds keeps its previous version when that version is reusable (read with the same
    options), so nothing searchable disappears for a round; a new one waits."""
    if most < 1:
        raise CorpusError(f"an ingest must read at least one file a round, not {most}")
    kept: list[FilePlan] = []
    reads = deferred = 0
    for file, path, sha, reuse in plan:
        if reuse or reads < most:
            reads += not reuse
            kept.append((file, path, sha, reuse))
            continue
        deferred += 1
        old = previous.documents.get(file) if previous is not None else None
        if old is not None and reusable(old):
            kept.append((file, path, old.sha256, True))
    return kept, deferred
