"""A local copy of the Hugging Face MADQA dataset (``OxRML/MADQA``), read where the user has it.

The dataset's default configuration holds the questions as Parquet, one split each (``dev``,
``test``, ``train``; ``test`` has no answers or evidence); its ``documents`` configuration (split
``links``) maps each PDF file name to a download URL, because the PDFs are hosted elsewhere. The
official ``examples/download_pdfs.py`` saves them flat into ``./pdfs``. So a local copy is:

    PATH/data/dev-00000-of-00001.parquet      questions (also: PATH/dev-*.parquet, PATH/dev.parquet)
    PATH/documents/links-00000-of-00001.parquet   optional: the document list (document, url); a Hub
                                              snapshot has it at data/documents/document_urls-*.parquet
    PATH/pdfs/*.pdf                           the PDFs (also: PATH/documents/*.pdf, PATH/docs/)

Evidence names the PDF by its file name, which is its path inside the PDF folder, so citations
and the oracle line up with the corpus without any renaming.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from madqa.errors import CorpusError
from madqa.evaluation.questions import load_questions, to_plain

SPLITS = ("dev", "test", "train")
PDF_FOLDERS = ("pdfs", "documents", "docs", "pdf")


@dataclass
class LocalDataset:
    """One split of a local MADQA copy: its question files, its questions and the PDF folder."""

    root: Path
    split: str
    question_files: list[Path]
    questions: list[dict[str, Any]]
    docs_dir: Path
    problems: list[str] = field(default_factory=list)
    missing_documents: list[str] = field(default_factory=list)  # listed or cited, but no PDF here


def split_files(root: Path, split: str) -> list[Path]:
    """The Parquet files of ``split``, in shard order; the first layout that has any wins."""
    patterns = (f"data/{split}-*.parquet", f"data/{split}.parquet", f"{split}-*.parquet", f"{split}.parquet",
                f"*/{split}-*.parquet", f"*/{split}.parquet")
    for pattern in patterns:
        found = sorted(p for p in root.glob(pattern) if p.is_file() and p.parent.name != "documents")
        if found:
            return found
    return []


def pdf_folder(root: Path) -> Path:
    """The folder holding the PDFs: the first of ``PDF_FOLDERS`` with a PDF in it, else ``root``."""
    for name in PDF_FOLDERS:
        folder = root / name
        if folder.is_dir() and any(folder.rglob("*.pdf")):
            return folder
    if any(root.glob("*.pdf")):
        return root
    raise CorpusError(f"{root}: no PDFs found (looked in {', '.join(PDF_FOLDERS)}/ and the folder itself); "
                      f"download them with: madqa dataset download --to {root}")


LINK_PATTERNS = ("documents/links*.parquet", "data/documents/document_urls-*.parquet")


def document_list_files(root: Path) -> list[Path]:
    """The Parquet files of the document list: the first layout that has any (this reader's, the Hub's)."""
    for pattern in LINK_PATTERNS:
        found = sorted(p for p in root.glob(pattern) if p.is_file())
        if found:
            return found
    return []


def listed_documents(root: Path) -> list[str]:
    """The file names of the ``documents`` configuration (``links`` split), or [] without it."""
    files = document_list_files(root)
    names: list[str] = []
    for path in files:
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path, columns=["document"])
        except Exception as exc:  # pyarrow raises several unrelated types
            raise CorpusError(f"cannot read {path}: {exc}") from exc
        names += [str(to_plain(v)) for v in table.column("document").to_pylist() if v]
    return names


def open_dataset(path: str | Path, split: str) -> LocalDataset:
    """Read ``split`` of the local copy at ``path``; CorpusError when the layout is not there."""
    root = Path(path)
    if split not in SPLITS:
        raise CorpusError(f"unknown split {split!r}; the MADQA dataset has {', '.join(SPLITS)}")
    if not root.is_dir():
        raise CorpusError(f"dataset folder {str(root)!r} does not exist or is not a folder")
    files = split_files(root, split)
    if not files:
        have = [s for s in SPLITS if split_files(root, s)]
        raise CorpusError(f"{root}: no Parquet file for split {split!r} (expected data/{split}-*.parquet)"
                          + (f"; found splits: {', '.join(have)}" if have else ""))
    questions: list[dict[str, Any]] = []
    problems: list[str] = []
    for file in files:
        rows, issues = load_questions(file)
        questions += rows
        problems += [f"{file.name}: {p}" for p in issues]
    docs_dir = pdf_folder(root)
    found = {p.relative_to(docs_dir).as_posix() for p in docs_dir.rglob("*.pdf")}
    wanted = dict.fromkeys(listed_documents(root))
    for q in questions:
        wanted.update(dict.fromkeys(ev["document"] for ev in q.get("evidence") or []))
    missing = [d for d in wanted if d not in found]
    return LocalDataset(root, split, files, questions, docs_dir, problems, missing)
