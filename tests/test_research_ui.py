"""The research instruments in the web app: the Evaluate tab's oracle checkbox and the Compare tab's
trajectory diff of two uploaded prediction files, through their API endpoints."""

from __future__ import annotations

import json

from gradio_client import handle_file

from tests.test_ui_api import client, provider, pytestmark, server  # noqa: F401 - the fixtures and the warning filters

RUNS = {"a": [{"id": "demo-002", "question": "What was the operating income (EBIT) in 2023, in EUR thousand?",
               "answer": ["15,005"], "citations": [{"file": "finance/annual_report_2024.pdf", "page": 6}],
               "search_history": [{"iteration": 1, "query": "EBIT 2023", "num_results": 1}],
               "trajectory": [{"type": "search", "hits": [{"file": "finance/annual_report_2024.pdf", "page": 6}]}]}],
        "b": [{"id": "demo-002", "question": "What was the operating income (EBIT) in 2023, in EUR thousand?",
               "answer": ["<img src=x onerror=alert(1)>"], "citations": [],
               "search_history": [{"iteration": 1, "query": "operating <b>income</b>", "num_results": 1}],
               "trajectory": [{"type": "search", "hits": [{"file": "hr/memo_mobile_work_2024_12.pdf", "page": 1}]}]}]}


def test_evaluate_with_the_oracle_reports_the_gap(server):  # noqa: F811
    result = client(server).predict(question_file=None, configs=["offline"], limit=3, workers=1, oracle=True,
                                    api_name="/evaluate")
    status, metrics, gap = result[0], result[2], result[9]
    assert "Ran 3 questions" in status
    assert metrics["headers"] == ["metric", "offline", "offline (oracle)", "what it means"]
    assert gap.get("visible") is True  # the frame is drawn only when there is a gap to show
    gap = gap["value"]
    rows = {r[0]: r[1:] for r in gap["data"]}
    assert gap["headers"] == ["oracle gap", "offline"] and rows["questions in both runs"] == ["3"]
    bins = [int(rows[k][0]) for k in ("lost to retrieval (right with the gold pages only)",
                                      "lost to reading (wrong even with them)", "right both ways",
                                      "right only without the oracle")]
    assert sum(bins) == 3


def test_compare_tab_diffs_two_uploaded_prediction_files(server):  # noqa: F811
    paths = {}
    for side, rows in RUNS.items():
        paths[side] = server.tmp / f"{side}.jsonl"
        paths[side].write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    status, summary, table = client(server).predict(a=handle_file(str(paths["a"])), b=handle_file(str(paths["b"])),
                                                    gold_path=None, api_name="/diff")
    assert "1 question answered in both: only **a\\.jsonl** right 1" in status  # named by file (and config)
    headers = table["headers"]
    assert headers[:3] == ["question", "who was right", "searches differ from"]  # why first
    assert not any("_" in h for h in headers) and "a.jsonl: answer" in headers and "A answer" not in headers
    row = dict(zip(headers, table["data"][0], strict=True))
    assert row["who was right"] == "only a.jsonl right" and row["searches differ from"] == "search 1"
    assert row["b.jsonl: searches"] == "1. operating <b>income</b>"  # plain text cells: shown as typed, never as HTML
    assert row["first page only b.jsonl saw"] == "hr/memo_mobile_work_2024_12.pdf p.1 (search 1)"
    assert row["b.jsonl: answer"].startswith("✗ wrong (wrong document): ")
    assert summary["data"][0][:2] == ["all questions", 1]
    _, _, both = client(server).predict(a=handle_file(str(paths["a"])), b=handle_file(str(paths["a"])),
                                        gold_path=None, disagreements_only=True, api_name="/diff")
    assert both["data"] in ([], [[]]) or not any(both["data"])  # the runs agree everywhere: nothing listed


def test_the_diff_folds_long_queries_and_names_runs_by_config() -> None:
    from madqa.ui.diff_view import QUERIES_SHOWN, QUERY_CHARS, _queries, run_name

    long = ["word " * 40] + [f"query {i}" for i in range(6)]
    lines = _queries(long).splitlines()
    assert len(lines) == QUERIES_SHOWN + 1 and lines[-1] == "… and 3 more searches"
    assert len(lines[0]) <= QUERY_CHARS + 3 and lines[0].endswith("…")
    assert run_name("/tmp/x/run_a.jsonl", [{"config": "offline"}, {"config": "offline"}]) == "run_a.jsonl · offline"
