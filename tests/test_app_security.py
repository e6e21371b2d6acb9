"""The launched web app (``python app.py`` in a subprocess) against strangers: private uploads, crafted
requests, path traversal, and API keys that must not outlive the request that carried them.

A fake OpenAI-compatible server on 127.0.0.1 stands in for the model provider, so the real litellm
client sends the key over HTTP; the server records what it received (proof the key was used) and,
when told to, answers 401 with the key echoed in its message, as OpenAI does. Afterwards the app's
stdout/stderr, MADQA_HOME, Gradio's upload folder, the temp folder and every download are searched
for the key. The CLI gets the same treatment.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from gradio_client import Client, handle_file

from tests.app_process import stop, wait_until_serving
from tests.conftest import REPO, make_pdf
from tests.fake_provider import Provider, completion

SECRET = f"sk-madqa-test-{secrets.token_hex(8)}"
SERVER_KEY = f"sk-madqa-server-{secrets.token_hex(8)}"  # the operator's key, in the app's environment
UNIQUE = "quetzalcoatlus"
CLI_ENV_KEYS = ("PATH", "HOME", "LANG", "OMP_THREAD_LIMIT")
pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- a fake model provider (tests/fake_provider.py) ---------------------------------------------


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    p = Provider()
    try:
        yield p
    finally:
        p.close()


# --- the launched app -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    base = tmp_path_factory.mktemp("app")
    home, gradio_tmp, tmp, files = base / "home", base / "gradio", base / "tmp", base / "files"
    for folder in (gradio_tmp, tmp, files):
        folder.mkdir()
    port = free_port()
    env = {**{k: os.environ[k] for k in CLI_ENV_KEYS if k in os.environ}, "MADQA_HOME": str(home),
           "GRADIO_TEMP_DIR": str(gradio_tmp), "TMPDIR": str(tmp), "MADQA_HOST": "127.0.0.1",
           "MADQA_PORT": str(port), "PYTHONUNBUFFERED": "1", "GRADIO_ANALYTICS_ENABLED": "False",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MADQA_OCR": "never",  # no OCR: the demo corpus indexes at once
           "OPENAI_API_KEY": SERVER_KEY,  # as a Space secret would be
           "MADQA_ALLOW_PRIVATE_API_BASE": "1"}  # the fake provider is on 127.0.0.1; the key rule still holds
    out, err = open(base / "stdout.log", "wb"), open(base / "stderr.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=REPO, env=env, stdout=out, stderr=err,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_until_serving(proc, url, base / "stderr.log")
        yield SimpleNamespace(url=url, home=home, gradio_tmp=gradio_tmp, tmp=tmp, files=files, base=base,
                              logs=[base / "stdout.log", base / "stderr.log"])
    finally:
        stop(proc)
        out.close()
        err.close()


def client(app: SimpleNamespace) -> Client:
    return Client(app.url, verbose=False, download_files=False, analytics_enabled=False)


def endpoint(app: SimpleNamespace, name: str) -> tuple[int, int]:
    """(fn_index, a trigger id) of the event named ``name`` (its api_name, or its function's name)."""
    config = httpx.get(app.url + "config", timeout=10).json()
    for index, dep in enumerate(config["dependencies"]):
        if dep.get("api_name") == name:
            return index, dep["targets"][0][0]
    raise KeyError(name)


def raw_call(app: SimpleNamespace, name: str, data: list[Any], event_data: Any = None) -> dict[str, Any]:
    """Call an event with a hand-made payload, as a hostile client could; returns the final message."""
    fn_index, trigger = endpoint(app, name)
    session_hash = uuid.uuid4().hex[:12]
    joined = httpx.post(app.url + "gradio_api/queue/join", timeout=30, json={
        "data": data, "event_data": event_data, "fn_index": fn_index, "trigger_id": trigger,
        "session_hash": session_hash})
    if joined.status_code != 200:
        return {"rejected": joined.status_code, "text": joined.text}
    with httpx.stream("GET", app.url + f"gradio_api/queue/data?session_hash={session_hash}", timeout=60) as s:
        for line in s.iter_lines():
            if line.startswith("data:"):
                message = json.loads(line[5:])
                if message.get("msg") == "process_completed":
                    return message
    raise AssertionError("no process_completed message")


def chat_text(chat: list[dict[str, Any]]) -> str:
    return json.dumps(chat, ensure_ascii=False)


# --- isolation ----------------------------------------------------------------------------------


def test_uploads_are_invisible_to_other_sessions_through_every_endpoint(app: SimpleNamespace) -> None:
    pdf = make_pdf(app.files / "field notes.pdf", [f"The {UNIQUE} wingspan was 10.5 metres, says the memo."])
    # MuPDF's message for this file quotes the path it opened: the session's upload folder, token and all
    damaged = app.files / "damaged.pdf"
    damaged.write_bytes(b"%PDF-1.7\n" + b"\0" * 500)
    owner, stranger = client(app), client(app)
    received: list[str] = []  # everything both clients were sent, to look for the session token
    added = owner.predict(paths=[handle_file(str(pdf)), handle_file(str(damaged))], api_name="/add_documents")
    received.append(json.dumps(added))
    assert added[0]["data"][0][:2] == ["field notes.pdf", "indexed"]
    assert added[0]["data"][1][:2] == ["damaged.pdf", "failed"] and "damaged.pdf" in added[0]["data"][1][3]
    assert str(app.home) not in json.dumps(added) and "uploads" not in added[0]["data"][1][3]
    found = owner.predict(text=UNIQUE, api_name="/search_corpus")
    assert found["data"][0][:2] == ["field notes.pdf", 1]
    owner_chat = owner.predict(question=f"What was the {UNIQUE} wingspan?", history=[], api_name="/ask")[1]
    received.append(chat_text(owner_chat))
    assert "field notes.pdf" in chat_text(owner_chat)
    [token] = [p.name for p in (app.home / "uploads").iterdir()]
    private_file = app.home / "uploads" / token / "docs" / "field notes.pdf"
    assert private_file.is_file()

    # the stranger's own endpoints: nothing of it
    assert stranger.predict(text=UNIQUE, api_name="/search_corpus")["data"] == []
    for chat in (stranger.predict(question=f"What was the {UNIQUE} wingspan?", history=[], api_name="/ask")[1],
                 *stranger.predict(question=f"What was the {UNIQUE} wingspan?", question_id=None,
                                   api_name="/compare")[:2]):
        received.append(chat_text(chat))
        assert "field notes" not in chat_text(chat) and "10.5" not in chat_text(chat)
    questions = app.files / "q.jsonl"
    questions.write_text(json.dumps({"id": "x", "question": f"What was the {UNIQUE} wingspan?"}) + "\n")
    evaluated = stranger.predict(question_file=handle_file(str(questions)), configs=["offline"],
                                 api_name="/evaluate")
    predictions = httpx.get(evaluated[7]["url"], timeout=30).text
    received += [json.dumps(evaluated), predictions]
    assert "field notes" not in predictions and "10.5" not in predictions

    # hand-made requests: a session state naming the owner's token is ignored (state is server-side)
    forged = {"token": token, "corpus": "mine"}
    result = raw_call(app, "search_corpus", [UNIQUE, forged])
    assert result["success"] and result["output"]["data"][0]["data"] == []
    result = raw_call(app, "select", ["mine", forged])
    assert result["success"] and "No uploads yet" in json.dumps(result["output"])
    for value in ({"corpus": "mine", "file": "field notes.pdf", "page": 1},  # the owner's page, by citation
                  {"corpus": "demo", "file": "../../../../etc/passwd", "page": 1},
                  {"corpus": "demo", "file": str(private_file), "page": 1},
                  {"corpus": "mine", "file": f"../../{token}/docs/field notes.pdf", "page": 1}):
        result = raw_call(app, "on_option", [forged], {"index": 0, "value": json.dumps(value)})
        if token not in value["file"]:  # an error may echo the name it was given, and no more
            received.append(json.dumps(result))
        assert not result["success"] and "root:" not in json.dumps(result), result  # an error, no file content
    # files by server path: Gradio only takes files uploaded through it
    for path in (private_file, Path("/etc/passwd")):
        result = raw_call(app, "add_documents", [[{"path": str(path), "meta": {"_type": "gradio.FileData"}}], None])
        # Gradio refuses the path; its own message (raw exception text) is not sent (show_error is off)
        assert not result["success"] and result["output"]["error"] is None, result
        served = httpx.get(app.url + f"gradio_api/file={path}", timeout=10)
        assert served.status_code in (403, 404) and UNIQUE.encode() not in served.content
    assert [p.name for p in (app.home / "uploads").iterdir() if (p / "docs").is_dir()] == [token]
    for text in received:  # the token (the name of the private folder) never reaches a browser
        assert token not in text


def test_crafted_upload_names_are_sanitised_by_the_server(app: SimpleNamespace) -> None:
    data = make_pdf(app.files / "src.pdf", ["crafted upload about axolotls"]).read_bytes()
    names = ["../../../escape.pdf", "/etc/abs.pdf", "..\\..\\win.pdf", "ctl\x01\x1b[31mred\x7f.pdf",
             "\u202egnp.pdf", ".hidden.pdf", "a/b/../../c.pdf", "x" * 300 + ".pdf", "\n.pdf", "résumé.pdf"]
    uploaded = httpx.post(app.url + "gradio_api/upload", timeout=30,
                          files=[("files", (n, data, "application/pdf")) for n in names])
    assert uploaded.status_code == 200
    before = set((app.home / "uploads").iterdir()) if (app.home / "uploads").is_dir() else set()
    files = [{"path": p, "orig_name": n, "meta": {"_type": "gradio.FileData"}} for p, n in zip(uploaded.json(), names,
                                                                                               strict=True)]
    result = raw_call(app, "add_documents", [files, None])
    assert result["success"], result
    rows = result["output"]["data"][1]["data"]
    assert len(rows) == len(names) and {r[1] for r in rows} == {"indexed"}
    [folder] = set((app.home / "uploads").iterdir()) - before
    saved = sorted(p.name for p in (folder / "docs").iterdir())
    assert len(saved) == len(names)
    for name in saved:
        assert name.endswith(".pdf") and not name.startswith(".") and ".." not in name
        assert all(ch.isprintable() for ch in name) and "\u202e" not in name
    for escaped in ("escape.pdf", "abs.pdf", "win.pdf", "c.pdf"):  # nowhere but the session folder
        found = [p for p in app.base.rglob(escaped) if folder not in p.parents and app.gradio_tmp not in p.parents]
        assert found == [] and not (REPO / escaped).exists() and not (Path("/") / escaped).exists()
    assert not Path("/etc/abs.pdf").exists()


# --- secrets ------------------------------------------------------------------------------------


def files_holding(secret: str, *roots: Path) -> list[str]:
    """Every file under ``roots`` whose bytes contain ``secret`` (as text, or JSON/URL-escaped)."""
    needles = {secret.encode(), json.dumps(secret).strip('"').encode()}
    hits = []
    for root in roots:
        for path in [root] if root.is_file() else root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                if any(n in data for n in needles):
                    hits.append(str(path))
    return hits


def test_the_search_for_secrets_can_find_one(tmp_path: Path) -> None:
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "cache.db").write_bytes(b"\x00\x01" + SECRET.encode() + b"\x00")
    assert files_holding(SECRET, tmp_path) == [str(tmp_path / "deep" / "er" / "cache.db")]


