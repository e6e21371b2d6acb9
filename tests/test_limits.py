"""``madqa.ui.limits`` without a server: job slots, requests a minute, budgets, upload quota and rate."""

from __future__ import annotations

from pathlib import Path

import pytest

from madqa.agent import Agent
from madqa.settings import Settings, load_config
from madqa.trace import Trace
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


def run(agent: Agent, budgets: list) -> dict:
    """One question's row, answered with ``budgets`` (a visitor's, from ``Limits.budgets``) beside its own."""
    return Trace("q", agent.config).consume(agent.run("q", budget=budgets)).row()


class Rewriting:
    """llm-rewrite's shape: (query, note, spent), its own model call's usage and cost in ``spent``."""

    def __init__(self, tokens: int, cost: float) -> None:
        self.spent = ModelStep(0, "", (), Usage(tokens, 0), cost, 0.0)

    def rewrite(self, query: str, state: object) -> tuple:
        return query, None, self.spent


def scripted(corpus, registry, settings, n: int = 10) -> Agent:
    """The scripted backend searching ``n`` times, then answering (each call: 15 tokens, $0)."""
    script = [{"search": f"revenue {i}"} for i in range(n)]
    config = load_config("offline").with_overrides(backend="scripted", max_steps=n + 1)
    return Agent(corpus, config, registry, settings, {"script": [*script, {"answer": ["7.5"], "citations": []}]})


def test_budgets_on_the_servers_keys_force_the_answer_and_stop_the_next_before_a_call(
        tmp_path: Path, corpus, registry, settings) -> None:
    """They used to raise mid-question (Limits.metered), so the visitor lost the answer; now a spent budget
    forces it, flagged "stopped early", and the next question makes no call."""
    lim = limits(tmp_path, web_calls_budget=3)
    agent = scripted(corpus, registry, settings, n=2)
    row = run(agent, lim.budgets(["client:a", "session:s"]))
    assert row["iterations"] == 3 and row["answer"] == ["7.5"] and row["error"] is None
    assert [c["force_answer"] for c in agent.backend.calls] == [False, False, True]  # the last call: the answer
    assert any(f.startswith("stopped early: daily budget of 3 model calls reached (the budget on the server's keys "
                            "for your address today") for f in row["flags"]), row["flags"]
    again = run(agent, lim.budgets(["client:a"]))  # the address is out of budget too, whatever its session
    assert again["error"].startswith("stopped: daily budget of 3 model calls reached") and again["iterations"] == 1
    assert "no model call made" in again["error"] and "give your own API key" in again["error"]
    with pytest.raises(Refused, match="budget of 3 model calls"):
        lim.refuse_if_spent(["session:new", "client:a"])  # an evaluation is not started with nothing left
    lim.refuse_if_spent(["session:new", "client:b"])  # another visitor still may


def test_token_and_cost_budgets(tmp_path: Path, corpus, registry, settings) -> None:
    lim = limits(tmp_path, web_tokens_budget=40)
    agent = scripted(corpus, registry, settings, n=3)
    row = run(agent, lim.budgets(["client:t"]))
    assert agent.backend.calls[-1]["force_answer"]
    assert row["answer"] and row["iterations"] == 4  # 45 tokens after three calls: the fourth must answer
    assert any("stopped early: daily budget of 40 tokens reached (45 used)" in f for f in row["flags"])
    lim = limits(tmp_path, web_cost_budget_usd=0.02)
    agent = scripted(corpus, registry, settings, n=2)
    agent.strategy = Rewriting(100, 0.01)
    row = run(agent, lim.budgets(["client:c"]))
    assert row["answer"] and any("stopped early: daily budget of $0.02 reached" in f for f in row["flags"])
    assert agent.backend.calls[-1]["force_answer"]
    unlimited = limits(tmp_path, web_calls_budget=0, web_tokens_budget=0, web_cost_budget_usd=0).budgets(["client:z"])[0]
    unlimited.charge(None, cost_usd=1e6, calls=10_000)  # 0 means no limit: nothing is ever spent
    assert not unlimited.limited and unlimited.exhausted is None and unlimited.answer_due is None


def test_a_query_strategys_own_model_call_is_charged_too(tmp_path: Path, corpus, registry, settings) -> None:
    budget = limits(tmp_path, web_tokens_budget=5000).budgets(["client:r"])[0]
    agent = scripted(corpus, registry, settings, n=2)
    agent.strategy = Rewriting(1000, 0.5)
    run(agent, [budget])
    assert budget.calls == 2 + 3 and budget.tokens == 2000 + 3 * 15 and budget.cost_usd == 1.0  # 2 rewrites, 3 calls


def test_a_question_that_runs_too_long_is_stopped(tmp_path: Path) -> None:
    lim = limits(tmp_path, web_question_timeout_s=5)
    with pytest.raises(Refused, match="stopped after 5 s"):
        list(lim.timed(steps(3), started=-1e9))


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
