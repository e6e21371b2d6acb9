"""Every ``except Exception`` (or ``BaseException``, or a bare ``except:``) in madqa/ and madqa_plugins/ that
does not simply clean up and re-raise is one docs/reliability.md lists, by file and enclosing function, with
why it is kept: a broad catch that turns a failure into an empty result cannot come back unnoticed."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

from tests.conftest import REPO

DOC = REPO / "docs" / "reliability.md"
SECTION = "## Broad catches that remain"
BROAD = {"Exception", "BaseException"}


def _is_broad(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.type is None or any(isinstance(k, ast.Name) and k.id in BROAD for k in kinds)


def _reraises(handler: ast.ExceptHandler) -> bool:
    """Cleanup, then ``raise`` of the same exception: nothing is turned into a result."""
    last = handler.body[-1]
    return isinstance(last, ast.Raise) and (last.exc is None or (
        handler.name is not None and isinstance(last.exc, ast.Name) and last.exc.id == handler.name))


def broad_catches(source: str) -> Counter[str]:
    """Enclosing function (``Class.method``, nested ones dotted, ``<module>``) -> its broad catches."""
    found: Counter[str] = Counter()

    def visit(node: ast.AST, names: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            inner = names
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = [*names, child.name]
            if isinstance(child, ast.ExceptHandler) and _is_broad(child) and not _reraises(child):
                found[".".join(names) or "<module>"] += 1
            visit(child, inner)

    visit(ast.parse(source), [])
    return found


def in_code() -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter()
    for package in ("madqa", "madqa_plugins"):
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            for function, n in broad_catches(path.read_text(encoding="utf-8")).items():
                counts[(rel, function)] += n
    return counts


def in_docs() -> Counter[tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    assert SECTION in text, f"{DOC.name} lost its section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    counts: Counter[tuple[str, str]] = Counter()
    for row in re.finditer(r"^\| `([^`]+)` \| `([^`]+)` \| (\d+) \|", section, re.M):
        counts[(row.group(1), row.group(2))] += int(row.group(3))
    return counts


def test_every_broad_catch_left_is_listed_with_why() -> None:
    code, docs = in_code(), in_docs()
    unlisted = [f"| `{f}` | `{fn}` | {n} | WHY |" for (f, fn), n in sorted(code.items()) if docs[(f, fn)] != n]
    gone = [f"{f} {fn}" for (f, fn) in sorted(docs) if (f, fn) not in code]
    assert not unlisted, ("broad catches not listed (or listed with another count) in docs/reliability.md's "
                          f"{SECTION!r}: narrow them, or list them with why:\n" + "\n".join(unlisted))
    assert not gone, "listed in docs/reliability.md but no longer in the code:\n" + "\n".join(gone)


def test_the_walk_finds_what_it_must(tmp_path: Path) -> None:
    source = """
def quiet():
    try: f()
    except Exception: return []
class A:
    def m(self):
        def inner():
            try: f()
            except BaseException: pass
        try: f()
        except: log()
    def cleanup(self):
        try: f()
        except Exception: undo(); raise
    def narrow(self):
        try: f()
        except (OSError, ValueError): return None
        try: f()
        except (ValueError, Exception) as exc: raise Other() from exc
"""
    assert broad_catches(source) == Counter({"quiet": 1, "A.m.inner": 1, "A.m": 1, "A.narrow": 1})
