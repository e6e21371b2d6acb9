"""Import boundaries, checked statically over the source (module-level and function-local imports alike).

- A built-in plugin (any module in ``madqa_plugins/``) reaches madqa only through its public face: ``import madqa``,
  ``from madqa import name`` and ``madqa.name`` for the names in ``madqa.__all__``. Submodules, even
  documented ones (``madqa.tool_text``, ``madqa.agent``), are not part of it: what plugins need is exported
  on ``madqa``. Plugin modules may import each other (``madqa_plugins/offline/`` holds the offline backend's).
- The core (``madqa/``) never imports a plugin: it asks the registry for every part.
- No import circle inside the core, not even one hidden behind a function-local import (the runner and the
  cluster jobs share ``evaluation/answering.py``, an ingest and its cluster jobs ``page_readers.py``), nor one
  made by imports for type hints only (``if TYPE_CHECKING:``).
- The contract is a leaf: what plugins receive and return (``madqa.contract``, ``madqa.protocols``,
  ``madqa.types``, ...) imports nothing but the contract and the few leaves it stands on (errors, settings,
  languages), type hints included: never the loop (``agent``, ``tools``, ``plugins``, ``context``, ...).
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

import madqa

REPO = Path(__file__).resolve().parent.parent
PUBLIC = frozenset(madqa.__all__)


def _type_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:`` (imported for type hints only, never at run time)."""
    return {id(inner) for node in ast.walk(tree) if isinstance(node, ast.If)
            and isinstance(node.test, ast.Name | ast.Attribute) and "TYPE_CHECKING" in ast.unparse(node.test)
            for stmt in node.body for inner in ast.walk(stmt)}


def _imports(tree: ast.AST, run_time: bool = False) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names) of every absolute import anywhere in ``tree`` (names: what ``from`` takes);
    ``run_time``: without those made for type hints only."""
    found = []
    skip = _type_only(tree) if run_time else set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module, tuple(alias.name for alias in node.names)))
    return found


def plugin_violations(source: str, where: str) -> list[str]:
    """What in a plugin's source reaches past madqa's public face."""
    tree = ast.parse(source)
    problems = []
    for line, module, names in _imports(tree):
        top = module.split(".")[0]
        if top != "madqa":
            continue
        if module != "madqa":
            problems.append(f"{where}:{line}: imports {module} (only `import madqa` / `from madqa import ...`)")
        else:
            problems += [f"{where}:{line}: imports madqa.{n}, which is not in madqa.__all__"
                         for n in names if n not in PUBLIC]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "madqa" \
                and node.attr not in PUBLIC:
            problems.append(f"{where}:{node.lineno}: uses madqa.{node.attr}, which is not in madqa.__all__")
    return problems


def core_violations(source: str, where: str) -> list[str]:
    """Every import of a plugin module in a core module's source."""
    return [f"{where}:{line}: imports {module}" for line, module, _ in _imports(ast.parse(source))
            if module.split(".")[0] == "madqa_plugins"]


def _sources(folder: str) -> list[Path]:
    return sorted((REPO / folder).rglob("*.py"))


def test_built_in_plugins_use_only_madqas_public_face():
    paths = _sources("madqa_plugins")
    assert len(paths) > 30
    problems = [p for path in paths for p in plugin_violations(path.read_text(encoding="utf-8"),
                                                               str(path.relative_to(REPO)))]
    assert problems == []


def test_the_core_never_imports_a_plugin():
    paths = _sources("madqa")
    assert len(paths) > 50
    problems = [p for path in paths for p in core_violations(path.read_text(encoding="utf-8"),
                                                             str(path.relative_to(REPO)))]
    assert problems == []


@pytest.mark.parametrize("source", [
    "from madqa.evaluation.report import lexical_similarity\n",
    "def f():\n    from madqa.plugins import collect\n    return collect\n",  # hidden in a function
    "import madqa.agent\n",
    "from madqa import plugins\n",  # a submodule through the package
    "import madqa\nx = madqa.tool_text.read_tool_calls\n",  # a documented submodule is still not the face
])
def test_the_plugin_check_catches_a_crossing(source):
    assert plugin_violations(source, "p.py")


def old_package_imports(source: str, where: str) -> list[str]:
    """Every import of the old top-level package ``plugins`` (moved to ``madqa_plugins``, no shim left)."""
    return [f"{where}:{line}: imports {module}" for line, module, _ in _imports(ast.parse(source))
            if module.split(".")[0] == "plugins"]


def test_nothing_imports_the_old_plugins_package():
    # an editable install of an older checkout still maps ``plugins``: a stale import would pass silently
    paths = [*_sources("madqa"), *_sources("madqa_plugins"), *_sources("tests"), *_sources("bench"),
             *_sources("data"), *_sources("scripts"), REPO / "app.py"]
    problems = [p for path in paths for p in old_package_imports(path.read_text(encoding="utf-8"),
                                                                 str(path.relative_to(REPO)))]
    assert problems == []


@pytest.mark.parametrize("source", ["import plugins.whoosh_bm25\n", "from plugins import minilm\n",
                                    "def f():\n    from plugins.dense import X\n"])
def test_the_old_package_check_catches_an_import(source):
    assert old_package_imports(source, "m.py")
    assert not old_package_imports(source.replace("plugins", "madqa_plugins.dense"), "m.py")


