"""A forged ``X-Forwarded-For`` against the launched app on 127.0.0.1 with ``MADQA_PROXY_HOPS=0`` (issue 39
item 3). uvicorn's ``proxy_headers`` trusted the loopback peer and replaced the client with the header's entry
before madqa saw it: 70 of 70 searches, each from a new forged address, passed a 60-a-minute limit, and the log
said "from peer 203.0.113.x". Now the socket's peer is the client: past 60 the searches are refused, the log
names the peer it used, and Gradio still reads X-Forwarded-Proto/Host for its links."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from types import SimpleNamespace

import httpx
import pytest

from tests.app_process import stop, wait_until_serving
from tests.conftest import REPO
from tests.test_app_security import CLI_ENV_KEYS, endpoint, free_port

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    base = tmp_path_factory.mktemp("app")
    for name in ("gradio", "tmp"):
        (base / name).mkdir()
    port = free_port()
    env = {**{k: os.environ[k] for k in CLI_ENV_KEYS if k in os.environ}, "MADQA_HOME": str(base / "home"),
           "GRADIO_TEMP_DIR": str(base / "gradio"), "TMPDIR": str(base / "tmp"), "MADQA_HOST": "127.0.0.1",
           "MADQA_PORT": str(port), "PYTHONUNBUFFERED": "1", "GRADIO_ANALYTICS_ENABLED": "False",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MADQA_OCR": "never", "MADQA_PROXY_HOPS": "0",
           "MADQA_WEB_REQUESTS_PER_MINUTE": "60",
           "FORWARDED_ALLOW_IPS": "127.0.0.1"}  # what an owner might have set for uvicorn: ignored, and said so
    log = open(base / "stderr.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_until_serving(proc, url, base / "stderr.log")
        yield SimpleNamespace(url=url, log=base / "stderr.log")
    finally:
        stop(proc)
        log.close()


def test_forged_addresses_pass_no_per_client_limit(app: SimpleNamespace) -> None:
    fn_index, trigger = endpoint(SimpleNamespace(url=app.url), "search_corpus")
    statuses = []
    with httpx.Client(timeout=30) as http:
        for n in range(70):
            joined = http.post(app.url + "gradio_api/queue/join", headers={"X-Forwarded-For": f"203.0.113.{n + 1}"},
                               json={"data": ["capybara", None], "event_data": None, "fn_index": fn_index,
                                     "trigger_id": trigger, "session_hash": f"forged{n:04d}"})
            statuses.append(joined.status_code)
    assert statuses.count(200) <= 60 and statuses.count(429) >= 10, statuses
    assert statuses[:55].count(200) == 55  # the limit is 60 a minute, not fewer
    text = app.log.read_text(errors="replace")
    assert "from socket peer 127.0.0.1; with MADQA_PROXY_HOPS=0 it counts as 127.0.0.1 (the socket's peer)" in text
    assert "from peer 203.0.113" not in text and "counts as 203.0.113" not in text
    assert "FORWARDED_ALLOW_IPS='127.0.0.1' is ignored" in text


def test_gradio_still_reads_the_forwarded_scheme_and_host(app: SimpleNamespace) -> None:
    config = httpx.get(app.url + "config", timeout=10,
                       headers={"X-Forwarded-Proto": "https", "X-Forwarded-Host": "owner.hf.space"}).json()
    assert str(config.get("root", "")).startswith("https://owner.hf.space"), config.get("root")


def test_the_start_log_names_the_collections_and_when_each_is_indexed(app: SimpleNamespace) -> None:
    deadline = time.monotonic() + 120
    while "collection demo: indexed in" not in app.log.read_text(errors="replace"):
        assert time.monotonic() < deadline, app.log.read_text(errors="replace")[-3000:]
        time.sleep(0.5)
    text = app.log.read_text(errors="replace")
    assert "serving 1 collections: demo (" in text
    assert "collection demo: indexing " in text and "(new or changed files) in the background" in text


def test_the_server_key_budgets_are_keyed_by_the_socket_peer_with_hops_0() -> None:
    """The budgets on the server's keys (``AppContext.job_slot``'s keys) come from the same address: with the
    socket's peer no longer rewritten (above), three forged chains are one client and share one budget."""
    from madqa.ui.context import AppContext

    ctx = AppContext.__new__(AppContext)
    ctx.settings = SimpleNamespace(proxy_hops=0)  # type: ignore[assignment]
    ctx.limits = None
    seen = set()
    for forged in ("203.0.113.1", "203.0.113.2", "198.51.100.7, 203.0.113.3"):
        request = SimpleNamespace(client=SimpleNamespace(host="127.0.0.1"), headers={"x-forwarded-for": forged})
        with ctx.job_slot({"token": "t"}, request) as keys:
            seen.add(keys[0])
    assert seen == {"client:127.0.0.1"}
