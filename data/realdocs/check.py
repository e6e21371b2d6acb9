#!/usr/bin/env python3
"""Check the real-document development set: the PDFs, the scans and every question against its pages.

Usage::

    python data/realdocs/check.py               # the default docs folder (run fetch.py first)
    python data/realdocs/check.py --docs DIR

Checks, and prints one line per problem (exit 1 when there is any):

- every PDF's sha256 and page count as pinned in ``fetch.py`` / ``make_scans.py``; scans have no text layer;
- ``questions.jsonl``: loads with madqa's own loader, a known ``kind``, evidence pages exist, and each
  answer variant's text appears (normalised: case, whitespace, ligatures, hyphenation, quotes) on one of
  its evidence pages (for a scan: on the source text recorded in ``scans_truth.json``);
- ``unanswerable.jsonl``: no evidence, no answer variants, and none of its ``absent_terms`` occurs as a word
  on any page (text layer and scans' source text).
Ends with the counts by kind.
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

import fetch  # noqa: E402
import make_scans  # noqa: E402

QUESTIONS = HERE / "questions.jsonl"
UNANSWERABLE = HERE / "unanswerable.jsonl"
KINDS = ("ordinary", "synonym", "abbreviation", "lookalike", "multihop", "scan")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2032": "'",
                         "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
                         "\u00a0": " ", "`": "'"})


def normalise(text: str) -> str:
    """Lower-case, NFKC (ligatures such as 'ﬁ' become 'fi'), straight quotes and dashes, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).lower()
    return re.sub(r"\s+", " ", text).strip()


def page_forms(text: str) -> tuple[str, ...]:
    """The forms an answer may be found in: hyphenated line ends joined ("engrav-\\ning" -> "engraving")
    and kept ("user-\\ndefined" -> "user-defined"), and the text with all spaces removed (for answers a
    PDF spaces out letter by letter)."""
    raw = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    joined = normalise(re.sub(r"-\s*\n\s*", "", raw))
    kept = normalise(re.sub(r"-\s*\n\s*", "-", raw))
    return joined, kept, normalise(raw).replace(" ", "")


def found(answer: str, forms: tuple[str, ...]) -> bool:
    """True when ``answer`` (normalised) occurs in one of the page forms; the last form is spaceless."""
    needle = normalise(answer)
    return needle in forms[0] or needle in forms[1] or needle.replace(" ", "") in forms[2]


def mentions(term: str, forms: tuple[str, ...]) -> bool:
    """True when ``term`` occurs as a whole word (or words) on a page: "webp" is not in "web page", nor
    "heic" in "theic"; hyphenated line ends are tried joined and kept."""
    pattern = re.compile(r"(?<![a-z0-9])" + re.escape(normalise(term)) + r"(?![a-z0-9])")
    return any(pattern.search(form) for form in forms[:2])


def pdf_texts(docs: Path, names: list[str]) -> dict[str, list[str]]:
    """The page texts of the named PDFs under ``docs`` (1-based page i is item i-1)."""
    import pymupdf

    texts: dict[str, list[str]] = {}
    for name in names:
        with pymupdf.open(docs / name) as doc:
            texts[name] = [page.get_text("text") for page in doc]
    return texts


def page_texts(docs: Path) -> dict[str, list[str]]:
    """Every document's page texts (1-based page i is item i-1); scans give their source text."""
    import json

    texts = pdf_texts(docs, [source.name for source in fetch.DOCS])
    truth = json.loads(make_scans.truth_path(docs).read_text(encoding="utf-8"))
    for scan in make_scans.SCANS:
        texts[scan.name] = [p["text"] for p in truth[scan.name]["pages"]]
    return texts


def check_pdfs(docs: Path, entries: list[tuple[str, str, int]]) -> list[str]:
    """Problems with the PDFs (name, sha256, pages) under ``docs``: their sha256, page count, and a scan's
    (``scans/...``) text layer, which it must not have."""
    import pymupdf

    problems = []
    for name, sha, pages in entries:
        try:
            fetch.check_sha(docs / name, sha, name)
        except fetch.FetchError as exc:
            problems.append(str(exc))
            continue
        with pymupdf.open(docs / name) as doc:
            if doc.page_count != pages:
                problems.append(f"{name}: {doc.page_count} pages, expected {pages}")
            if name.startswith("scans/") and any(page.get_text().strip() for page in doc):
                problems.append(f"{name}: has a text layer (a scan must be image-only)")
    return problems