def test_the_plugin_check_passes_the_public_face():
    assert plugin_violations("import madqa\nfrom madqa import Hit, hookimpl\nx = madqa.SearchResult\n"
                             "from madqa_plugins.dense import minilm\nimport numpy\n", "p.py") == []


@pytest.mark.parametrize("source", ["from madqa_plugins.dense.minilm import encoder\n",
                                    "def f():\n    import madqa_plugins.dense.minilm\n", "from madqa_plugins.dense import minilm\n"])
def test_the_core_check_catches_a_plugin_import(source):
    assert core_violations(source, "m.py")


# what plugins receive and return; and what it may stand on (leaves themselves: they import no other core module)
CONTRACT = frozenset({"madqa.contract", "madqa.protocols", "madqa.types", "madqa.hookspecs", "madqa.options",
                      "madqa.query_language"})
CONTRACT_GROUND = frozenset({"madqa.errors", "madqa.settings", "madqa.languages"})


def _core_graph(type_hints: bool = False) -> dict[str, set[str]]:
    """Core module -> the core modules it imports, at module level or inside a function (the package
    ``madqa`` itself left out: every submodule's import runs it first, as Python does for any package);
    ``type_hints``: with the imports made for type hints only."""
    trees = {}
    for path in _sources("madqa"):
        parts = path.relative_to(REPO).with_suffix("").parts
        trees[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = ast.parse(path.read_text(encoding="utf-8"))
    graph = {}
    for name, tree in trees.items():
        edges = set()
        for _, module, names in _imports(tree, run_time=not type_hints):
            edges |= {m for m in (module, *(f"{module}.{n}" for n in names)) if m in trees and m not in (name, "madqa")}
        graph[name] = edges
    graph.pop("madqa")
    return graph


def circles(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every import (a, b) of ``graph`` whose target imports its importer back, directly or through others."""
    def reach(start: str) -> set[str]:
        seen, stack = set(), [start]
        while stack:
            for nxt in graph.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    return sorted((a, b) for a, targets in graph.items() for b in targets if a in reach(b))


def test_the_core_has_no_import_circle():
    graph = _core_graph()
    assert "madqa.evaluation.answering" in graph["madqa.evaluation.run_jobs"]
    assert circles(graph) == []


def test_the_core_has_no_import_circle_even_for_type_hints():
    # protocols -> agent/tools (for SearchState, Observation) made agent, plugins, protocols, scope, search_call,
    # tool_calls and tools one circle, and ingest_limits -> index (IngestReport) a second, until issue 36
    graph = _core_graph(type_hints=True)
    assert "madqa.plugins" in graph["madqa.tools"]  # a type-only import is in this graph
    assert circles(graph) == []


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, stack = set(), [start]
    while stack:
        for nxt in graph.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def leaf_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every core module outside the contract that a contract module reaches, directly or through others."""
    return sorted(f"{module} reaches {reached}" for module in sorted(CONTRACT & graph.keys())
                  for reached in _reach(graph, module) - CONTRACT - CONTRACT_GROUND)


def test_the_contract_is_a_leaf():
    graph = _core_graph(type_hints=True)
    assert CONTRACT <= graph.keys()
    assert all(_reach(graph, m) <= CONTRACT_GROUND for m in CONTRACT_GROUND)  # the ground is a leaf too
    assert leaf_violations(graph) == []


def test_the_leaf_check_sees_a_type_only_import_of_the_loop():
    b = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from madqa.agent import Agent\n")
    graph = {"madqa.types": set(), "madqa.protocols": {"madqa.types", *(m for _, m, _ in _imports(b) if m.startswith("madqa."))},
             "madqa.agent": {"madqa.protocols"}}
    assert leaf_violations(graph) == ["madqa.protocols reaches madqa.agent"]


def test_the_public_face_holds_the_contract():
    # what a retriever, a tool or a strategy is handed and returns is on madqa, not only in a submodule
    assert {"Corpus", "Host", "SearchState", "QuestionState", "Observation", "ShownPage", "PageText",
            "DocumentRecord", "Components", "query_language", "Hit", "SearchResult", "PageRef"} <= PUBLIC
    import madqa.contract
    import madqa.protocols

    for module in (madqa.contract, madqa.protocols):
        public = {n for n, v in vars(module).items() if isinstance(v, type) and v.__module__ == module.__name__
                  and not n.startswith("_")}
        assert public - PUBLIC <= {"Capability", "UpdateIndex"}, module.__name__


def test_the_circle_check_sees_a_circle_through_a_function_local_import():
    a = ast.parse("from madqa.b import f\n")
    b = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from madqa.c import C\n"
                  "def g():\n    from madqa.a import h\n")
    graph = {"madqa.a": {m for _, m, _ in _imports(a)}, "madqa.b": {m for _, m, _ in _imports(b, run_time=True)},
             "madqa.c": {"madqa.b"}}
    assert circles(graph) == [("madqa.a", "madqa.b"), ("madqa.b", "madqa.a")]


def test_every_package_folder_is_installed():
    # pyproject lists packages by hand: a subpackage missing there is left out of a (non-editable) install
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {".".join(init.parent.relative_to(REPO).parts) for top in ("madqa", "madqa_plugins")
             for init in (REPO / top).rglob("__init__.py")}
    assert "madqa_plugins.whoosh" in found
    assert found == listed
