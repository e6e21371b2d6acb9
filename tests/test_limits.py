"""``madqa.ui.limits`` without a server: job slots, requests a minute, budgets, upload quota and rate."""

from __future__ import annotations

from pathlib import Path

import pytest

from madqa.settings import Settings
from madqa.types import AnswerStep, ModelStep, SearchStep, Usage
from madqa.ui.limits import Limits, client_address, folder_bytes
from madqa.ui.policy import Refused


def limits(tmp_path: Path, **kw: object) -> Limits:
    return Limits(Settings.from_env(env={}, home=tmp_path / "home", **kw), [tmp_path / "gradio", tmp_path / "uploads"])


def test_client_address_trusts_only_the_proxies_it_is_told_of() -> None:
    assert client_address("10.0.0.2", "1.2.3.4", 0) == "10.0.0.2"  # no proxy: the header is the client's word
    assert client_address("10.0.0.2", "6.6.6.6, 1.2.3.4", 1) == "1.2.3.4"  # the leftmost entry can be forged
    assert client_address("10.0.0.2", "6.6.6.6, 1.2.3.4, 10.0.0.9", 2) == "1.2.3.4"
    assert client_address(None, None, 1) == "unknown"


def test_jobs_at_once_per_session_and_per_client(tmp_path: Path) -> None:
    lim = limits(tmp_path, web_jobs_per_session=1, web_jobs_per_client=2)
    with lim.job("s1", "a"):
        with pytest.raises(Refused, match="this browser session already has 1"):
            with lim.job("s1", "a"):
                pass
        with lim.job("s2", "a"):
            with pytest.raises(Refused, match="your address already has 2"):
                with lim.job("s3", "a"):
                    pass
            with lim.job("s3", "b"):  # another client is not held up
                pass
    with lim.job("s1", "a"), lim.job("s2", "a"):  # every slot was given back
        pass


def test_requests_a_minute_per_client(tmp_path: Path) -> None:
    lim = limits(tmp_path, web_requests_per_minute=3)
    assert [lim.allow_request("a", now=100.0 + i) for i in range(5)] == [True, True, True, False, False]
    assert lim.allow_request("b", now=104.0)
    assert lim.allow_request("a", now=161.5)  # a minute after the first


def steps(n: int, tokens: int = 100) -> list:
    out = []
    for i in range(1, n + 1):
        out.append(ModelStep(i, "x", (), Usage(tokens - 10, 10), 0.01, 0.0))
        out.append(SearchStep(i, "q", "q", (), ()))
    return [*out, AnswerStep(n, (), (), refusal=True)]


def test_budgets_on_the_servers_keys_stop_a_run_and_refuse_the_next(tmp_path: Path) -> None:
    lim = limits(tmp_path, web_calls_budget=3)
    keys = ["client:a", "session:s"]
    taken = []
    with pytest.raises(Refused, match="budget on the server's keys is used up"):
        for step in lim.metered(steps(10), keys, server_key=True):
            taken.append(step)
    assert sum(isinstance(s, ModelStep) for s in taken) == 3  # the third call used the last of the budget
    with pytest.raises(Refused, match="budget"):
        next(iter(lim.metered(steps(1), ["client:a"], server_key=True)))  # the address is out of budget too
    assert len(list(lim.metered(steps(10), keys, server_key=False))) == 21  # the visitor's own key: not counted
    with pytest.raises(Refused, match="budget"):
        lim.check_budget(["session:new"], calls=4)  # an evaluation that would not fit is refused up front


def test_token_and_cost_budgets(tmp_path: Path) -> None:
    lim = limits(tmp_path, web_tokens_budget=250)
    with pytest.raises(Refused, match="250 tokens"):
        list(lim.metered(steps(10), ["client:t"], server_key=True))
    lim = limits(tmp_path, web_cost_budget_usd=0.02)
    with pytest.raises(Refused, match=r"\$0\.02"):
        list(lim.metered(steps(10), ["client:c"], server_key=True))
    rewrite = SearchStep(1, "q", "q", (), (), usage=Usage(1000, 0), cost_usd=0.5)  # llm-rewrite's own call
    with pytest.raises(Refused, match="budget"):
        list(limits(tmp_path, web_tokens_budget=500).metered([rewrite, rewrite], ["client:r"], server_key=False))


def test_a_question_that_runs_too_long_is_stopped(tmp_path: Path) -> None:
    lim = limits(tmp_path, web_question_timeout_s=5)
    with pytest.raises(Refused, match="stopped after 5 s"):
        list(lim.metered(steps(3), ["client:a"], server_key=False, started=-1e9))


def test_uploads_need_room_on_the_disk_and_in_the_clients_hour(tmp_path: Path) -> None:
    (tmp_path / "uploads").mkdir()
    (tmp_path / "uploads" / "old.bin").write_bytes(b"x" * 600_000)
    mb = 2**20
    lim = limits(tmp_path, upload_quota_mb=1, upload_mb_per_hour=100)
    assert lim.upload_refusal("a", None) == (411, "an upload needs a Content-Length")
    assert lim.upload_refusal("a", 300_000) is None
    status, reason = lim.upload_refusal("a", 300_000)  # 600 KB stored + 300 KB just taken + 300 KB > 1 MB
    assert status == 507 and "upload space is full" in reason and "/" not in reason
    lim = limits(tmp_path, upload_mb_per_hour=1, upload_quota_mb=100)
    assert lim.upload_refusal("a", mb // 2, now=10.0) is None
    assert lim.upload_refusal("a", mb // 2 + 1, now=20.0)[0] == 429
    assert lim.upload_refusal("b", mb // 2, now=20.0) is None  # another client has its own hour
    assert lim.upload_refusal("a", mb // 2, now=3700.0) is None  # an hour later
    free = limits(tmp_path, min_free_mb=10**9)  # asks for more free space than any disk has
    assert free.upload_refusal("a", 10)[0] == 507


def test_folder_bytes_counts_files_and_skips_missing_folders(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f").write_bytes(b"12345")
    (tmp_path / "a" / "g").write_bytes(b"12")
    assert folder_bytes(tmp_path / "a") == 7 and folder_bytes(tmp_path / "missing") == 0