def test_a_key_given_in_the_web_app_is_used_then_forgotten(app: SimpleNamespace, provider: Provider) -> None:
    panel = {"backend": "litellm", "model": "openai/local-model", "api_key": SECRET, "api_base": provider.url}
    cite = {"file": "finance/annual_report_2024.pdf", "page": 6}
    provider.answer(completion("search_documents", {"query": "operating income EBIT"}),
                    completion("submit_answer", {"answer": ["15,005"], "citations": [cite]}))
    outputs: list[str] = []
    job = client(app).submit(question="What was the EBIT in 2023?", history=[], api_name="/ask", **panel)
    job.result(timeout=120)
    outputs += [json.dumps(u) for u in job.outputs()]
    assert "**Answer:** 15,005" in outputs[-1]
    provider.answer()  # from now on: 401, with the key echoed in the provider's message
    chat = client(app).predict(question="And in 2024?", history=[], api_name="/ask", **panel)[1]
    outputs.append(json.dumps(chat))
    assert "the server at api_base gave no usable answer" in outputs[-1].replace("\\", "")  # not which failure
    compared = client(app).predict(question="Who audited the report?", question_id=None, api_name="/compare",
                                   **{f"a_{k}": v for k, v in panel.items()}, **{f"b_{k}": v for k, v in panel.items()})
    outputs.append(json.dumps(compared))
    provider.answer(*[completion("submit_answer", {"answer": ["x"], "citations": []})] * 2)
    evaluated = client(app).predict(question_file=None, configs=["local-openai-compatible"], limit=3, workers=1,
                                    api_key=SECRET, api_base=provider.url, api_name="/evaluate")
    outputs.append(json.dumps(evaluated))
    downloads = app.files / "downloads"
    downloads.mkdir()
    for n, info in enumerate(evaluated[7:9]):
        (downloads / f"download-{n}").write_bytes(httpx.get(info["url"], timeout=30).content)
    rows = [json.loads(line) for line in (downloads / "download-0").read_text().splitlines()]
    assert [r["error"] for r in rows][:2] == [None, None] and "gave no usable answer" in rows[2]["error"]

    assert provider.auth.count(SECRET) >= 7 and set(provider.auth) == {SECRET}  # the key really was sent
    for text in outputs:
        assert SECRET not in text
    time.sleep(1)  # litellm logs successes from a background thread: let it write
    leaks = files_holding(SECRET, *app.logs, app.home, app.gradio_tmp, app.tmp, downloads)
    assert leaks == []
    assert sum(p.stat().st_size for p in app.logs) > 0 and any(app.home.rglob("*.sqlite"))  # we looked at something


