"""The web app's named API endpoints, driven through gradio_client against an in-process server.

Every streamed update of ``ask`` and ``compare`` is checked, not just the last one. No network,
no keys: the offline backend answers, and litellm's real client talks to a fake OpenAI-compatible
provider on 127.0.0.1 that the operator's settings list in ``MADQA_ALLOWED_API_BASES``.
"""

from __future__ import annotations

import gc
import json
import os
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from gradio_client import Client, handle_file

from madqa.plugins import collect, get_plugin_manager
from madqa.settings import Settings
from madqa.ui import build_app, launch_options
from madqa.ui.collection_picker import collection_status
from madqa.ui.messages import inert
from madqa.ui.sessions import SessionStore, new_session
from tests.browser_support import GRADIO_QUIRKS, close_app
from tests.conftest import DEMO_QUESTIONS, make_pdf
from tests.fake_provider import Provider, completion

pytestmark = GRADIO_QUIRKS  # Gradio's dropped event loops and closed sockets (see browser_support.py)
# After each event Gradio's queue summarises timings with a pandas option pandas deprecates; under
# filterwarnings=error that kills the summary task. The summary only feeds the API page's timings.
os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", str(10**9))
SECRET = "sk-test-NEVER-SHOW-0123456789"
EBIT_QUESTION = "What was the operating income (EBIT) in 2023, in EUR thousand?"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    p = Provider()
    try:
        yield p
    finally:
        p.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, provider: Provider) -> Iterator[SimpleNamespace]:
    home = tmp_path_factory.mktemp("ui-home")
    # one client address (127.0.0.1) makes every request here: the per-address limits are tested in test_ui_limits.py
    settings = Settings.from_env(env={}, home=home, allowed_api_bases=provider.url, web_requests_per_minute=100_000,
                                 web_jobs_per_client=100)
    registry = collect(get_plugin_manager(entry_points=False))
    app = build_app(settings, registry)
    options = {**launch_options(settings, app), "server_name": "127.0.0.1", "server_port": free_port(),
               "prevent_thread_lock": True, "quiet": True}
    app.launch(**options)
    gc.collect()  # the event loops Gradio dropped while building: reported now, inside this module
    backend = "offline"
    try:
        yield SimpleNamespace(url=f"http://127.0.0.1:{options['server_port']}/", home=home, backend=backend,
                              tmp=tmp_path_factory.mktemp("ui-files"), provider=provider)
    finally:
        close_app(app)
        gc.collect()


def client(server: SimpleNamespace) -> Client:
    return Client(server.url, verbose=False, download_files=False, analytics_enabled=False)


SUMMARY = re.compile(r"^(Working… )?(Searched \d+×|No search) · ")


def titles(chat: list[dict[str, Any]]) -> list[str | None]:
    """Each message's thought title; the trace's one-line summary (it changes as steps arrive) as SUMMARY."""
    out = [(m.get("metadata") or {}).get("title") for m in chat]
    return ["SUMMARY" if t and SUMMARY.match(t) else t for t in out]


