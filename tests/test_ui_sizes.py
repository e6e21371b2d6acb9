"""The web app's code stays readable: none of a tab's per-question work (``*_run`` modules) over 60 lines, and no
module far past the house's ~400 lines (no function anywhere over 100: tests/test_house.py)."""

from __future__ import annotations

import ast
from pathlib import Path

UI = Path(__file__).resolve().parents[1] / "madqa" / "ui"


def function_lengths(path: Path) -> dict[str, int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {f"{path.name}:{node.lineno} {node.name}": (node.end_lineno or node.lineno) - node.lineno + 1
            for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_a_tabs_per_question_work_is_in_functions_of_at_most_60_lines():
    runs = sorted(UI.glob("*_run.py"))
    assert {p.name for p in runs} >= {"ask_run.py", "compare_run.py", "evaluate_run.py"}
    long = {name: n for path in runs for name, n in function_lengths(path).items() if n > 60}
    assert long == {}


def test_no_module_of_the_web_app_is_far_past_400_lines():
    assert {p.name: n for p in UI.glob("*.py") if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500} == {}
