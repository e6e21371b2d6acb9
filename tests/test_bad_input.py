"""Bad input at every entry point (Python API and CLI): odd PDFs, odd names, odd queries, odd questions,
odd model output. Each gets a plain message or a row saying what happened; the rest proceeds.

The web app's entry points are in test_app_security.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from madqa.corpus import Corpus
from madqa.evaluation.runner import run_batch
from madqa.index import ingest
from madqa.ocr import MAX_OCR_PIXELS, MAX_OCR_SIDE, ocr_dpi
from madqa.render import render_page
from madqa.settings import load_config
from madqa.ui.sessions import SessionStore, new_session, safe_upload_name
from tests.conftest import REPO, make_pdf

HAS_TESSERACT = shutil.which("tesseract") is not None
CLI_ENV_KEYS = ("PATH", "HOME", "LANG", "OMP_THREAD_LIMIT", "LITELLM_LOCAL_MODEL_COST_MAP", "GRADIO_ANALYTICS_ENABLED")


def cli(*argv: str, home: Path, timeout: int = 120, **env: str) -> subprocess.CompletedProcess:
    base = {k: os.environ[k] for k in CLI_ENV_KEYS if k in os.environ}
    return subprocess.run([sys.executable, "-W", "error", "-m", "madqa", *argv], capture_output=True, text=True,
                          env={**base, "MADQA_HOME": str(home), **env}, cwd=REPO, timeout=timeout)


def tree(root: Path, skip: Path | None = None) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` (except under ``skip``) with its size and mtime."""
    out = {}
    for path in root.rglob("*"):
        if skip is not None and (path == skip or skip in path.parents):
            continue
        if path.is_file() or path.is_symlink():
            st_ = path.lstat()
            out[str(path.relative_to(root))] = (st_.st_size, st_.st_mtime_ns)
    return out


# --- files ---------------------------------------------------------------------------------------


def test_thousands_of_pages_and_absurd_page_sizes(tmp_path, settings, registry):
    root = tmp_path / "docs"
    root.mkdir()
    many = pymupdf.open()
    for n in range(3000):
        many.new_page(width=90, height=90).insert_text((4, 20), f"leaf {n} word{n}", fontsize=6)
    many.save(root / "many.pdf")
    huge = pymupdf.open()
    huge.new_page(width=14400, height=14400).insert_text((72, 7200), "colossal poster text", fontsize=400)
    huge.new_page(width=1, height=14400)  # a sliver, 1 pt wide
    huge.new_page(width=14400, height=1)
    huge.save(root / "huge.pdf")
    report = ingest(root, settings, registry, ocr="never")
    assert report.failures == [] and report.pages == 3003
    corpus = Corpus.open(root, settings.corpora_dir)
    retriever = registry.create("retriever", "whoosh", corpus, {})
    assert [(h.file, h.page) for h in retriever.search("word2999").hits] == [("many.pdf", 3000)]
    assert [(h.file, h.page) for h in retriever.search("colossal").hits] == [("huge.pdf", 1)]
    for page in (1, 2, 3):  # every page renders, within the pixel budget, however absurd its shape
        image = render_page(corpus, "huge.pdf", page, settings)
        assert 1 <= image.width * image.height <= settings.image_budget_px
        assert min(image.width, image.height) >= 1 and image.data[:4] == b"\x89PNG"
    image = render_page(corpus, "many.pdf", 3000, settings, budget_px=90_000)
    assert image.width * image.height <= 90_000


def test_ocr_resolution_is_capped_for_huge_pages():
    assert ocr_dpi(612, 792, 300) == 300  # a letter page: unchanged
    for width, height in ((14400, 14400), (1, 14400), (14400, 1), (3000, 3000), (9000, 300)):
        dpi = ocr_dpi(width, height, 300)
        px_w, px_h = width / 72 * dpi, height / 72 * dpi
        assert 1 <= dpi < 300 and px_w * px_h <= MAX_OCR_PIXELS and max(px_w, px_h) <= MAX_OCR_SIDE


OCR_CHILD = """
import json, resource, sys
from pathlib import Path
from madqa.corpus import Corpus
from madqa.index import ingest
from madqa.plugins import collect, get_plugin_manager
from madqa.settings import Settings
settings = Settings.from_env(env={}, home=Path(sys.argv[2]))
report = ingest(sys.argv[1], settings, collect(get_plugin_manager(entry_points=False)), ocr="auto")
corpus = Corpus.open(sys.argv[1], settings.corpora_dir)
print(json.dumps({"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "ocr": report.ocr_pages,
                  "failures": report.failures, "text": corpus.page_text("poster.pdf", 1)}))
"""