def text(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else " ".join(part.get("text", "") for part in content)


def fake_model(server: SimpleNamespace) -> dict[str, str]:
    """Panel fields for litellm's real client talking to the fake provider (listed by the operator)."""
    return {"backend": "litellm", "model": "openai/local-model", "api_key": "sk-visitor-test",
            "api_base": server.provider.url}


def test_ask_streams_every_step_as_it_happens(server: SimpleNamespace) -> None:
    search = completion("search_documents", {"query": "consolidated income statement"})
    search["choices"][0]["message"]["content"] = "Looking for the income statement."
    server.provider.answer(search, completion("submit_answer", {
        "answer": ["148,612"], "citations": [{"file": "finance/annual_report_2024.pdf", "page": 6}]}))
    job = client(server).submit(question="What was the total revenue in 2024?", history=[], api_name="/ask",
                                **fake_model(server))
    job.result(timeout=120)
    updates = job.outputs()
    # (question box, chat, pages found, cited pages)
    assert updates[0][0] == ""  # the question box is cleared at once (and then left alone)
    first_chat = updates[0][1]
    assert first_chat[0]["role"] == "user" and titles(first_chat)[-1] == "Starting"
    settled = [[t for t in titles(u[1]) if t not in ("Starting", "Searching", "Reading the pages", "Thinking")]
               for u in updates]
    # each step arrived in its own update, in order
    wanted = [None, "SUMMARY", "Model · step 1", "Search 1: consolidated income statement", "Model · step 2", None]
    for k in range(2, len(wanted) + 1):
        assert wanted[:k] in settled, f"no update ended after step {k - 1}: {settled}"
    final_chat, seen, cited = updates[-1][1], updates[-1][2], updates[-1][3]
    assert titles(final_chat) == wanted
    summary, search = final_chat[1], final_chat[3]
    read = re.match(r"Searched 1× · (\d+) pages? read", summary["metadata"]["title"])
    assert read and int(read.group(1)) == len(seen)  # a plain query also shows pages holding some of its words
    assert search["metadata"]["parent_id"] == summary["metadata"]["id"]  # steps fold under the summary
    assert search["metadata"]["status"] == "done" and "finance/annual\\_report\\_2024\\.pdf p\\.6" in \
        text(search).replace("<wbr>", "")  # a long name has places to wrap (ui.messages.md_page_label)
    after_search = next(u for u in updates if "Search 1: consolidated income statement" in titles(u[1]))
    assert after_search[2] and after_search[2][0]["caption"] == "p.6 · annual_report_2024.pdf (search 1)"
    answer = final_chat[-1]
    assert text(answer).startswith("**Answer:** 148,612")
    assert [o["label"] for o in answer["options"]] == ["📄 finance/annual_report_2024.pdf · p.6"]
    assert "Answered by" in text(answer)  # which backend answered, on every answer
    assert len(seen) >= 1 and [c["caption"] for c in cited] == ["p.6 · annual_report_2024.pdf"]
    page = httpx.get(cited[0]["image"]["url"], timeout=30)
    assert page.status_code == 200 and page.content[:4] == b"\x89PNG"


def test_ask_with_the_default_offline_config(server: SimpleNamespace) -> None:
    if server.backend != "offline":
        pytest.skip("the offline backend is not installed")
    job = client(server).submit(question=EBIT_QUESTION, history=[], api_name="/ask")
    job.result(timeout=120)
    updates = job.outputs()
    lengths = [len(u[1]) for u in updates]
    assert lengths == sorted(lengths) or all(a <= b + 1 for a, b in zip(lengths, lengths[1:], strict=False))
    final = updates[-1][1]
    assert any(t and t.startswith("Search 1:") for t in titles(final))
    assert titles(final)[-1] is None and "Answer" in text(final[-1])


def test_a_key_given_in_the_browser_is_never_shown(server: SimpleNamespace) -> None:
    server.provider.answer()  # 401, echoing the key in the provider's message
    job = client(server).submit(question="Anything?", history=[], api_name="/ask",
                                **{**fake_model(server), "api_key": SECRET})
    job.result(timeout=60)
    for update in job.outputs():
        assert SECRET not in json.dumps(update)
    final = job.outputs()[-1][1]
    assert "⚠ Problem in backend · step 1" in titles(final) and "could not answer" in text(final[-1])


def test_bad_settings_are_readable_errors(server: SimpleNamespace) -> None:
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="cannot tell the provider of model"):
        client(server).predict(question="Anything?", history=[], backend="litellm", model="no-provider",
                               api_name="/ask")
    with pytest.raises(AppError, match="scripted is not in the list of choices"):  # test-only: not offered
        client(server).predict(question="Anything?", history=[], backend="scripted", api_name="/ask")
    with pytest.raises(AppError, match="nope is not in the list of choices"):
        client(server).predict(question="Anything?", history=[], config="nope", api_name="/ask")
    with pytest.raises(AppError, match="Type a question"):
        client(server).predict(question="  ", history=[], api_name="/ask")
    with pytest.raises(AppError, match="at most 2,000 characters"):  # the box's limit holds for API clients too
        client(server).predict(question="why " * 501, history=[], api_name="/ask")


