"""Operator collections: folders of PDFs the person running the app serves, shared and read-only, to every visitor.

A collection is named by a spec, given to ``app.py --corpus`` (repeatable) or in ``MADQA_COLLECTIONS``
(``;``-separated), in the same syntax::

    DIR                       named after the folder
    NAME=DIR                  named NAME (letters, digits, ``_ . -``; not ``demo`` or ``mine``)
    NAME=DIR:LANG             the documents' language (an ISO 639 code: ``de``, ``fra``); default English
    NAME=DIR#QUESTIONS        a question set (JSONL or Parquet, MADQA format) for Evaluate and You search

Without ``#QUESTIONS`` the question set is found: ``questions.jsonl`` (or ``.parquet``) in the folder or beside
it, or the ``dev`` split of a local MADQA dataset (``madqa run --dataset PATH``), whose PDFs are then served
from its ``pdfs/`` folder. A missing or unreadable folder or question file is a SettingsError naming it.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from madqa.errors import CorpusError, SettingsError
from madqa.evaluation.dataset import pdf_folder, split_files
from madqa.evaluation.questions import QuestionFileError, load_questions
from madqa.languages import language_named

DEMO_DOCS = Path(__file__).resolve().parent.parent / "data" / "demo" / "docs"  # the bundled demo corpus
RESERVED_NAMES = ("demo", "mine")  # the bundled demo corpus and a session's uploads
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
LANGUAGE_PATTERN = re.compile(r"^[a-z]{2,3}$")
QUESTION_NAMES = ("questions.jsonl", "questions.ndjson", "questions.parquet")
log = logging.getLogger("madqa.collections")
DATASET_SPLIT = "dev"  # the split of a local MADQA dataset served with it (``test`` has no answers)


@dataclass(frozen=True)
class CollectionSpec:
    """One collection the operator serves: its name in the picker, its folder, language and question set."""

    name: str
    folder: Path
    language: str | None = None  # madqa.LANGUAGES code; None: the corpus keeps its own (or detects one)
    questions: Path | None = None  # named by the spec; None: found beside the folder (``question_files``)

    @property
    def documents(self) -> Path:
        """The folder whose PDFs are indexed: ``folder``, or a local MADQA dataset's PDF folder."""
        if is_dataset(self.folder):
            try:
                return pdf_folder(self.folder)
            except CorpusError:
                return self.folder
        return self.folder

    def question_files(self) -> list[Path]:
        """The question set offered with this collection: named, found in or beside the folder, or the MADQA
        dataset's dev split; [] when there is none."""
        if self.questions is not None:
            return [self.questions]
        for where in (self.folder, self.folder.parent):
            for name in QUESTION_NAMES:
                if (where / name).is_file():
                    return [where / name]
        return split_files(self.folder, DATASET_SPLIT) if is_dataset(self.folder) else []


def is_dataset(folder: Path) -> bool:
    """True for the root of a local MADQA dataset copy (it has Parquet question splits)."""
    return folder.is_dir() and bool(split_files(folder, DATASET_SPLIT))


def parse_spec(text: str) -> CollectionSpec:
    """``[NAME=]DIR[:LANG][#QUESTIONS]`` -> a CollectionSpec (not yet checked on disk: ``check_spec``)."""
    raw = text.strip()
    if not raw:
        raise SettingsError("an empty collection: give a folder, NAME=DIR, NAME=DIR:LANG or NAME=DIR#QUESTIONS")
    body, hash_, questions = raw.partition("#")
    name, eq, folder = body.partition("=")
    if not eq:
        name, folder = "", body
    folder, colon, language = folder.rpartition(":")
    if not colon or not LANGUAGE_PATTERN.match(language):
        folder, language = folder + colon + language, ""
    folder, questions, name = folder.strip(), questions.strip(), name.strip()
    if not folder:
        raise SettingsError(f"collection {raw!r} names no folder")
    if hash_ and not questions:
        raise SettingsError(f"collection {raw!r}: nothing after '#' (a question file is expected)")
    path = Path(folder).expanduser()
    name = name or default_name(path)
    if not NAME_PATTERN.match(name):
        raise SettingsError(f"collection name {name!r} (from {raw!r}) must be 1-40 letters, digits, '_', '.' or '-'")
    if name.lower() in RESERVED_NAMES:
        raise SettingsError(f"collection name {name!r} is taken ({', '.join(RESERVED_NAMES)} are the demo corpus "
                            "and a visitor's uploads): name it with NAME=DIR")
    if language:  # the language's own code (de for deu), or a clear error listing the supported ones
        try:
            language = language_named(language).code
        except CorpusError as exc:
            raise SettingsError(f"collection {raw!r}: {exc}") from None
    return CollectionSpec(name, path, language or None, Path(questions).expanduser() if questions else None)


def default_name(folder: Path) -> str:
    """A folder's name as a collection name: its last part, with anything else than ``A-Za-z0-9_.-`` as ``_``."""
    base = Path(os.path.abspath(folder)).name
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", base).strip("_.-")[:40] or "collection"


def check_spec(spec: CollectionSpec) -> CollectionSpec:
    """``spec`` when its folder (and named question file) can be read; SettingsError naming the path otherwise."""
    folder = spec.folder
    if not folder.exists():
        raise SettingsError(f"collection {spec.name}: folder {str(folder)!r} does not exist")
    if not folder.is_dir():
        raise SettingsError(f"collection {spec.name}: {str(folder)!r} is not a folder")
    if not os.access(folder, os.R_OK | os.X_OK):
        raise SettingsError(f"collection {spec.name}: folder {str(folder)!r} cannot be read (permissions)")
    if spec.questions is not None and not (spec.questions.is_file() and os.access(spec.questions, os.R_OK)):
        raise SettingsError(f"collection {spec.name}: question file {str(spec.questions)!r} does not exist or cannot "
                            "be read")
    return spec


def parse_specs(texts: Iterable[str]) -> list[CollectionSpec]:
    """Every spec in ``texts`` (each may hold several, ``;``-separated), checked; two of one name are an error."""
    specs: list[CollectionSpec] = []
    for text in texts:
        specs += [parse_spec(part) for part in text.split(";") if part.strip()]
    seen: dict[str, CollectionSpec] = {}
    for spec in specs:
        other = seen.get(spec.name.lower())
        if other is not None:
            raise SettingsError(f"two collections are named {spec.name!r} ({other.folder} and {spec.folder}): "
                                "name one with NAME=DIR")
        seen[spec.name.lower()] = spec
    return [check_spec(spec) for spec in specs]


def served_collections(setting: str, flags: Iterable[str] = ()) -> list[CollectionSpec]:
    """What the app serves: ``MADQA_COLLECTIONS`` (``setting``), then the ``--corpus`` flags, in that order."""
    return parse_specs([setting, *flags])


def load_question_set(spec: CollectionSpec) -> list[dict[str, Any]]:
    """The questions of ``spec``'s question set (``question_files``), with unique ids; [] when it has none. A file
    that cannot be read is logged and gives none: the collection is still served."""
    questions: list[dict[str, Any]] = []
    for path in spec.question_files():
        try:
            rows, problems = load_questions(path, unique_ids=True)
        except QuestionFileError as exc:
            log.warning("collection %s: question set %s cannot be read: %s", spec.name, path, exc)
            continue
        if problems:
            log.warning("collection %s: %d rows of %s left out, e.g. %s", spec.name, len(problems), path, problems[0])
        questions += rows
    return questions