def test_the_servers_key_never_goes_to_a_typed_api_base(app: SimpleNamespace, provider: Provider) -> None:
    """Issue 12 item 1: the app holds OPENAI_API_KEY; a visitor types an api_base and no key."""
    from gradio_client.exceptions import AppError

    before = provider.requests()
    panel = {"backend": "litellm", "model": "openai/gpt-4.1-mini", "api_key": "", "api_base": provider.url}
    refused = "an api_base you type needs your own API key"
    for call in (lambda: client(app).predict(question="Hi?", history=[], api_name="/ask", **panel),
                 lambda: client(app).predict(question="Hi?", question_id=None, api_name="/compare",
                                             **{f"a_{k}": v for k, v in panel.items()}),
                 lambda: client(app).predict(question_file=None, configs=["gpt-4.1-mini"], limit=1,
                                             api_key="", api_base=provider.url, api_name="/evaluate")):
        with pytest.raises(AppError, match=refused):
            call()
    assert provider.requests() == before  # nothing was sent at all
    # with the visitor's own key the same base works, and gets that key only
    provider.answer(completion("submit_answer", {"answer": ["hello"], "citations": []}))
    chat = client(app).predict(question="Hi?", history=[], api_name="/ask", **{**panel, "api_key": SECRET})[1]
    assert "**Answer:** hello" in json.dumps(chat)
    assert provider.auth[before:] == [SECRET]
    assert SERVER_KEY not in provider.auth
    assert files_holding(SERVER_KEY, *app.logs, app.home, app.gradio_tmp, app.tmp) == []


