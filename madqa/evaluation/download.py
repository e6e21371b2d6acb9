"""``madqa dataset download``: the gated Hugging Face dataset ``OxRML/MADQA`` and its 800 PDFs, fetched
into the layout :mod:`madqa.evaluation.dataset` reads.

    PATH/data/{dev,test,train}-*.parquet                  the questions (from the Hub)
    PATH/data/documents/document_urls-*.parquet           the document list (the ``documents`` config)
    PATH/pdfs/<document>                                  the PDFs (from each document's url)
    PATH/pdfs/manifest.json                               url, size and sha256 of every PDF fetched
    PATH/.cache/huggingface/                              huggingface_hub's bookkeeping

The Hub part uses ``huggingface_hub`` with the endpoint read from ``HF_ENDPOINT`` at call time (the
library reads it once, at import). A refusal becomes a :class:`DownloadError` that says what to do:
accept the terms on the dataset page, or set ``HF_TOKEN``. The PDFs come through
:mod:`madqa.evaluation.fetch`, a few at a time; a run that finds everything in place downloads nothing.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from madqa.errors import MadqaError
from madqa.evaluation.dataset import SPLITS, document_list_files
from madqa.evaluation.fetch import Fetched, FetchOptions, fetch, is_pdf, sha256_of

REPO_ID = "OxRML/MADQA"
PAGE = "https://huggingface.co/datasets/OxRML/MADQA"
DEFAULT_ENDPOINT = "https://huggingface.co"
LINKS = "data/documents/document_urls-*"
MANIFEST = "manifest.json"


class DownloadError(MadqaError):
    """The Hub refused or could not be reached: nothing further was fetched."""


@dataclass
class Downloaded:
    """What a run did: question files fetched or already there, and every document's fate."""

    root: Path
    question_files: list[Path] = field(default_factory=list)
    new_question_files: list[Path] = field(default_factory=list)
    documents: list[Fetched] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for d in self.documents if d.status == status)

    @property
    def failed(self) -> list[Fetched]:
        return [d for d in self.documents if d.status == "failed"]


def endpoint() -> str:
    """The Hub to ask: ``HF_ENDPOINT`` as it is now (huggingface_hub froze its own copy at import)."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def hub_files(splits: Iterable[str]) -> list[str]:
    """The repo patterns to fetch: the splits' question shards and the document list."""
    return [f"data/{s}-*" for s in splits] + [LINKS]


def fetch_hub_files(root: Path, splits: Iterable[str], hub: str | None = None) -> tuple[list[Path], list[Path]]:
    """Download the splits' Parquet files and the document list into ``root``; (all, newly fetched)."""
    from huggingface_hub import HfApi, hf_hub_download

    hub = hub or endpoint()
    patterns = hub_files(splits)
    with _hub_errors(hub):
        names = HfApi(endpoint=hub).list_repo_files(REPO_ID, repo_type="dataset")
        wanted = sorted(n for n in names if n.endswith(".parquet") and any(fnmatch(n, p) for p in patterns))
        missing = [p for p in patterns if not any(fnmatch(n, p) for n in wanted)]
        if missing:
            raise DownloadError(f"{REPO_ID} at {hub} has no file matching {', '.join(missing)}")
        files, new = [], []
        for name in wanted:
            before = _stamp(root / name)
            path = Path(hf_hub_download(REPO_ID, name, repo_type="dataset", endpoint=hub, local_dir=root))
            files.append(path)
            if _stamp(path) != before:
                new.append(path)
    return files, new


def _stamp(path: Path) -> tuple[int, int] | None:
    return (path.stat().st_size, path.stat().st_mtime_ns) if path.exists() else None


class _hub_errors:
    """Turns huggingface_hub's refusals into a DownloadError that says what to do about them."""

    def __init__(self, hub: str) -> None:
        self.hub = hub

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> Literal[False]:
        if exc is None or isinstance(exc, DownloadError):
            return False
        message = hub_refusal(exc, self.hub)
        if message is None:
            return False
        raise DownloadError(message) from exc


def hub_refusal(exc: BaseException, hub: str) -> str | None:
    """The user's next step for a Hub failure, or None when ``exc`` is not one (a bug: let it raise)."""
    from httpx2 import HTTPError
    from huggingface_hub import get_token
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
    )

    if isinstance(exc, OfflineModeIsEnabled):
        return (f"cannot fetch {REPO_ID}: huggingface_hub is in offline mode (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE "
                "is set); unset them to download")
    status = getattr(getattr(exc, "response", None), "status_code", None)
    has_token = bool(get_token())
    accept = f"accept the dataset's terms at {PAGE} (logged in as the token's account)"
    if isinstance(exc, GatedRepoError) or (isinstance(exc, HfHubHTTPError) and status in (401, 403)):
        if not has_token:
            return (f"{REPO_ID} is gated and no Hugging Face token was found: {accept}, then set HF_TOKEN "
                    "to a read token of that account (https://huggingface.co/settings/tokens)")
        if status == 401:
            return (f"the Hub at {hub} rejected the token (HF_TOKEN wrong or expired?): set HF_TOKEN to a valid "
                    f"read token of an account that accepted the terms at {PAGE}")
        return (f"the token has no access to {REPO_ID}: {accept}; a fine-grained token also needs "
                "'read access to public gated repos'")
    if isinstance(exc, RepositoryNotFoundError):
        return f"{REPO_ID} was not found at {hub} (a wrong HF_ENDPOINT, or the token is refused there)"
    if isinstance(exc, (LocalEntryNotFoundError, HfHubHTTPError, HTTPError, OSError)):
        return f"cannot fetch {REPO_ID} from {hub}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return None