def test_a_typed_api_base_may_not_reach_private_addresses(server: SimpleNamespace) -> None:
    """Issue 12 item 1 (SSRF): with the visitor's own key, a typed api_base resolving to loopback,
    private, link-local (cloud metadata) or reserved addresses is refused before anything is sent."""
    from gradio_client.exceptions import AppError

    other = Provider()  # a listening server the operator did not list: it must receive nothing
    try:
        port = other.url.split(":")[2].split("/")[0]
        bases = [other.url, f"http://localhost:{port}/v1", f"http://[::1]:{port}/v1", f"http://2130706433:{port}/v1",
                 f"http://[::ffff:127.0.0.1]:{port}/v1", "http://169.254.169.254/latest/meta-data/",
                 "http://10.0.0.1:8000/v1", "http://192.168.1.1/v1", "http://100.64.0.1/v1", "http://0.0.0.0:8000/v1",
                 "http://[fd00:ec2::254]/v1"]
        for base in bases:
            with pytest.raises(AppError, match="api_base must be a public address"):
                client(server).predict(question="Hi?", history=[], backend="litellm", model="openai/local-model",
                                       api_key="sk-visitor", api_base=base, api_name="/ask")
        for base in ("file:///etc/passwd", "gopher://127.0.0.1/", f"http://user:pw@127.0.0.1:{port}/v1"):
            with pytest.raises(AppError, match="api_base (must be an http|cannot carry)"):
                client(server).predict(question="Hi?", history=[], backend="litellm", model="openai/local-model",
                                       api_key="sk-visitor", api_base=base, api_name="/ask")
        assert other.requests() == 0
    finally:
        other.close()


def test_compare_runs_both_configs_at_once_and_scores_them(server: SimpleNamespace) -> None:
    job = client(server).submit(question=EBIT_QUESTION, question_id="demo-002", a_backend=server.backend,
                                b_backend=server.backend, b_top_k=3, api_name="/compare")
    table = job.result(timeout=180)[2]
    updates = job.outputs()
    assert len(updates) >= 3
    for side in (0, 1):
        final = updates[-1][side]
        shown = inert(EBIT_QUESTION)  # as text, never as HTML or Markdown
        assert final[0]["content"] == [{"text": shown, "type": "text"}] or text(final[0]) == shown
        assert titles(final)[-1] is None and ("Answer" in text(final[-1]) or "No answer" in text(final[-1]))
    assert table["headers"] == ["", "A: offline", "B: offline[top_k=3]"]
    rows = {r[0]: r[1:] for r in table["data"]}
    assert {"answer", "citations", "steps", "query drift", "time (s)", "ANLS*", "right?"} <= set(rows)
    assert not {"tokens", "cost (USD)"} & set(rows)  # the offline baseline used no model: hidden, not "0"
    assert all(0.0 <= float(v) <= 1.0 for v in rows["ANLS*"])
    assert rows["gold answer: 15,005"] == ["", ""]  # shown once, not per column


def test_compare_without_a_gold_question_has_no_score(server: SimpleNamespace) -> None:
    table = client(server).predict(question="Who signed the board minutes?", question_id=None,
                                   a_backend=server.backend, b_backend=server.backend, api_name="/compare")[2]
    assert "ANLS*" not in {r[0] for r in table["data"]}