def test_options_naming_secrets_or_endpoints_are_refused_from_the_web(app: SimpleNamespace,
                                                                     provider: Provider) -> None:
    """Issue 12 item 2: llm-rewrite options typed in the options box could send any variable anywhere."""
    from gradio_client.exceptions import AppError

    before = provider.requests()
    for options in (f'query_strategy.api_base="{provider.url}"\nquery_strategy.api_key_env="OPENAI_API_KEY"\n'
                    'query_strategy.when="always"',
                    'query_strategy.api_key_env="HF_TOKEN"', 'query_strategy.model="ollama/llama3"',
                    'query_strategy.mock_response="x"', 'retriever.max_windows=1000'):
        with pytest.raises(AppError, match="cannot be set in the web app"):
            client(app).predict(question="Hi?", history=[], query_strategy="llm-rewrite", options=options,
                                api_name="/ask")
    with pytest.raises(AppError, match="outside what the web app allows"):
        client(app).predict(question="Hi?", history=[], options="query_strategy.threshold=5", api_name="/ask")
    assert provider.requests() == before
    # an allowed option still works
    chat = client(app).predict(question="What was the EBIT in 2023?", history=[], query_strategy="drift",
                               options="query_strategy.threshold=0.6", api_name="/ask")[1]
    assert "Answer" in json.dumps(chat)


def test_llm_rewrite_in_the_web_app_spends_the_visitors_key_where_it_goes(app: SimpleNamespace,
                                                                         provider: Provider) -> None:
    """Issue 12 item 2: the strategy's own model call uses the session's key and its checked api_base,
    never the server's OPENAI_API_KEY (which would have gone to OpenAI on the operator's bill)."""
    from tests.fake_provider import text_completion

    before = provider.requests()
    cite = {"file": "finance/annual_report_2024.pdf", "page": 6}
    provider.answer(completion("search_documents", {"query": "EBIT"}),
                    text_completion("operating income EBIT 2023"),  # the rewrite, asked before the search runs
                    completion("submit_answer", {"answer": ["15,005"], "citations": [cite]}))
    panel = {"backend": "litellm", "model": "openai/local-model", "api_key": SECRET, "api_base": provider.url}
    chat = client(app).predict(question="What was the EBIT in 2023?", history=[], query_strategy="llm-rewrite",
                               options='query_strategy.when="always"', api_name="/ask", **panel)[1]
    text = json.dumps(chat)
    assert "**Answer:** 15,005" in text and "operating income EBIT 2023" in text and SECRET not in text
    sent = provider.bodies[before:]
    assert [b.get("model") for b in sent] == ["local-model", "gpt-4.1-nano", "local-model"]  # the rewrite came here
    assert provider.auth[before:] == [SECRET] * 3 and SERVER_KEY not in provider.auth


