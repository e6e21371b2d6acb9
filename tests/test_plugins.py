"""The plugin system: built-ins, a plugins folder, overrides, unavailable components, hook docs."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest

import madqa
from madqa import hookspecs
from madqa.errors import PluginError
from madqa.plugins import KINDS, collect, get_plugin_manager

REPO = Path(__file__).resolve().parent.parent
HOOKS = [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("register_")]


def test_builtins_cover_every_kind_through_the_public_api(registry):
    by_kind = {kind: registry.names(kind) for kind in KINDS}
    assert "whoosh" in by_kind["retriever"]
    assert {"text", "ocr"} <= set(by_kind["page_reader"])
    assert "none" in by_kind["reranker"] and "passthrough" in by_kind["query_strategy"]
    assert "scripted" in by_kind["backend"]
    for comp in registry.list():
        assert comp.plugin.startswith("madqa_plugins."), comp


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_is_documented_in_code_and_docs(hook):
    doc = inspect.getdoc(getattr(hookspecs, hook)) or ""
    assert "Called" in doc and "Returns None" in doc and "register" in doc.lower(), hook
    assert f"`{hook}" in (REPO / "docs" / "plugins.md").read_text(encoding="utf-8"), f"{hook} missing from docs"


def test_every_hook_has_a_builtin_implementation():
    pm = get_plugin_manager(entry_points=False)
    for hook in HOOKS:
        assert getattr(pm.hook, hook).get_hookimpls(), hook


def _write_plugin(folder: Path, name: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text("import madqa\n\n" + body, encoding="utf-8")


def test_plugins_dir_adds_overrides_and_reports_unavailable(tmp_path):
    _write_plugin(tmp_path, "extra", '''
class Upper:
    def rewrite(self, query, state):
        return query.upper(), "upper-cased"

@madqa.hookimpl
def register_query_strategies(register):
    register("upper", lambda host, options: Upper(), "shouts", takes_host=True)
    register("passthrough", lambda host, options: Upper(), "a replacement", takes_host=True)
    register("needs-missing", lambda host, options: Upper(), "x", requires=("no_such_module_xyz",), takes_host=True)
''')
    registry = collect(get_plugin_manager(tmp_path, entry_points=False))
    upper = registry.get("query_strategy", "upper")
    assert upper.plugin == "extra.py (MADQA_PLUGINS_DIR)"
    assert registry.create("query_strategy", "upper", None, {}).rewrite("abc", None) == ("ABC", "upper-cased")
    passthrough = registry.get("query_strategy", "passthrough")  # the folder plugin overrides the built-in
    assert passthrough.plugin.endswith("(MADQA_PLUGINS_DIR)") and passthrough.shadows == ("madqa_plugins.strategies.passthrough",)
    listed = {c.name: c for c in registry.list()}
    assert listed["needs-missing"].unavailable and "no_such_module_xyz" in listed["needs-missing"].unavailable
    assert "needs-missing" not in registry.names("query_strategy")
    with pytest.raises(PluginError, match="unavailable"):
        registry.get("query_strategy", "needs-missing")
    with pytest.raises(PluginError, match="unknown retriever 'nope'.*whoosh"):
        registry.get("retriever", "nope")


def test_misspelled_hook_is_caught(tmp_path):
    _write_plugin(tmp_path, "typo", "@madqa.hookimpl\ndef register_retreivers(register):\n    pass\n")
    with pytest.raises(PluginError, match="unknown hook"):
        get_plugin_manager(tmp_path, entry_points=False)


def test_broken_plugin_file_is_named(tmp_path):
    _write_plugin(tmp_path, "broken", "raise RuntimeError('boom')\n")
    with pytest.raises(PluginError, match="broken.py failed to import: boom"):
        get_plugin_manager(tmp_path, entry_points=False)


def test_read_options_checks_names_and_types():
    from madqa import PluginError, read_options

    defaults = {"threshold": 0.8, "limit": 3, "model": None, "stem": False, "name": "x"}
    assert read_options(None, defaults, "t") == defaults
    got = read_options({"threshold": 1, "model": "m", "stem": True}, defaults, "t")
    assert got["threshold"] == 1.0 and isinstance(got["threshold"], float)
    assert got["model"] == "m" and got["stem"] is True and got["limit"] == 3
    with pytest.raises(PluginError, match="unknown option bogus .*known: limit, model, name, stem, threshold"):
        read_options({"bogus": 1}, defaults, "t")
    for bad in ({"limit": "3"}, {"limit": 2.5}, {"stem": 1}, {"limit": True}, {"name": 4}):
        with pytest.raises(PluginError, match="expects"):
            read_options(bad, defaults, "t")


def test_a_factory_taking_registry_is_given_the_one_creating_it():
    from madqa.plugins import Component, Registry

    seen = {}

    def composite(corpus, options, registry=None):
        seen["registry"] = registry
        return "made"

    registry = Registry()
    registry.components[("retriever", "composite")] = Component("retriever", "composite", composite, "test")
    registry.components[("retriever", "plain")] = Component("retriever", "plain", lambda corpus, options: "plain", "test")
    assert registry.create("retriever", "composite", None, {}) == "made" and seen["registry"] is registry
    assert registry.create("retriever", "plain", None, {}) == "plain"


def test_the_drift_embedder_comes_from_the_registry_so_a_plugin_can_replace_it(tmp_path):
    """The core asks the registry for the embedder (it never imports the built-in model): a plugin's
    ``minilm`` shadows the built-in, and an unknown name is a clear PluginError."""
    from madqa.evaluation.drift import embedding_drift, registry_embed

    _write_plugin(tmp_path, "letters", '''
class Letters:
    representation = "letter counts"

    def __init__(self, host, options):
        madqa.read_options(options, {}, "embedder letters")

    def embed(self, text):
        return [text.count(c) + 0.0 for c in "abcdefghijklmnopqrstuvwxyz"]

@madqa.hookimpl
def register_embedders(register):
    register("minilm", Letters, "counts letters", takes_host=True)
''')
    registry = collect(get_plugin_manager(tmp_path, entry_points=False))
    assert registry.get("embedder", "minilm").shadows == ("madqa_plugins.dense.minilm",)
    embed, representation = registry_embed(registry)
    assert representation.startswith("embedding: letter counts") and list(embed("abba"))[:2] == [2.0, 2.0]
    gold = [{"id": "q0", "question": "Q?", "answer_variants": [["x"]], "evidence": [{"document": "a.pdf", "page": 1}]}]
    rows = [{"id": "q0", "question": "Q?", "answer": ["x"], "citations": [],
             "search_history": [{"iteration": 1, "query": "abc", "num_results": 1},
                                {"iteration": 2, "query": "xyz", "num_results": 1}]}]
    drift = embedding_drift(rows, gold, embed, representation)
    assert drift["overall"]["query_drift_embedding"] == pytest.approx(1.0) and drift["representation"] == representation
    with pytest.raises(PluginError, match="unknown embedder 'nope'"):
        registry_embed(registry, "nope")


def test_a_factory_of_the_old_form_still_works_with_a_deprecation_warning(tmp_path, settings, registry):
    """Plugins written to the form documented before madqa.Host (``factory(corpus, options)``, a backend's
    ``factory(model, options)`` finding ``corpus``, ``api_key`` and ``api_base`` in its options, ``registry=``
    for a factory naming it) keep working, and are told, once per registration, how to move."""
    from tests.conftest import two_file_corpus

    _write_plugin(tmp_path, "old", '''
SEEN = {}

class Words:
    def __init__(self, corpus, options, registry=None):
        SEEN["registry"] = registry
        self.corpus = corpus

    def search(self, query, k):
        pages = [p for p in self.corpus.iter_pages() if query in p.text]
        return madqa.SearchResult(tuple(madqa.Hit(p.file, p.page, 1.0) for p in pages[:k]), query)

    @staticmethod
    def update_index(folder, previous, added, removed, language="xx", settings=None):
        SEEN["update_index"] = (language, settings is not None, len(list(added)))

class Quiet:
    def __init__(self, model, options):
        SEEN["backend"] = (model, sorted(options), options.get("api_key"), options.get("api_base"))

    def decide(self, messages, tools, force_answer):
        return madqa.ModelDecision(answer={"answer": ["x"], "citations": []})

@madqa.hookimpl
def register_retrievers(register):
    register("old-words", Words, "the old form")

@madqa.hookimpl
def register_backends(register):
    register("old-quiet", Quiet, "the old form")
''')
    with pytest.warns(DeprecationWarning) as caught:
        loaded = collect(get_plugin_manager(tmp_path, entry_points=False), settings)
    said = sorted(str(w.message) for w in caught)
    assert len(said) == 2 and all("takes_host=True" in m and "madqa.Host" in m for m in said)  # one per registration
    assert "backend 'old-quiet' with a factory of the old form (factory(model, options))" in said[0]
    assert "retriever 'old-words' with a factory of the old form (factory(corpus, options))" in said[1]
    assert not loaded.get("retriever", "old-words").takes_host and loaded.get("retriever", "whoosh").takes_host
    corpus = two_file_corpus(tmp_path / "docs", settings, loaded)  # ingested with the old-form update_index too
    old = sys.modules["madqa_dir_plugin_old"]
    assert old.SEEN["update_index"] == ("en", True, 3)  # given the corpus language and settings, as it asked
    found = loaded.create("retriever", "old-words", corpus, {}).search("Revenue", 5)
    assert [h.file for h in found.hits] == ["report.pdf"]
    assert old.SEEN["registry"] is loaded
    loaded.create("backend", "old-quiet", "m", {"timeout": 3}, corpus=corpus, api_key="sk-x", api_base="http://h/v1")
    assert old.SEEN["backend"] == ("m", ["api_base", "api_key", "corpus", "timeout"], "sk-x", "http://h/v1")


def test_a_factory_taking_the_host_gets_it_and_its_options_alone(tmp_path, settings, registry):
    from tests.conftest import two_file_corpus

    seen = {}

    def backend(host, options):
        seen["host"], seen["options"] = host, options
        return object()

    from madqa.plugins import Component, Registry

    made = Registry(settings=settings)
    made.components[("backend", "b")] = Component("backend", "b", backend, "test", takes_host=True)
    corpus = two_file_corpus(tmp_path / "docs", settings, registry)
    made.create("backend", "b", "openai/m", {"timeout": 3}, corpus=corpus, api_key="sk-x", api_base="http://h/v1")
    host = seen["host"]
    assert isinstance(host, madqa.Host) and seen["options"] == {"timeout": 3}
    assert (host.model, host.corpus, host.api_key, host.api_base) == ("openai/m", corpus, "sk-x", "http://h/v1")
    assert host.registry is made and host.settings is settings and "sk-x" not in repr(host)