def check_files(docs: Path) -> list[str]:
    """Problems with the PDFs themselves: sha256, page count, scans' missing text layer."""
    entries = [(s.name, s.sha256, s.pages) for s in fetch.DOCS]
    entries += [(s.name, s.sha256, len(s.pages)) for s in make_scans.SCANS]
    problems = check_pdfs(docs, entries)
    if not make_scans.truth_path(docs).is_file():
        problems.append(f"{make_scans.truth_path(docs)}: missing (run fetch.py)")
    return problems


def check_questions(path: Path, texts: dict[str, list[str]]) -> tuple[list[str], Counter]:
    """Problems with answerable questions, and their counts by kind."""
    from madqa.evaluation.questions import load_questions

    questions, problems = load_questions(path)
    problems = [f"{path.name}: {p}" for p in problems]
    kinds: Counter = Counter()
    forms_cache: dict[tuple[str, int], tuple[str, ...]] = {}
    for q in questions:
        where = f"{path.name} {q['id']}"
        kind = q.get("kind")
        if kind not in KINDS:
            problems.append(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
        kinds[kind] += 1
        if not q["evidence"] or not q["answer_variants"]:
            problems.append(f"{where}: needs evidence and answer_variants")
            continue
        forms = []
        for ev in q["evidence"]:
            pages = texts.get(ev["document"])
            if pages is None:
                problems.append(f"{where}: unknown document {ev['document']!r}")
            elif not 1 <= ev["page"] <= len(pages):
                problems.append(f"{where}: {ev['document']} has no page {ev['page']}")
            else:
                key = (ev["document"], ev["page"])
                forms_cache.setdefault(key, page_forms(pages[ev["page"] - 1]))
                forms.append(forms_cache[key])
        if kind == "scan" and not any(ev["document"].startswith("scans/") for ev in q["evidence"]):
            problems.append(f"{where}: a scan question needs evidence on a scan")
        for variant in q["answer_variants"]:
            for item in variant:
                if forms and not any(found(item, f) for f in forms):
                    problems.append(f"{where}: answer {item!r} is not on its evidence page(s)")
    return problems, kinds


def check_unanswerable(path: Path, texts: dict[str, list[str]]) -> tuple[list[str], int]:
    """Problems with the unanswerable questions (evidence or answers given, a key term found somewhere)."""
    from madqa.evaluation.questions import load_questions

    questions, problems = load_questions(path)
    problems = [f"{path.name}: {p}" for p in problems]
    everything = [(doc, i + 1, page_forms(t)) for doc, pages in texts.items() for i, t in enumerate(pages)]
    for q in questions:
        where = f"{path.name} {q['id']}"
        if q["evidence"] or q["answer_variants"] or q.get("kind") != "unanswerable":
            problems.append(f"{where}: needs kind 'unanswerable', evidence [] and answer_variants []")
        terms = q.get("absent_terms")
        if not isinstance(terms, list) or not terms:
            problems.append(f"{where}: needs a non-empty list 'absent_terms'")
            continue
        for term in terms:
            hits = [f"{doc} p.{page}" for doc, page, forms in everything if mentions(term, forms)]
            if hits:
                problems.append(f"{where}: {term!r} occurs on {', '.join(hits[:3])}"
                                + (f" and {len(hits) - 3} more" if len(hits) > 3 else ""))
    return problems, len(questions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=fetch.DEFAULT_OUT, help="docs folder (default: %(default)s)")
    args = parser.parse_args(argv)
    problems = check_files(args.docs)
    if problems:
        print("\n".join(problems))
        print(f"{len(problems)} problem(s) with the files; run data/realdocs/fetch.py")
        return 1
    texts = page_texts(args.docs)
    pages = sum(len(t) for t in texts.values())
    print(f"files: {len(texts)} PDFs ({len(make_scans.SCANS)} scans), {pages} pages, sha256 and page counts verified")
    kinds: Counter = Counter()
    if QUESTIONS.is_file():
        found_problems, kinds = check_questions(QUESTIONS, texts)
        problems += found_problems
    unanswerable = 0
    if UNANSWERABLE.is_file():
        found_problems, unanswerable = check_unanswerable(UNANSWERABLE, texts)
        problems += found_problems
    hard = sum(n for k, n in kinds.items() if k != "ordinary")
    print(f"questions: {sum(kinds.values())} ({kinds.get('ordinary', 0)} ordinary, {hard} hard: "
          + ", ".join(f"{k} {kinds.get(k, 0)}" for k in KINDS[1:]) + f"); unanswerable: {unanswerable}")
    if problems:
        print("\n".join(problems))
        print(f"{len(problems)} problem(s)")
        return 1
    print("all answers found on their evidence pages; no unanswerable key term found on any page")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