def test_evaluate_reports_metrics_plots_and_downloads(server: SimpleNamespace) -> None:
    result = client(server).predict(question_file=None, configs=["offline"], limit=3, workers=2,
                                    api_key=SECRET, api_name="/evaluate")
    status, cards, metrics, accuracy, kuiper, errors, per_question, predictions, report, gap, nothing, files, scores \
        = result
    assert scores["headers"][:4] == ["config", "accuracy", "ANLS* (answer similarity)", "page F1"]
    assert [r[0] for r in scores["data"]] == ["offline"]  # a row per config
    assert gap["visible"] is False  # no oracle asked for: no empty "Oracle gap" frame
    assert gap["value"]["data"] in ([], [[]]) or not any(gap["value"]["data"])
    assert "Ran 3 questions of **demo questions** through 1 config on **the demo corpus**" in status
    assert "Accuracy" in cards and "Page F1" in cards and "Evidence recall" in cards
    rows = {r[0]: r[1:-1] for r in metrics["data"]}
    assert metrics["headers"] == ["metric", "offline", "what it means"] and rows["questions scored"] == ["3"]
    assert "accuracy" in rows and not any("_" in name for name in rows)  # plain words, no snake_case
    assert len(per_question["data"]) == 3
    ids = [r[1] for r in per_question["data"]]
    assert ids == sorted(ids)
    for plot in (accuracy, kuiper, errors):
        assert plot is not None
    downloaded = {}
    for name, info in (("predictions", predictions), ("report", report), ("config", files[0])):
        response = httpx.get(info["url"], timeout=30)
        assert response.status_code == 200 and SECRET not in response.text
        downloaded[name] = response.text
    lines = [json.loads(line) for line in downloaded["predictions"].splitlines()]
    assert len(lines) == 3 and {r["config"] for r in lines} == {"offline"}
    assert {r["id"] for r in lines} <= {q["id"] for q in map(json.loads, DEMO_QUESTIONS.read_text().splitlines())}
    assert json.loads(downloaded["report"])["results"]["offline"]["overall"]["n"] == 3
    assert 'name = "offline"' in downloaded["config"] and "madqa run --config" in downloaded["config"]


def test_evaluate_an_uploaded_question_set(server: SimpleNamespace) -> None:
    path = server.tmp / "mine.jsonl"
    path.write_text(json.dumps({"id": "q1", "question": EBIT_QUESTION, "answer_variants": [["15,005"]],
                                "evidence": [{"document": "finance/annual_report_2024.pdf", "page": 6}]}) + "\n"
                    + "{broken\n", encoding="utf-8")
    status = client(server).predict(question_file=handle_file(str(path)), configs=["offline"],
                                    api_name="/evaluate")[0]
    assert "Ran 1 question of **mine\\.jsonl**" in status and "left out" in status


def test_a_broken_question_file_is_named_without_server_paths(server: SimpleNamespace) -> None:
    """pyarrow's message quotes the path it read: Gradio's upload folder on the server."""
    from gradio_client.exceptions import AppError

    path = server.tmp / "broken.parquet"
    path.write_bytes(b"PAR1" + b"\0" * 64 + b"PAR1")
    with pytest.raises(AppError) as caught:
        client(server).predict(question_file=handle_file(str(path)), configs=["offline"], api_name="/evaluate")
    message = str(caught.value)
    assert "broken.parquet" in message and "/tmp" not in message and "gradio" not in message.lower(), message


def test_uploads_belong_to_their_session_alone(server: SimpleNamespace) -> None:
    good = make_pdf(server.tmp / "up" / "zorblax report.pdf", ["The zorblax quarterly widget count was 4711 units."])
    bad = server.tmp / "up" / "notes.pdf"
    bad.write_bytes(b"this is not a pdf")
    owner, stranger = client(server), client(server)
    results, choice, docs, summary, hits, header, files = owner.predict(
        paths=[handle_file(str(good)), handle_file(str(bad))], api_name="/add_documents")
    assert choice == "mine" and files is None and hits["data"] == []
    assert results["data"] == [["zorblax report.pdf", "indexed", 1, ""],
                               ["notes.pdf", "failed", "", "not a PDF (no %PDF header)"]]
    assert docs["data"][0][:6] == ["zorblax report.pdf", 1, 1, 0, 0, "text: 1"]
    assert "your uploads" in header and "1 document, 1 page" in header
    assert owner.predict(text="zorblax", api_name="/search_corpus")["data"][0][:2] == ["zorblax report.pdf", 1]
    assert stranger.predict(text="zorblax", api_name="/search_corpus")["data"] == []
    answer = owner.predict(question="How many zorblax widgets were counted?", history=[], api_name="/ask")[1][-1]
    if server.backend == "offline":
        assert "4711" in text(answer) and answer["options"][0]["label"] == "📄 zorblax report.pdf · p.1"
    folders = [p for p in (server.home / "uploads").iterdir() if (p / "docs").is_dir()]
    assert sorted(p.name for f in folders for p in (f / "docs").iterdir()) == ["zorblax report.pdf"]


