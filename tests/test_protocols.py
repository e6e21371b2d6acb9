"""The typed plugin contract (madqa/protocols.py), options declared once (madqa/options.py), and the
third-party retriever of docs/plugins.md written from the docs alone."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import madqa
from madqa import hookspecs
from madqa.errors import SettingsError
from madqa.options import options_table
from madqa.plugins import collect, get_plugin_manager
from madqa.protocols import CAPABILITIES, backend_capabilities, retriever_indexing
from madqa.settings import Settings, load_config
from madqa.ui.policy import Refused, WebPolicy

REPO = Path(__file__).resolve().parent.parent
DOCS = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def example_plugin(folder: Path) -> Path:
    """The docs' keywords retriever, copied out of docs/plugins.md into ``folder``."""
    block = re.search(r"```python\n# \$MADQA_PLUGINS_DIR/keywords.py\n(.*?)```", DOCS, re.S)
    assert block, "docs/plugins.md lost its keywords retriever example"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "keywords.py"
    path.write_text(block.group(1), encoding="utf-8")
    return path


@pytest.mark.parametrize("capability", [c.name for c in CAPABILITIES])
def test_every_capability_is_documented(capability: str) -> None:
    row = re.search(rf"^\| `{capability}` \|.*$", DOCS, re.M)
    assert row, f"{capability} has no row in docs/plugins.md's capabilities table"
    declared = next(c for c in CAPABILITIES if c.name == capability)
    assert declared.kind.replace("_", " ") in row.group(0)
    hook = {"retriever": "register_retrievers", "reranker": "register_rerankers",
            "query_strategy": "register_query_strategies", "backend": "register_backends",
            "tool": "register_tools"}[declared.kind]
    assert f"``{capability}" in (getattr(hookspecs, hook).__doc__ or ""), f"{capability} missing from {hook}'s docstring"


def test_capabilities_default_when_undeclared_and_follow_what_a_component_learns() -> None:
    class Plain:
        def decide(self, messages, tools, force_answer):  # noqa: ANN001, ANN202
            raise AssertionError

    caps = backend_capabilities(Plain())
    assert (caps.supports_tools, caps.supports_vision, caps.provider) == (True, True, None)

    class Learning(Plain):
        def __init__(self) -> None:
            self.refused_images = False

        @property
        def supports_vision(self) -> bool:
            return not self.refused_images

    backend = Learning()
    assert backend_capabilities(backend).supports_vision
    backend.refused_images = True  # a server said "no image input" mid-run
    assert not backend_capabilities(backend).supports_vision
    assert retriever_indexing(Plain) == madqa.RetrieverIndexing()


def test_builtins_satisfy_their_protocols(registry) -> None:
    from madqa_plugins.dense.hybrid import HybridRetriever
    from madqa_plugins.whoosh.whoosh_bm25 import WhooshRetriever

    assert isinstance(registry.get("retriever", "whoosh").factory, madqa.IndexingRetriever)
    assert retriever_indexing(WhooshRetriever).update_index_streams and retriever_indexing(WhooshRetriever).indexes
    assert retriever_indexing(HybridRetriever).index_parts == ("whoosh", "dense")
    assert isinstance(registry.create("query_strategy", "passthrough", None, {}), madqa.QueryStrategy)
    assert isinstance(registry.create("reranker", "none", None, {}), madqa.Reranker)
    assert isinstance(registry.create("page_reader", "text", {}), madqa.PageReader)


def test_declared_options_check_type_range_choices_and_read_text() -> None:
    declared = (madqa.Option("depth", int, 20, "d", low=1, visitor_safe=True, visitor_high=50),
                madqa.Option("mode", str, "a", "m", choices=("a", "b")),
                madqa.Option("weight", float, None, "w", low=0, above=True))
    assert madqa.read_options({"depth": "30", "weight": 2}, declared, "t") == {"depth": 30, "mode": "a", "weight": 2.0}
    for bad, words in (({"depth": 0}, "depth must be a whole number at least 1"), ({"depth": 2.5}, "expects int"),
                       ({"mode": "c"}, "mode must be one of a, b"), ({"weight": 0}, "weight must be a number above 0")):
        with pytest.raises(madqa.OptionError, match=words):
            madqa.read_options(bad, declared, "t")
    with pytest.raises(madqa.SettingsError):  # a bad value is a setting's error too
        madqa.read_options({"depth": -1}, declared, "t")
    assert declared[0].visitor_allows(50) and not declared[0].visitor_allows(51)
    assert not declared[1].visitor_allows("a")  # not visitor-safe


def test_docs_options_table_is_the_declared_one(registry) -> None:
    table = re.search(r"<!-- options-table:[^\n]*-->\n(.*?)\n<!-- /options-table -->", DOCS, re.S)
    assert table, "docs/plugins.md lost its options table"
    expected = options_table((c.kind, c.name, o) for c in registry.list() for o in c.options)
    assert table.group(1) == expected, "docs/plugins.md's options table drifted: paste `madqa plugins --markdown`"


