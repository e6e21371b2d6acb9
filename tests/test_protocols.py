"""The typed plugin contract (madqa/protocols.py), options declared once (madqa/options.py), and the
third-party retriever, tool and backend of docs/plugins.md written from the docs alone."""

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
DOCS = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")  # the guide: writing a plugin
REFERENCE = (REPO / "docs" / "plugins-reference.md").read_text(encoding="utf-8")  # the built-ins, every capability
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
    row = re.search(rf"^\| `{capability}` \|.*$", REFERENCE, re.M)
    assert row, f"{capability} has no row in docs/plugins-reference.md's capabilities table"
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
    table = re.search(r"<!-- options-table:[^\n]*-->\n(.*?)\n<!-- /options-table -->", REFERENCE, re.S)
    assert table, "docs/plugins-reference.md lost its options table"
    expected = options_table((c.kind, c.name, o) for c in registry.list() for o in c.options)
    assert table.group(1) == expected, ("docs/plugins-reference.md's options table drifted: paste "
                                        "`madqa plugins --markdown`")


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


def guide_examples(folder: Path) -> list[Path]:
    """Every one-file plugin of the guide (a python block opening with ``# $MADQA_PLUGINS_DIR/NAME.py``),
    copied out of docs/plugins.md into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, code in re.findall(r"```python\n# \$MADQA_PLUGINS_DIR/(\w+\.py)\n(.*?)```", DOCS, re.S):
        paths.append(folder / name)
        paths[-1].write_text(code, encoding="utf-8")
    return paths


@pytest.mark.slow
def test_the_guides_retriever_tool_and_backend_type_check_strictly(tmp_path) -> None:
    # the issue-36 promise: a third-party retriever and a tool written from plugins.md alone pass mypy --strict
    paths = guide_examples(tmp_path / "all")
    assert [p.name for p in paths] == ["keywords.py", "page_text.py", "first_hit.py"]
    checked = _mypy(*map(str, paths), "--strict", "--follow-imports=silent")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Success: no issues found in 3 source files" in checked.stdout
    path = example_plugin(tmp_path)
    broken = path.read_text(encoding="utf-8").replace("def search(self, query: str, k: int)",
                                                       "def search(self, query: str)")
    path.write_text(broken.replace("k]", "5]"), encoding="utf-8")
    failed = _mypy(str(path), "--follow-imports=silent")
    assert failed.returncode != 0 and "Retriever" in failed.stdout, failed.stdout  # the Protocol is what checks it


@pytest.mark.slow
def test_mypy_passes_on_madqa_and_the_builtins() -> None:
    checked = _mypy()
    assert checked.returncode == 0, checked.stdout[-6000:] + checked.stderr


def test_the_guides_backend_answers_through_the_loop(tmp_path, demo_settings, demo_corpus) -> None:
    folder = tmp_path / "plugins"
    guide_examples(folder)
    command = re.search(r"```sh\n(MADQA_PLUGINS_DIR=~/my-plugins madqa ask --corpus data/demo/docs --backend first-hit"
                        r"[^\n]*)\n```", DOCS)
    assert command, "docs/plugins.md lost the command that runs its backend"
    done = _guide_command(command.group(1), folder, demo_settings)
    assert done.returncode == 0, done.stderr
    assert "search 'annual revenue'" in done.stdout and "ANSWER: see finance/annual_report_2024.pdf" in done.stdout


def _guide_command(line: str, plugins: Path, settings: Settings) -> subprocess.CompletedProcess[str]:
    """A ``madqa ...`` command line of the guide, run with ``plugins`` as ``~/my-plugins``, from the checkout."""
    import shlex

    words = shlex.split(line)
    assert words[0] == "MADQA_PLUGINS_DIR=~/my-plugins" and words[1] == "madqa"
    return subprocess.run([sys.executable, "-m", "madqa", *words[2:]], capture_output=True, text=True, cwd=REPO,
                          env={**ENV, "MADQA_PLUGINS_DIR": str(plugins), "MADQA_HOME": str(settings.home)},
                          timeout=300)


def test_the_guides_way_to_try_a_tool_without_a_model_works(tmp_path, demo_settings, demo_corpus) -> None:
    folder = tmp_path / "plugins"
    guide_examples(folder)
    command = re.search(r"<!-- try-without-a-model:[^\n]*-->\n```sh\n([^\n]*)\n```", DOCS)
    assert command, "docs/plugins.md lost its command to try a tool without a model"
    done = _guide_command(command.group(1), folder, demo_settings)
    assert done.returncode == 0, done.stderr
    assert 'read_page_text {"file": "finance/annual_report_2024.pdf", "page": 1}' in done.stdout
    assert "Text of File: finance/annual_report_2024.pdf, Page: 1:" in done.stdout and "ANSWER: x" in done.stdout


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


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", ["README.md", "docs/plugins.md", "docs/plugins-reference.md", "docs/search.md",
                                  "docs/performance.md", "docs/research.md"])
def test_links_to_the_plugin_pages_land_on_a_heading(page: str) -> None:
    text = (REPO / page).read_text(encoding="utf-8")
    links = re.findall(r"\]\(((?:docs/)?plugins(?:-reference)?\.md)(?:#([^)]+))?\)", text)
    assert links, f"{page} no longer links the plugin pages"
    for target, anchor in links:
        path = (REPO / page).parent / target
        assert path.is_file(), f"{page} links {target}, which does not exist"
        headings = {_slug(h) for h in re.findall(r"^#+ (.*)$", path.read_text(encoding="utf-8"), re.M)}
        assert not anchor or anchor in headings, f"{page} links {target}#{anchor}: no such heading"


def test_a_plugin_replaces_a_built_in_by_its_name_trylast_or_not(tmp_path) -> None:
    # plugins-reference.md: the built-ins are trylast but litellm's, which is called after the plugins' anyway
    builtins = get_plugin_manager(entry_points=False)
    plain = {builtins.get_name(impl.plugin) for hook in ("register_retrievers", "register_backends")
             for impl in getattr(builtins.hook, hook).get_hookimpls() if not impl.trylast}
    assert plain == {"madqa_plugins.litellm.litellm_backend"}
    (tmp_path / "mine.py").write_text('''import madqa

@madqa.hookimpl
def register_retrievers(register):
    register("whoosh", lambda host, options: None, "mine", takes_host=True)

@madqa.hookimpl
def register_backends(register):
    register("litellm", lambda host, options: None, "mine", takes_host=True)
''', encoding="utf-8")
    registry = collect(get_plugin_manager(tmp_path, entry_points=False))
    for kind, name, builtin in (("retriever", "whoosh", "madqa_plugins.whoosh.whoosh_bm25"),
                                ("backend", "litellm", "madqa_plugins.litellm.litellm_backend")):
        component = registry.components[(kind, name)]
        assert component.description == "mine" and component.shadows == (builtin,)