@pytest.mark.skipif(not HAS_TESSERACT, reason="tesseract-ocr is not installed")
def test_ocr_of_a_huge_scanned_page_stays_within_memory(tmp_path):
    """A 3000 pt square scan: OCR'd at 300 dpi it took 2 GB; now the page image is capped."""
    root = tmp_path / "docs"
    root.mkdir()
    src = pymupdf.open()
    page = src.new_page(width=3000, height=3000)
    page.insert_text((100, 1500), "Hello OCR world", fontsize=90)
    scan = pymupdf.open()
    scan.new_page(width=3000, height=3000).insert_image(pymupdf.Rect(0, 0, 3000, 3000),
                                                       stream=page.get_pixmap(dpi=72).tobytes("png"))
    scan.save(root / "poster.pdf")
    proc = subprocess.run([sys.executable, "-c", OCR_CHILD, str(root), str(tmp_path / "home")], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["failures"] == [] and result["ocr"] == 1 and "OCR" in result["text"]
    assert result["rss_mb"] < 1000, result


@hsettings(max_examples=300, deadline=None)
@given(st.text(max_size=300) | st.lists(st.sampled_from(["..", ".", "/", "\\", "\x00", "\n", "\x1b", "\u202e",
                                                          "a", "é", "C:", ".pdf", " ", "~", "$HOME"]), max_size=30)
       .map("".join))
def test_upload_names_never_become_paths(name):
    taken = ["a.pdf", "document.pdf"]
    safe = safe_upload_name(name, taken)
    folder = Path("/srv/uploads/token/docs")
    assert (folder / safe).parent == folder and Path(safe).name == safe
    assert safe.endswith(".pdf") and not safe.startswith((".", "-", " ")) and ".." not in safe
    assert "/" not in safe and "\\" not in safe and safe.lower() not in taken
    assert all(ch.isprintable() for ch in safe) and len(safe) <= 120


def test_uploads_with_crafted_names_stay_in_the_session_folder(tmp_path, settings, registry):
    pdf = make_pdf(tmp_path / "src" / "x.pdf", ["crafted name quetzal"])
    before = tree(tmp_path, skip=settings.home)
    store = SessionStore(settings, registry, tmp_path / "no-demo")
    token = new_session()["token"]
    names = ["../../../escape.pdf", "/etc/abs.pdf", "..\\..\\win.pdf", "ctl\x01\x1b[31m.pdf", "\u202egnp.pdf",
             ".hidden.pdf", "", "x" * 500 + ".pdf", "a\x00b.pdf", "a/b/../../c.pdf", "notes.txt", "résumé.pdf"]
    outcome = store.add_files(token, [(n, pdf) for n in names])
    folder = store.folder(token)
    saved = sorted(p.name for p in folder.iterdir())
    assert len(saved) == len(names) and all(f.status == "indexed" for f in outcome.files), outcome.files
    assert sorted(f.saved_as for f in outcome.files) == saved
    for name in saved:
        assert name == safe_upload_name(name) and (folder / name).resolve().parent == folder.resolve()
    assert tree(tmp_path, skip=settings.home) == before  # nothing written outside MADQA_HOME
    assert {p.name for p in (settings.home / "uploads").iterdir()} == {token}
    hits = registry.create("retriever", "whoosh", store.own_corpus(token), {}).search("quetzal", 20).hits
    assert {h.file for h in hits} == set(saved)


def test_cli_index_reports_every_bad_file_and_keeps_what_was_stored(tmp_path):
    home = tmp_path / "home"
    root = tmp_path / "docs"
    make_pdf(root / "good.pdf", ["the good document about okapis"])
    make_pdf(root / "later.pdf", ["a second good document about tapirs"])
    assert cli("index", str(root), "--ocr", "never", home=home).returncode == 0
    outside = make_pdf(tmp_path / "outside" / "private.pdf", ["private document about wombats"])
    (root / "link-out.pdf").symlink_to(outside)  # a link out of the corpus folder: never followed
    (root / "ctl\x07bell.pdf").write_bytes((root / "good.pdf").read_bytes())
    (root / "line\nbreak.pdf").write_bytes((root / "good.pdf").read_bytes())
    (root / "zero.pdf").write_bytes(b"")
    (root / "text.pdf").write_text("not a pdf")
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "locked")
    doc.save(root / "locked.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="pw", owner_pw="pw")
    (root / "later.pdf").write_bytes((root / "later.pdf").read_bytes()[:200])  # was good, now truncated
    docs_before = tree(root)
    proc = cli("index", str(root), "--ocr", "never", "--json", home=home)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    failed = {f["file"]: f["reason"] for f in json.loads(proc.stdout)["failures"]}
    assert failed == {
        "ctl\x07bell.pdf": "file name contains control characters; rename it",
        "line\nbreak.pdf": "file name contains control characters; rename it",
        "zero.pdf": "empty file (0 bytes)",
        "text.pdf": "not a PDF (no %PDF header)",
        "locked.pdf": "encrypted PDF (needs a password)",
        "later.pdf": failed.get("later.pdf", "missing"),
    } and failed["later.pdf"].startswith("corrupt PDF")
    assert tree(root) == docs_before  # the corpus folder is only read
    search = cli("search", "--corpus", str(root), "okapis OR wombats OR tapirs", "--json", home=home)
    assert [h["file"] for h in json.loads(search.stdout)] == ["good.pdf"]  # no link-out, no broken later.pdf
    again = cli("index", str(root), "--ocr", "never", home=home)  # a rerun: the same report, nothing lost
    assert again.returncode == 1 and "indexed 1 files" in again.stdout
    assert "failed: zero.pdf: empty file (0 bytes)" in again.stderr


def test_file_names_from_users_are_looked_up_never_opened(tmp_path, settings, registry):
    """Render and citation lookups take manifest names only: ``..``, absolute paths and odd names are refused."""
    root = tmp_path / "docs"
    make_pdf(root / "sub" / "a.pdf", ["alpha"])
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    secret = make_pdf(tmp_path / "secret.pdf", ["outside the corpus"])
    for name in ("../secret.pdf", str(secret), "sub/../../secret.pdf", "sub/./a.pdf", "sub\\a.pdf", "a.pdf\x00",
                 "", "sub/a.pdf/"):
        with pytest.raises(Exception, match="no file|not in|does not exist|cannot") as caught:
            render_page(corpus, name, 1, settings)
        assert type(caught.value).__name__ == "RenderError"
    out = tmp_path / "page.png"
    proc = cli("render", "--corpus", str(root), "../secret.pdf", "1", "-o", str(out), home=settings.home)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and not out.exists()
    assert cli("render", "--corpus", str(root), "sub/a.pdf", "1", "-o", str(out), home=settings.home).returncode == 0


# --- queries -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    from madqa.plugins import collect, get_plugin_manager
    from madqa.settings import Settings

    tmp = tmp_path_factory.mktemp("fuzz")
    settings = Settings.from_env(env={}, home=tmp / "home")
    registry = collect(get_plugin_manager(entry_points=False))
    make_pdf(tmp / "docs" / "a.pdf", ["Revenue of the annual report for 2024.", "Bell 407 engine notes."])
    make_pdf(tmp / "docs" / "b.pdf", ["The incorporation date was 12 March 2001."])
    ingest(tmp / "docs", settings, registry, ocr="never")
    return registry.create("retriever", "whoosh", Corpus.open(tmp / "docs", settings.corpora_dir), {})


TOKENS = ["AND", "OR", "NOT", "ANDNOT", "ANDMAYBE", "revenue", "Bell", "2024", "report*", "?ell", '"', "(", ")",
          "*", "-", "+", "~", "~2", "^3", ":", "[", "]", "{", "}", "TO", "\\", "'", "/", "the", "é", "\x00", "😀"]


@hsettings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(TOKENS), max_size=12).flatmap(
    lambda words: st.sampled_from([" ", "", "  "]).map(lambda sep: sep.join(words))))