def test_web_policy_allows_exactly_the_visitor_safe_declarations(registry) -> None:
    policy = WebPolicy.from_settings(Settings.from_env(env={}), registry=registry)
    base = load_config("offline")
    safe = {(c.kind, o.name) for c in registry.list() for o in c.options if o.visitor_safe}
    assert ("retriever", "analyzer") in safe and ("backend", "api_base") not in safe
    for kind, name in sorted({(c.kind, o.name) for c in registry.list() for o in c.options}):
        option = next(o for c in registry.list() if c.kind == kind for o in c.options if o.name == name)
        try:
            config = base.with_overrides(options={kind: {name: option.default if option.default is not None else 1}})
        except SettingsError:  # a key-like name (milvus's token): never an option in a config, let alone a visitor's
            continue
        if (kind, name) in safe:
            policy.check_config(config, base)
        else:
            with pytest.raises(Refused, match="cannot be set in the web app"):
                policy.check_config(config, base)


def test_the_docs_retriever_loads_searches_and_shows_its_option(tmp_path, settings, registry) -> None:
    from tests.conftest import two_file_corpus

    path = example_plugin(tmp_path / "plugins")
    assert len(path.read_text(encoding="utf-8").splitlines()) < 60
    loaded = collect(get_plugin_manager(path.parent, entry_points=False))
    component = loaded.get("retriever", "keywords")
    assert [o.name for o in component.options] == ["min_words"] and component.plugin == "keywords.py (MADQA_PLUGINS_DIR)"
    corpus = two_file_corpus(tmp_path / "docs", settings, registry)
    found = loaded.create("retriever", "keywords", corpus, {"min_words": 2}).search("revenue 2024", 5)
    assert [(h.file, h.page) for h in found.hits] == [("report.pdf", 1)]  # the memo holds 2024 alone
    assert len(loaded.create("retriever", "keywords", corpus, {}).search("revenue 2024", 5).hits) == 2
    with pytest.raises(madqa.OptionError, match="min_words"):
        loaded.create("retriever", "keywords", corpus, {"min_words": 0})
    policy = WebPolicy.from_settings(Settings.from_env(env={"MADQA_PLUGINS_DIR": str(path.parent)}))
    base = load_config("offline")
    policy.check_config(base.with_overrides(retriever="keywords", options={"retriever": {"min_words": 3}}), base)
    with pytest.raises(Refused, match="outside"):
        policy.check_config(base.with_overrides(retriever="keywords", options={"retriever": {"min_words": 11}}), base)
    listed = subprocess.run([sys.executable, "-m", "madqa", "plugins", "--json"], capture_output=True, text=True,
                            env={**ENV, "MADQA_PLUGINS_DIR": str(path.parent)}, cwd=tmp_path, timeout=120)
    assert listed.returncode == 0, listed.stderr
    keywords = next(c for c in json.loads(listed.stdout) if c["name"] == "keywords")
    assert keywords["options"][0]["name"] == "min_words" and keywords["options"][0]["visitor_safe"]
    shown = subprocess.run([sys.executable, "-m", "madqa", "plugins"], capture_output=True, text=True,
                           env={**ENV, "MADQA_PLUGINS_DIR": str(path.parent)}, cwd=tmp_path, timeout=120)
    assert re.search(r"retriever keywords options.*\n.*\* min_words +int +default 1", shown.stdout)


def _mypy(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"), *args],
                          capture_output=True, text=True, cwd=cwd, env=ENV, timeout=900)


@pytest.mark.slow
def test_the_docs_retriever_type_checks_against_the_protocol(tmp_path) -> None:
    path = example_plugin(tmp_path)
    checked = _mypy(str(path), "--strict", "--follow-imports=silent")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    broken = path.read_text(encoding="utf-8").replace("def search(self, query: str, k: int)",
                                                       "def search(self, query: str)")
    path.write_text(broken.replace("k]", "5]"), encoding="utf-8")
    failed = _mypy(str(path), "--follow-imports=silent")
    assert failed.returncode != 0 and "Retriever" in failed.stdout, failed.stdout  # the Protocol is what checks it


@pytest.mark.slow
def test_mypy_passes_on_madqa_and_the_builtins() -> None:
    checked = _mypy()
    assert checked.returncode == 0, checked.stdout[-6000:] + checked.stderr


def test_a_plugin_registering_options_that_are_not_declarations_is_named(tmp_path) -> None:
    (tmp_path / "loose.py").write_text('''import madqa

@madqa.hookimpl
def register_rerankers(register):
    register("loose", lambda host, options: None, "x", options=("depth",), takes_host=True)
''', encoding="utf-8")
    with pytest.raises(madqa.PluginError, match="loose.py .*'loose' with options that are not madqa.Option"):
        collect(get_plugin_manager(tmp_path, entry_points=False))


def test_read_options_with_plain_defaults_keeps_any_default_type() -> None:
    from pathlib import PurePath

    defaults = {"where": PurePath("a"), "pair": (1, 2)}
    assert madqa.read_options({"pair": (3, 4)}, defaults, "t") == {"where": PurePath("a"), "pair": (3, 4)}
    with pytest.raises(madqa.PluginError, match="option pair expects tuple"):
        madqa.read_options({"pair": [3, 4]}, defaults, "t")
