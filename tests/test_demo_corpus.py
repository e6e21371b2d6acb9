"""The bundled demo corpus (data/demo): documents, questions, answers on evidence pages, determinism."""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
DOCS = DEMO / "docs"
QUESTIONS = DEMO / "questions.jsonl"
BUILD = DEMO / "build_demo.py"

# Image-only documents (no text layer); their answers are checked through OCR.
SCANNED = {"scans/field_service_report_fsr_24_1127.pdf"}

FIELDS = {"id": str, "question": str, "answer_variants": list, "evidence": list,
          "document_category": str, "domain": str}


def _pdfs() -> list[str]:
    return sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.pdf"))


def _load_questions() -> list[dict]:
    if not QUESTIONS.is_file():
        return []
    return [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _page_counts() -> dict[str, int]:
    counts = {}
    for rel in _pdfs():
        with pymupdf.open(DOCS / rel) as doc:
            counts[rel] = doc.page_count
    return counts


def _kind(q: dict) -> str:
    docs = {e["document"] for e in q["evidence"]}
    if len(docs) > 1:
        return "cross-document"
    if len({e["page"] for e in q["evidence"]}) > 1:
        return "cross-page"
    return "single-page"


def _norm(text: str) -> str:
    """Case-insensitive, whitespace-normalised."""
    return " ".join(text.lower().split())


_TOKEN = re.compile(r"[0-9a-z]+(?:[.,:/-][0-9a-z]+)*")


def _tokens(text: str) -> list[str]:
    """For OCR text: lower-case words and numbers; punctuation inside a token ("4.7.2", "e-17") is kept."""
    return _TOKEN.findall(text.lower())


def answer_found(answer: str, text: str, ocr: bool) -> bool:
    """Is ``answer`` on the page(s) whose text is ``text``?

    Text layers: substring after case and whitespace normalisation. OCR text: the answer's tokens
    must appear as a run of whole tokens, so stray punctuation and line breaks do not matter, but
    "4.7" does not match "4.7.2" and "5 hours" does not match "7.5 hours". Because MuPDF's OCR output
    sometimes glues words together, answers of 8+ letters/digits may also match with everything but
    letters and digits removed.
    """
    if not ocr:
        return _norm(answer) in _norm(text)
    a, t = _tokens(answer), _tokens(text)
    if not a:
        return False
    if any(t[i:i + len(a)] == a for i in range(len(t) - len(a) + 1)):
        return True
    squeezed = re.sub(r"[^0-9a-z]", "", answer.lower())
    return len(squeezed) >= 8 and squeezed in re.sub(r"[^0-9a-z]", "", text.lower())


def _tessdata() -> str | None:
    candidates = [os.environ.get("TESSDATA_PREFIX", "")]
    candidates += sorted(glob.glob("/usr/share/tesseract-ocr/*/tessdata"), reverse=True)
    candidates += ["/usr/share/tesseract-ocr/tessdata", "/usr/share/tessdata", "/usr/local/share/tessdata"]
    for folder in candidates:
        if folder and Path(folder, "eng.traineddata").is_file():
            return folder
    return None


ALL_QUESTIONS = _load_questions()
TEXT_QUESTIONS = [q for q in ALL_QUESTIONS if not any(e["document"] in SCANNED for e in q["evidence"])]
OCR_QUESTIONS = [q for q in ALL_QUESTIONS if any(e["document"] in SCANNED for e in q["evidence"])]


def _page_text(rel: str, page_no: int) -> str:
    with pymupdf.open(DOCS / rel) as doc:
        page = doc[page_no - 1]
        return page.get_text()


@pytest.fixture(scope="module")
def ocr_page_text():
    """OCR a page of a scanned document (cached); skips when Tesseract language data is missing."""
    tessdata = _tessdata()
    if tessdata is None:
        pytest.skip("Tesseract with English language data is not installed (eng.traineddata not found; "
                    "install tesseract-ocr and tesseract-ocr-eng or set TESSDATA_PREFIX): OCR checks skipped")
    cache: dict[tuple[str, int], str] = {}

    def ocr(rel: str, page_no: int) -> str:
        key = (rel, page_no)
        if key not in cache:
            with pymupdf.open(DOCS / rel) as doc:
                page = doc[page_no - 1]  # keep the page alive while its OCR text page is used
                tp = page.get_textpage_ocr(language="eng", dpi=300, full=True, tessdata=tessdata)
                cache[key] = page.get_text(textpage=tp)
                del tp
        return cache[key]

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OMP_THREAD_LIMIT", "1")
        mp.setenv("TESSDATA_PREFIX", tessdata)
        yield ocr


# ---------------------------------------------------------------------------------------------
# Documents
# ---------------------------------------------------------------------------------------------

def test_documents_open_and_are_big_enough():
    pdfs = _pdfs()
    assert len(pdfs) >= 6, pdfs
    counts = _page_counts()
    assert all(n >= 1 for n in counts.values()), counts
    assert sum(counts.values()) >= 40, counts
    assert any("/" in rel for rel in pdfs), "at least one document should live in a subfolder"
    assert all(re.fullmatch(r"[a-z0-9_./-]+", rel) for rel in pdfs), pdfs
    total_size = sum(p.stat().st_size for p in DOCS.rglob("*") if p.is_file())
    assert total_size < 3 * 1024 * 1024, total_size


def test_scanned_documents_have_no_text_layer():
    assert SCANNED <= set(_pdfs())
    for rel in SCANNED:
        with pymupdf.open(DOCS / rel) as doc:
            for page in doc:
                assert page.get_text().strip() == "", f"{rel} page {page.number + 1} has a text layer"
                assert len(page.get_images()) == 1, f"{rel} page {page.number + 1} should be one scanned image"


def test_born_digital_documents_have_text_on_every_page():
    for rel in sorted(set(_pdfs()) - SCANNED):
        with pymupdf.open(DOCS / rel) as doc:
            for page in doc:
                assert len(page.get_text().split()) >= 10, f"{rel} page {page.number + 1} has (almost) no text"


# ---------------------------------------------------------------------------------------------
# Questions
# ---------------------------------------------------------------------------------------------

def test_questions_file_is_valid():
    counts = _page_counts()
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    assert lines and all(line.strip() for line in lines), "one JSON object per line, no blank lines"
    ids = set()
    for n, line in enumerate(lines, start=1):
        q = json.loads(line)
        assert isinstance(q, dict), n
        assert set(q) == set(FIELDS), (n, sorted(q))
        for key, typ in FIELDS.items():
            assert isinstance(q[key], typ), (n, key)
        assert re.fullmatch(r"demo-\d{3}", q["id"]), q["id"]
        assert q["id"] not in ids, f"duplicate id {q['id']}"
        ids.add(q["id"])
        assert q["question"].strip() and q["document_category"].strip() and q["domain"].strip(), q["id"]
        assert q["answer_variants"], q["id"]
        for variant in q["answer_variants"]:
            assert isinstance(variant, list) and variant, q["id"]
            assert all(isinstance(a, str) and a.strip() for a in variant), q["id"]
        assert q["evidence"], q["id"]
        for ev in q["evidence"]:
            assert isinstance(ev, dict) and set(ev) == {"document", "page"}, q["id"]
            assert isinstance(ev["document"], str) and "\\" not in ev["document"], q["id"]
            assert not ev["document"].startswith("/"), q["id"]
            assert ev["document"] in counts, f"{q['id']}: unknown document {ev['document']}"
            page = ev["page"]
            assert isinstance(page, int) and not isinstance(page, bool), q["id"]
            assert 1 <= page <= counts[ev["document"]], f"{q['id']}: page {page} out of range"
        assert len({(e["document"], e["page"]) for e in q["evidence"]}) == len(q["evidence"]), q["id"]


def test_question_mix():
    assert len(ALL_QUESTIONS) >= 20
    kinds = [_kind(q) for q in ALL_QUESTIONS]
    assert kinds.count("cross-page") >= 4, kinds
    assert kinds.count("cross-document") >= 3, kinds
    assert kinds.count("single-page") >= len(ALL_QUESTIONS) // 2, kinds
    scanned_only = [q for q in OCR_QUESTIONS if all(e["document"] in SCANNED for e in q["evidence"])]
    assert len(scanned_only) >= 2, "at least two questions must be answerable from the scanned document alone"
    documents = {e["document"] for q in ALL_QUESTIONS for e in q["evidence"]}
    assert documents == set(_pdfs()), "every document should be the evidence of some question"


@pytest.mark.parametrize("q", TEXT_QUESTIONS, ids=[q["id"] for q in TEXT_QUESTIONS])
def test_answer_is_on_evidence_pages(q):
    text = "\n".join(_page_text(e["document"], e["page"]) for e in q["evidence"])
    assert any(all(answer_found(a, text, ocr=False) for a in variant) for variant in q["answer_variants"]), (
        f"{q['id']}: no answer variant {q['answer_variants']} found on {q['evidence']}")


@pytest.mark.parametrize("q", OCR_QUESTIONS, ids=[q["id"] for q in OCR_QUESTIONS])
def test_answer_is_on_scanned_evidence_pages(q, ocr_page_text):
    parts = []
    for e in q["evidence"]:
        parts.append(ocr_page_text(e["document"], e["page"]) if e["document"] in SCANNED
                     else _page_text(e["document"], e["page"]))
    text = "\n".join(parts)
    assert any(all(answer_found(a, text, ocr=True) for a in variant) for variant in q["answer_variants"]), (
        f"{q['id']}: no answer variant {q['answer_variants']} found on {q['evidence']} (OCR)")


def test_answer_check_rejects_wrong_answers():
    text = _page_text("finance/invoice_wf_2024_0817.pdf", 1)
    assert answer_found("13,463.66", text, ocr=False)
    assert answer_found("total  AMOUNT\n(EUR)", text, ocr=False)
    assert not answer_found("13,463.67", text, ocr=False)
    assert not answer_found("21%", text, ocr=False)
    ocr_like = "Firmware version: 4.7.2. | Time on site:\n7.5 hours\u201d | MartinHartmann"
    assert answer_found("4.7.2", ocr_like, ocr=True)
    assert answer_found("Martin Hartmann", ocr_like, ocr=True)
    assert answer_found("7.5 hours", ocr_like, ocr=True)
    assert not answer_found("4.7.3", ocr_like, ocr=True)
    assert not answer_found("4.7", ocr_like, ocr=True)
    assert not answer_found("5 hours", ocr_like, ocr=True)
    assert not answer_found("Jonas Weber", ocr_like, ocr=True)


def test_ocr_reads_the_scan_but_not_wrong_values(ocr_page_text):
    rel = next(iter(sorted(SCANNED)))
    text = ocr_page_text(rel, 1)
    assert answer_found("FIELD SERVICE REPORT", text, ocr=True), text
    assert answer_found("Stadtwerke Lindenau", text, ocr=True), text
    for wrong in ("4.7.3", "4.8.2", "Jonas Webber", "28 November 2024"):
        assert not answer_found(wrong, text, ocr=True), wrong


# ---------------------------------------------------------------------------------------------
# Determinism
# ---------------------------------------------------------------------------------------------

def _tree(folder: Path) -> dict[str, bytes]:
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in (folder / "docs").rglob("*") if p.is_file()}
    files["questions.jsonl"] = (folder / "questions.jsonl").read_bytes()
    return files


def test_generator_is_deterministic_and_matches_committed_files(tmp_path):
    outputs = []
    for name in ("a", "b"):
        out = tmp_path / name
        proc = subprocess.run([sys.executable, "-W", "error", str(BUILD), str(out)], capture_output=True,
                              text=True, timeout=300, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        outputs.append(_tree(out))
    first, second = outputs
    assert sorted(first) == sorted(second)
    for rel in first:
        assert first[rel] == second[rel], f"{rel} differs between two runs"
    committed = _tree(DEMO)
    assert sorted(committed) == sorted(first), "committed corpus has different files; rerun build_demo.py"
    stale = [rel for rel in first if committed[rel] != first[rel]]
    assert not stale, f"committed files differ from the generator output, rerun build_demo.py: {stale}"