def read_links(root: Path) -> tuple[dict[str, str], list[Fetched]]:
    """(document -> url, the rows refused): a name must be a plain relative ``.pdf`` path, a url http(s)."""
    import pyarrow.parquet as pq

    links: dict[str, str] = {}
    bad: list[Fetched] = []
    for path in document_list_files(root):
        for row in pq.read_table(path).to_pylist():
            name, url = str(row.get("document") or ""), str(row.get("url") or "")
            why = unsafe_name(name) or ("" if url.startswith(("https://", "http://")) else f"url {url!r} is not http(s)")
            if why:
                bad.append(Fetched(name or "(no name)", "failed", why))
            else:
                links.setdefault(name, url)
    if not links and not bad:
        raise DownloadError(f"{root}: the document list ({LINKS}.parquet) is missing or empty")
    return links, bad


def unsafe_name(name: str) -> str:
    """Why ``name`` cannot be written under the PDF folder, or "" when it can."""
    pure = PurePosixPath(name)
    if not name or "\\" in name or "\x00" in name or pure.is_absolute() or ".." in pure.parts or name.startswith("~"):
        return f"unsafe file name {name!r}"
    if pure.suffix.lower() != ".pdf":
        return f"file name {name!r} does not end in .pdf"
    return ""


class Manifest:
    """``pdfs/manifest.json``: url, size, sha256 and time of each PDF, rewritten after every file."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / MANIFEST
        self.lock = threading.Lock()
        self.entries: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            try:
                self.entries = dict(json.loads(self.path.read_text(encoding="utf-8")).get("documents") or {})
            except (ValueError, AttributeError):  # damaged: every PDF is checked again and recorded anew
                self.entries = {}

    def current(self, name: str, url: str, dest: Path) -> bool:
        entry = self.entries.get(name)
        return bool(entry and entry.get("url") == url and dest.is_file() and dest.stat().st_size == entry.get("size"))

    def record(self, name: str, url: str, size: int, sha256: str) -> None:
        with self.lock:
            self.entries[name] = {"url": url, "size": size, "sha256": sha256,
                                  "fetched": datetime.now(UTC).isoformat(timespec="seconds")}
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_text(json.dumps({"dataset": REPO_ID, "documents": dict(sorted(self.entries.items()))},
                                      indent=1), encoding="utf-8")
            os.replace(tmp, self.path)


def fetch_documents(root: Path, links: dict[str, str], options: FetchOptions,
                    progress: Progress | None = None) -> list[Fetched]:
    """Every listed PDF into ``root/pdfs``: those already there (and checksummed) are skipped."""
    folder = root / "pdfs"
    folder.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(folder)
    done: list[Fetched] = []
    todo: list[tuple[str, str]] = []
    for name, url in links.items():
        dest = folder / name
        if manifest.current(name, url, dest):
            done.append(Fetched(name, "present", size=dest.stat().st_size, sha256=manifest.entries[name]["sha256"]))
        elif dest.is_file() and is_pdf(dest):  # there before the manifest (an earlier tool, a killed run)
            size, digest = dest.stat().st_size, sha256_of(dest)
            manifest.record(name, url, size, digest)
            done.append(Fetched(name, "present", size=size, sha256=digest))
        else:
            todo.append((name, url))
    progress = progress or Progress()
    progress.begin(len(todo))
    pool = ThreadPoolExecutor(max_workers=max(1, options.workers))
    try:
        futures = [pool.submit(_one, name, url, folder / name, options, manifest) for name, url in todo]
        for future in as_completed(futures):
            done.append(future.result())
            progress.done(done[-1])
    except BaseException:  # Ctrl-C: the queued PDFs are dropped, those in flight end (their .part is kept)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        progress.close()
    pool.shutdown()
    order = list(links)
    return sorted(done, key=lambda f: order.index(f.document))


def _one(name: str, url: str, dest: Path, options: FetchOptions, manifest: Manifest) -> Fetched:
    dest.parent.mkdir(parents=True, exist_ok=True)
    result = fetch(name, url, dest, options)
    if result.status == "downloaded":
        manifest.record(name, url, result.size, result.sha256)
    return result


def download(root: str | Path, splits: Iterable[str] = SPLITS, options: FetchOptions | None = None,
             progress: Progress | None = None, pdfs: bool = True,
             questions_done: Callable[[Downloaded], None] = lambda d: None) -> Downloaded:
    """The questions of ``splits``, the document list and (with ``pdfs``) every PDF, into ``root``;
    ``questions_done`` hears of the Hub part before the PDFs begin."""
    target = Path(root)
    if target.exists() and not target.is_dir():
        raise DownloadError(f"{target} exists and is not a folder")
    target.mkdir(parents=True, exist_ok=True)
    files, new = fetch_hub_files(target, list(splits))
    result = Downloaded(target, files, new)
    links, bad = read_links(target)
    questions_done(result)
    result.documents = bad + (fetch_documents(target, links, options or FetchOptions(), progress) if pdfs else [])
    return result


class Progress:
    """Where a run's PDFs are reported: a tqdm bar on a terminal, one plain line each otherwise."""

    def __init__(self, stream: Any = None) -> None:
        self.out = stream or sys.stderr
        self.total = self.seen = 0
        self.bar: Any = None

    def begin(self, total: int) -> None:
        self.total = total
        if total and self.out.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="file", desc="PDFs", file=self.out)

    def done(self, f: Fetched) -> None:
        self.seen += 1
        if self.bar is not None:
            if f.status == "failed":
                self.bar.write(f"failed: {f.document}: {f.reason}", file=self.out)
            self.bar.update(1)
            return
        said = (f"{f.size:,} bytes" + (f", resumed at {f.resumed_from:,}" if f.resumed_from else "")
                if f.status == "downloaded" else f.reason)
        print(f"[{self.seen}/{self.total}] {f.status} {f.document}: {said}", file=self.out, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
