"""The house rules that keep every change small, checked over the source (issue 36):

- no function in madqa/ or madqa_plugins/ over 100 lines;
- no function of the loop (madqa/agent.py, madqa/loop/) and of the offline baseline (madqa_plugins/offline/) over
  60 lines (a tab's per-question work: tests/test_ui_sizes.py);
- no mypy excusal: no ``ignore_errors`` override, and ``check_untyped_defs`` on for madqa/ and madqa_plugins/.

A function's length is from its ``def`` (decorators excluded) to its last line, docstring included.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LOOP = ("madqa/agent.py", "madqa/loop", "madqa_plugins/offline")


def function_lengths(path: Path) -> list[tuple[str, int]]:
    """(qualified name, lines) of every function and method in ``path``."""
    found: list[tuple[str, int]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                found.append((name, (child.end_lineno or child.lineno) - child.lineno + 1))
                walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def over(limit: int, *folders: str) -> list[str]:
    paths = [p for f in folders for p in ((REPO / f).rglob("*.py") if (REPO / f).is_dir() else [REPO / f])]
    assert paths, folders
    return [f"{p.relative_to(REPO)}::{name} ({n} lines)" for p in sorted(paths)
            for name, n in function_lengths(p) if n > limit]


def test_the_length_check_counts_what_it_should(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def a():\n    x = 1\n    return x\n\n\nclass C:\n    def b(self):\n        def c():\n"
                      "            pass\n        return c\n", encoding="utf-8")
    assert function_lengths(source) == [("a", 3), ("C.b", 4), ("C.b.c", 2)]


def test_no_function_is_over_100_lines():
    assert over(100, "madqa", "madqa_plugins") == []


def test_no_function_of_the_loop_or_the_offline_reader_is_over_60_lines():
    assert over(60, *LOOP) == []


def test_mypy_excuses_no_module_and_checks_untyped_functions():
    mypy = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert mypy.get("check_untyped_defs") is True
    assert set(mypy["files"]) >= {"madqa", "madqa_plugins"}
    excused = [o["module"] for o in mypy.get("overrides", []) if o.get("ignore_errors")]
    assert excused == []