def test_fuzzed_operator_sequences_never_raise(retriever, query):
    """Whole tokens in any order: this found ``NOT NOT x``, which made Whoosh's parser raise IndexError."""
    result = retriever.search(query)
    assert isinstance(result.hits, tuple) and (result.hits or result.note)


@pytest.mark.parametrize("query", [
    "NOT NOT revenue", "revenue NOT NOT NOT Bell", "(" * 3000 + "revenue" + ")" * 3000, "NOT " * 3000 + "revenue",
    " ".join(f"word{n}" for n in range(5000)), " OR ".join(f"w{n}" for n in range(3000)), "a" * 100_000,
    "*" * 5000, "w*o*r*d*" * 500, '"' + "revenue " * 2000 + '"', "😀" * 10_000, "revenue\x00\ud800annual",
])
def test_very_long_and_odd_queries(retriever, query):
    result = retriever.search(query)
    assert isinstance(result.hits, tuple) and (result.hits or result.note)


def test_cli_search_odd_queries(tmp_path):
    make_pdf(tmp_path / "docs" / "a.pdf", ["the quarterly revenue table"])
    for query in ("NOT NOT revenue", "((((", "x" * 20_000):
        proc = cli("search", "--corpus", str(tmp_path / "docs"), query, "--json", home=tmp_path / "home")
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert isinstance(json.loads(proc.stdout), list)


