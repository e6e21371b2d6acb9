"""``collections``: what the web app would serve (``MADQA_COLLECTIONS``, ``--corpus``, the demo unless it is off) and
how far each is indexed under ``MADQA_HOME`` — read only, nothing is indexed here."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from madqa.cli.base import command
from madqa.cli.info import print_columns
from madqa.collection_index import stored_state
from madqa.collections import DEMO_DOCS, CollectionSpec, served_collections
from madqa.settings import Settings


def served(settings: Settings, flags: list[str], no_demo: bool) -> list[CollectionSpec]:
    """The collections ``app.py`` would serve with these settings and flags, the demo first (as in the picker)."""
    demo = [CollectionSpec("demo", DEMO_DOCS)] if settings.demo and not no_demo else []
    return demo + served_collections(settings.collections, flags)


@command("collections")
def cmd_collections(args: argparse.Namespace, settings: Settings) -> int:
    rows: list[dict[str, Any]] = []
    for spec in served(settings, args.corpus, args.no_demo):
        state = stored_state(spec, settings)
        rows.append({"name": spec.name, "folder": str(spec.documents), "language": spec.language or "en",
                     "questions": [str(p) for p in spec.question_files()], "files": state.files,
                     "indexed_files": state.indexed_files, "pages": state.pages, "pending": state.pending,
                     "failures": [{"file": f, "reason": r} for f, r in state.failures], "error": state.error})
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False))
        return 0
    if not rows:
        print("nothing is served: no collection given and the demo is off (MADQA_DEMO=0)")
        return 0
    print_columns([("NAME", "FILES", "INDEXED", "PAGES", "PENDING", "FAILED", "LANG", "QUESTIONS", "FOLDER"),
                   *((r["name"], str(r["files"]), str(r["indexed_files"]), str(r["pages"]), str(r["pending"]),
                      str(len(r["failures"])), r["language"], ", ".join(Path(q).name for q in r["questions"]) or "-",
                      r["folder"]) for r in rows)])
    for r in rows:
        if r["error"]:
            print(f"\n{r['name']}: {r['error']}")
        for failure in r["failures"]:
            print(f"\n{r['name']}: {failure['file']} could not be indexed: {failure['reason']}")
    print("\n(PENDING: files not indexed yet; the app indexes them in the background at start, only new or changed "
          "files after the first time)")
    return 0


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("collections", help="list the collections the web app would serve, and how far each is indexed")
    p.add_argument("--corpus", action="append", default=[], metavar="[NAME=]DIR[:LANG][#QUESTIONS]",
                   help="a collection as app.py --corpus takes it (repeatable; added to MADQA_COLLECTIONS)")
    p.add_argument("--no-demo", action="store_true", help="as app.py --no-demo (MADQA_DEMO=0)")
    p.add_argument("--json", action="store_true")