def test_sessions_are_cleaned_up(tmp_path: Path) -> None:
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    store = SessionStore(settings, collect(get_plugin_manager(entry_points=False)), tmp_path / "no-demo")
    session = new_session()
    pdf = make_pdf(tmp_path / "a.pdf", ["alpha beta gamma"])
    outcome = store.add_files(session["token"], [("../../a.pdf", pdf)] * 2)
    assert [f.saved_as for f in outcome.files] == ["a.pdf", "a (2).pdf"]
    assert store.own_corpus(session["token"]) is not None
    store.forget(session).join(30)
    assert not (settings.home / "uploads" / session["token"]).exists()
    assert store.own_corpus(session["token"]) is None
    store.demo.start()
    assert store.demo.wait(30) and "unavailable" in collection_status(store.demo)
    other = new_session()
    store.add_files(other["token"], [("b.pdf", pdf)])
    assert store.sweep(max_age_s=3600) == 0 and store.sweep(max_age_s=-1) == 1


def test_forgetting_a_session_never_blocks_or_raises_in_gradios_event_loop(tmp_path: Path) -> None:
    """Gradio calls the delete callback on its event loop with no try: it must return at once, even
    while an indexing job holds the session's lock, and a removal that fails must not raise there."""
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    store = SessionStore(settings, collect(get_plugin_manager(entry_points=False)), tmp_path / "no-demo")
    session = new_session()
    store.add_files(session["token"], [("a.pdf", make_pdf(tmp_path / "a.pdf", ["alpha beta gamma"]))])
    folder = settings.home / "uploads" / session["token"]
    with store._lock(session["token"]):  # an indexing job of this session still runs
        thread = store.forget(session)
        assert thread is not None and thread.is_alive() and folder.exists()
    thread.join(30)
    assert not folder.exists()
    assert store.forget({"token": "../../etc"}) is None and store.forget(None) is None
    broken = new_session()
    store.add_files(broken["token"], [("b.pdf", tmp_path / "a.pdf")])
    store.remove_all = lambda token: 1 / 0  # type: ignore[method-assign]
    store.forget(broken).join(30)  # the error stays in the thread; the sweeper removes the folder later
    assert (settings.home / "uploads" / broken["token"]).exists()


def test_the_sweeper_comes_at_least_once_per_lifetime(tmp_path: Path) -> None:
    """With a 2 s lifetime and a 600 s interval, uploads still go within a few seconds: the
    sweeper is the guarantee when Gradio's own expiry has stopped."""
    settings = Settings.from_env(env={}, home=tmp_path / "home")
    store = SessionStore(settings, collect(get_plugin_manager(entry_points=False)), tmp_path / "no-demo")
    session = new_session()
    store.add_files(session["token"], [("a.pdf", make_pdf(tmp_path / "a.pdf", ["alpha beta gamma"]))])
    folder = settings.home / "uploads" / session["token"]
    store.start_sweeping(600, 2)
    try:
        deadline = time.monotonic() + 60
        while folder.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not folder.exists()
    finally:
        store.stop_sweeping()


def test_old_page_images_are_pruned(tmp_path: Path) -> None:
    from madqa.ui.pages import prune

    old, new = tmp_path / "old.png", tmp_path / "new.png"
    old.write_bytes(b"x")
    new.write_bytes(b"y")
    os.utime(old, (0, 0))
    assert prune(tmp_path, max_age_s=3600) == 1 and not old.exists() and new.exists()


def test_a_document_without_searchable_text_is_flagged(tmp_path: Path) -> None:
    from madqa.ui.corpus import documents_table

    settings = Settings.from_env(env={}, home=tmp_path / "home")
    store = SessionStore(settings, collect(get_plugin_manager(entry_points=False)), tmp_path / "no-demo")
    token = new_session()["token"]
    blank = make_pdf(tmp_path / "blank.pdf", [""])
    outcome = store.add_files(token, [("blank.pdf", blank)])
    assert outcome.files[0].status == "indexed" and "no searchable text" in outcome.files[0].detail
    table, summary = documents_table(store.own_corpus(token))
    assert table.values.tolist()[0][:6] == ["blank.pdf", 1, 0, 0, 1, "blank: 1"]  # a blank page: nothing to OCR
    assert "No searchable text" in summary and "blank\\.pdf" in summary  # Markdown-escaped