# --- question files and questions ----------------------------------------------------------------


@pytest.fixture
def small_corpus(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "facts.pdf", ["The capybara count in 2024 was 412.", "Nothing here."])
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir)


def test_cli_run_reports_bad_question_lines_and_answers_the_rest(tmp_path, small_corpus, settings):
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join([
        json.dumps({"id": "ok1", "question": "What was the capybara count in 2024?"}),
        "{not json",
        json.dumps({"question": "no id"}),
        json.dumps({"id": "bad-type", "question": ["a", "list"]}),
        json.dumps({"id": "ok2", "question": "How many capybaras were counted?", "answer_variants": [["412"]]}),
        "[1, 2]",
    ]) + "\n", encoding="utf-8")
    out = tmp_path / "pred.jsonl"
    proc = cli("run", "--corpus", str(small_corpus.root), "--questions", str(questions), "-o", str(out),
               home=settings.home)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    for line in (2, 3, 4, 6):
        assert f"line {line}:" in proc.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == ["ok1", "ok2"] and all(r["error"] is None for r in rows)


@pytest.mark.parametrize("command", ["run", "eval"])
def test_a_question_file_that_cannot_be_read_is_one_line_and_exit_2(tmp_path, small_corpus, settings, command):
    (tmp_path / "q.csv").write_text("id,question\n1,What?\n", encoding="utf-8")
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps({"id": "1", "answer": ["x"], "citations": []}) + "\n", encoding="utf-8")
    for questions, said in ((tmp_path / "missing.jsonl", "cannot read"), (tmp_path / "q.csv", "unknown question file")):
        argv = (["run", "--corpus", str(small_corpus.root), "--questions", str(questions), "-o", str(tmp_path / "o.jsonl")]
                if command == "run" else ["eval", str(pred), "--gold", str(questions)])
        proc = cli(*argv, home=settings.home)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.strip().splitlines()[-1].startswith(f"madqa: {said}")
    assert not (tmp_path / "o.jsonl").exists()


def test_a_home_or_output_the_machine_will_not_write_is_one_line_not_a_traceback(tmp_path, small_corpus, settings):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    proc = cli("ask", "--corpus", str(small_corpus.root), "What was the capybara count?", home=blocker / "home")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(f"madqa: Not a directory: {blocker / 'home'}")
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q", "question": "What was the capybara count?"}) + "\n", encoding="utf-8")
    proc = cli("run", "--corpus", str(small_corpus.root), "--questions", str(questions), "-o",
               str(blocker / "pred.jsonl"), home=settings.home)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]  # the system's words ("File exists: .../a-file") and the path
    assert last.startswith("madqa: ") and str(blocker) in last, last


def test_run_batch_turns_malformed_questions_into_error_rows(small_corpus, registry, settings, tmp_path):
    config = load_config("offline").with_overrides(backend="scripted")
    script = [{"answer": ["412"], "citations": []}]
    items = [{"id": "good", "question": "Capybara count?"}, {"id": "no-text"}, "just a string", None,
             {"id": "num", "question": 7}, {"id": "blank", "question": "   "}]
    out = tmp_path / "pred.jsonl"
    rows = run_batch(items, small_corpus, config, registry, settings, out_path=out, workers=2,
                     backend_options={"script": script})
    assert len(rows) == 6 and len(out.read_text().splitlines()) == 6
    by_id = {r["id"]: r for r in rows if r["id"]}
    assert by_id["good"]["error"] is None and by_id["good"]["answer"] == ["412"]
    for row in rows:
        if row["id"] != "good":
            assert row["error"].startswith("input: ") and row["answer"] == []


# --- model output, through the real litellm code path (its offline mocks) --------------------------


SECRET = "sk-madqa-test-4f9c2b7e1d"


