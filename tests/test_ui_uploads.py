"""A visitor's refused upload and broken files, through the served app (issue 25, breaks 4 and 5).

After an upload that adds no page the session keeps the corpus it searched (the demo) and its question is answered
(it got "No pages found" before: the session had switched to an empty "your uploads"); a broken question set in
the trajectory diff is named by its file name, never by the server's temporary path.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from gradio_client import Client, handle_file

from madqa.settings import Settings
from tests.browser_support import GRADIO_QUIRKS, served
from tests.conftest import DEMO_QUESTIONS, make_pdf

pytestmark = [pytest.mark.slow, *GRADIO_QUIRKS]
os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", str(10**9))  # as in test_ui_api.py


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    home = tmp_path_factory.mktemp("uploads-home")
    settings = Settings.from_env(env={}, home=home, upload_max_pages_per_file=2, web_requests_per_minute=100_000,
                                 web_jobs_per_client=100)
    with served(settings) as url:
        yield SimpleNamespace(url=url, home=home, files=tmp_path_factory.mktemp("uploads-files"))
    gc.collect()


def client(app: SimpleNamespace) -> Client:
    return Client(app.url, verbose=False, download_files=False, analytics_enabled=False)


def test_a_refused_upload_keeps_the_demo_and_its_question_is_answered(app: SimpleNamespace) -> None:
    visitor = client(app)
    bomb = make_pdf(app.files / "many pages.pdf", [f"page {i}" for i in range(1, 6)])  # over the 2-page limit
    results, choice, _, _, _, header, _ = visitor.predict(paths=[handle_file(str(bomb))], api_name="/add_documents")
    assert results["data"][0][1] == "failed" and "MADQA_UPLOAD_MAX_PAGES_PER_FILE" in results["data"][0][3]
    assert choice == "demo" and "Searching: the demo corpus" in header
    question = json.loads(DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines()[0])["question"]
    chat = visitor.predict(question=question, history=[], api_name="/ask")[1]
    assert "148" in json.dumps(chat)  # the demo's answer (148,612), from the demo corpus
    assert not any((app.home / "uploads").iterdir()) if (app.home / "uploads").exists() else True


def test_a_broken_question_set_in_the_diff_never_shows_a_server_path(app: SimpleNamespace) -> None:
    broken = app.files / "questions.parquet"
    broken.write_bytes(b"PAR1 this is no parquet file PAR1")
    a, b = app.files / "a.jsonl", app.files / "b.jsonl"
    for path in (a, b):
        path.write_text("{}\n", encoding="utf-8")
    with pytest.raises(Exception) as caught:  # gradio_client's AppError carries the message the page shows
        client(app).predict(handle_file(str(a)), handle_file(str(b)), handle_file(str(broken)), api_name="/diff")
    message = str(caught.value)
    assert "questions.parquet" in message and "/tmp" not in message and str(app.files) not in message
    assert "gradio" not in message.lower().replace("gradio_client", "")