def test_test_only_backends_are_neither_offered_nor_accepted(app: SimpleNamespace) -> None:
    """Issue 12 item 3: the scripted backend read any server path named in the model string."""
    from gradio_client.exceptions import AppError

    config = httpx.get(app.url + "config", timeout=10).json()
    offered = [c for c in config["components"] if (c.get("props") or {}).get("label") == "Backend"]
    assert offered and all("scripted" not in json.dumps(c["props"]["choices"]) for c in offered)
    for model in ("file:/etc/passwd", "file:/dev/zero"):
        with pytest.raises(AppError, match="scripted"):
            client(app).predict(question="Hi?", history=[], backend="scripted", model=model, api_name="/ask")
        result = raw_call(app, "ask", ["Hi?", [], "offline", "scripted", model, "whoosh", "none", "passthrough", 5,
                                      10, 1.2, "", "", "", None])
        assert not result["success"] and "root:" not in json.dumps(result)


def test_a_key_given_to_the_cli_stays_out_of_its_output_and_files(tmp_path: Path, provider: Provider) -> None:
    root = tmp_path / "docs"
    make_pdf(root / "facts.pdf", ["The okapi census counted 412 animals."])
    home = tmp_path / "home"
    env = {**{k: os.environ[k] for k in CLI_ENV_KEYS if k in os.environ}, "MADQA_HOME": str(home),
           "OPENAI_API_KEY": SECRET, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    model = ["--backend", "litellm", "--model", "openai/local-model", "--api-base", provider.url]
    provider.answer(completion("search_documents", {"query": "okapi census"}),
                    completion("submit_answer", {"answer": ["412"], "citations": [{"file": "facts.pdf", "page": 1}]}))
    provider.auth.clear()
    asked = subprocess.run([sys.executable, "-m", "madqa", "ask", "--corpus", str(root), "How many okapis?", *model,
                            "--json"], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["answer"] == ["412"]
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps({"id": f"q{n}", "question": "How many okapis?"}) + "\n" for n in range(2)))
    provider.answer(completion("submit_answer", {"answer": ["412"], "citations": []}))  # then 401s
    out = tmp_path / "pred.jsonl"
    ran = subprocess.run([sys.executable, "-m", "madqa", "run", "--corpus", str(root), "--questions", str(questions),
                          "-o", str(out), *model], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert ran.returncode == 1  # one question failed, and said so
    errors = sorted(str(json.loads(line)["error"]) for line in out.read_text().splitlines())
    assert errors == ["None", "backend: the openai server at api_base rejected the API key (authentication error); "
                      "the key came from OPENAI_API_KEY: set a valid key there, or name another variable with "
                      "--set backend.api_key_env=NAME"]
    assert provider.auth.count(SECRET) == 4  # ask: 2 calls; run: 1 answer + 1 rejected
    logs = tmp_path / "logs"
    logs.mkdir()
    for name, proc in (("ask", asked), ("run", ran)):
        (logs / f"{name}.out").write_text(proc.stdout)
        (logs / f"{name}.err").write_text(proc.stderr)
    assert files_holding(SECRET, logs, out, home) == []


def test_no_repr_shows_a_key(tmp_path: Path) -> None:
    from madqa.agent import Agent
    from madqa.corpus import Corpus
    from madqa.index import ingest
    from madqa.plugins import collect, get_plugin_manager
    from madqa.settings import Settings, load_config
    from madqa.trace import Trace

    settings = Settings.from_env(env={"OPENAI_API_KEY": SECRET, "MADQA_HOME": str(tmp_path / "home")})
    registry = collect(get_plugin_manager(entry_points=False))
    make_pdf(tmp_path / "docs" / "a.pdf", ["text"])
    ingest(tmp_path / "docs", settings, registry, ocr="never")
    config = load_config("gpt-4.1-mini")
    agent = Agent(Corpus.open(tmp_path / "docs", settings.corpora_dir), config, registry, settings,
                  {"api_key": SECRET, "mock_response": "no idea"})
    trace = Trace("q?", config).consume(agent.run("q?"))
    shown = [repr(settings), repr(config), repr(agent), str(vars(agent)), repr(agent.backend), str(vars(agent.backend)),
             json.dumps(trace.row()), repr(trace.steps)]
    assert not [s for s in shown if SECRET in s]