def litellm_row(corpus, registry, settings, replies, max_steps=3):
    import litellm  # noqa: F401 - imported here: it takes seconds and only these tests need it

    config = load_config("offline").with_overrides(backend="litellm", model="openai/gpt-4o-mini", max_steps=max_steps)
    options = {"mock_responses": replies, "api_key": SECRET, "sleep": lambda s: None}
    question = {"id": "q", "question": "What was the capybara count in 2024?"}
    [row] = run_batch([question], corpus, config, registry, settings, backend_options=options)
    json.dumps(row)  # always a valid row
    assert SECRET not in json.dumps(row)
    return row


def search_reply(query="capybara"):
    return {"tool_calls": [{"name": "search_documents", "arguments": {"query": query}}]}


def answer_reply(answer, citations):
    return {"tool_calls": [{"name": "submit_answer", "arguments": {"answer": answer, "citations": citations}}]}


def provider_errors():
    import litellm

    def make(kind, message="try later"):
        if kind is litellm.Timeout:
            return litellm.Timeout(message, model="gpt-4o-mini", llm_provider="openai")
        return kind(message, llm_provider="openai", model="gpt-4o-mini")

    return {
        "rate limit": ([make(litellm.RateLimitError)] * 4, "backend: openai rate-limited the request"),
        "timeout": ([make(litellm.Timeout)] * 4, "backend: openai did not answer in time"),
        "5xx": ([make(litellm.InternalServerError)] * 4, "backend: openai failed with a server error"),
        "unavailable": ([make(litellm.ServiceUnavailableError)] * 4, "backend: openai is overloaded or unavailable (HTTP 503)"),
        "bad key": ([make(litellm.AuthenticationError, f"Incorrect API key provided: {SECRET}")],
                    "backend: openai rejected the API key (authentication error)"),
    }


@pytest.mark.parametrize("kind", ["rate limit", "timeout", "5xx", "unavailable", "bad key"])
def test_provider_errors_end_in_a_row_that_says_what_happened(small_corpus, registry, settings, kind):
    replies, expected = provider_errors()[kind]
    row = litellm_row(small_corpus, registry, settings, [search_reply(), *replies])
    assert row["error"].startswith(expected) and row["refusal"] is False and row["answer"] == []  # failed, not refused
    assert row["search_history"][0]["query"] == "capybara"  # what happened before the failure is kept
    if kind == "bad key":
        # the provider, the kind of error and what fixes it; never the provider's text (it echoes the key)
        assert "Incorrect API key" not in row["error"] and SECRET not in row["error"]
        assert "OPENAI_API_KEY" in row["error"] and "backend.api_key_env" in row["error"]


def test_odd_model_output_ends_in_a_row_that_says_what_happened(small_corpus, registry, settings):
    invalid = litellm_row(small_corpus, registry, settings, ['{"answer": ["41', "{not json at all, " * 20,
                                                             "{not json at all, " * 20], max_steps=2)
    # a model whose answer cannot be read fails, after one repair turn; never a refusal that scores 0
    assert not invalid["refusal"] and invalid["error"].startswith("no answer could be read")
    ghost = litellm_row(small_corpus, registry, settings, [search_reply(), answer_reply(
        ["412"], [{"file": "ghost.pdf", "page": 1}, {"file": "facts.pdf", "page": 99}, {"file": "facts.pdf"}])])
    # the ghost citations are dropped; the answer is written on a page seen, so its citation moves there
    assert ghost["answer"] == ["412"] and ghost["citations"] == [{"file": "facts.pdf", "page": 1}]
    assert any("not on its cited page but on facts.pdf p.1" in f for f in ghost["flags"])
    flags = " | ".join(ghost["flags"])
    assert "'ghost.pdf' is not in the corpus" in flags and "page 99 of facts.pdf does not exist" in flags
    endless = litellm_row(small_corpus, registry, settings, [search_reply(f"capybara {n}") for n in range(4)])
    assert endless["iterations"] == 4 and not endless["refusal"]  # it still ends (one repair turn), and says why:
    assert "the model called search_documents when it had to answer" in endless["error"]
    empty = litellm_row(small_corpus, registry, settings, [search_reply(), answer_reply([], [])])
    assert empty["refusal"] is True and empty["answer"] == [] and empty["error"] is None
    silent = litellm_row(small_corpus, registry, settings, ["", "", ""], max_steps=2)
    assert silent["refusal"] is False and "the reply was empty" in silent["error"]
