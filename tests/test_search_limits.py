"""Wildcard searches stay bounded (issue 12, item 7): few patterns expanded, each to its most frequent words,
leading wildcards need letters, and a search that runs out of time says its result is partial.

The same retriever objects serve the CLI's ``search``, the web app's search box and the agent's tool.
"""

from __future__ import annotations

import itertools
import json

import pytest

from madqa import search_limits
from madqa.agent import Agent
from madqa.corpus import Corpus
from madqa.errors import SettingsError
from madqa.index import ingest
from madqa.plugins import collect, get_plugin_manager
from madqa.settings import Settings, load_config
from tests.conftest import make_pdf
from tests.test_bad_input import cli

RETRIEVERS = ["whoosh", "tantivy"]
ATTACK = "*a* *b* *c* *d* *e* *f* *g* *h*"  # the red team's query: 109 s and GBs on Whoosh before


def words(n: int) -> list[str]:
    """``n`` distinct pseudo-words: many share letters, so each broad pattern matches thousands."""
    letters = "abcdefghik"
    return ["".join(p) for p in itertools.islice(itertools.product(letters, repeat=4), n)]


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    """A corpus whose dictionary holds 6,000 distinct words (the shape that made wildcards expensive)."""
    tmp = tmp_path_factory.mktemp("wide")
    vocab = words(6000)
    pages = [" ".join(vocab[i::12]) + " annual report" for i in range(12)]
    root = tmp / "docs"
    make_pdf(root / "wide.pdf", pages, fontsize=4)
    settings = Settings.from_env(env={}, home=tmp / "home")
    registry = collect(get_plugin_manager(entry_points=False))
    ingest(root, settings, registry, ocr="never")
    return Corpus.open(root, settings.corpora_dir), settings, registry


@pytest.mark.parametrize("name", RETRIEVERS)
def test_wildcard_expansion_is_bounded_and_says_so(wide, name):
    corpus, _, registry = wide
    retriever = registry.create("retriever", name, corpus, {})
    result = retriever.search(ATTACK, 5)
    assert f"needs at least {search_limits.MIN_LEADING_CHARS} letters; ignored: '*a*', '*b*'" in result.note
    many = retriever.search("a* b* c* d* e* f*", 5)
    assert f"only the first {search_limits.MAX_WILDCARDS} wildcard words are expanded; ignored: 'e*', 'f*'" in many.note
    assert f"the {search_limits.MAX_EXPANSION} most frequent were searched, for: 'a*', 'b*'" in many.note
    # a narrow pattern still works, and a leading wildcard with enough letters too
    assert retriever.search("annu*", 5).hits and retriever.search("*nual", 5).hits


@pytest.mark.parametrize("name", RETRIEVERS)
def test_a_search_past_its_time_budget_stops_and_says_the_result_is_partial(wide, name, monkeypatch):
    corpus, settings, registry = wide
    # the setting as read at start-up (MADQA_SEARCH_TIMEOUT_S=1), handed over by the registry
    timed = collect(get_plugin_manager(entry_points=False), Settings.from_env(env={"MADQA_SEARCH_TIMEOUT_S": "1"}))
    retriever = timed.create("retriever", name, corpus, {})
    clock = itertools.count(0, 0.5)  # each look at the clock: half a second later
    monkeypatch.setattr(search_limits.time, "monotonic", lambda: next(clock))
    # no page has both words, so the search would go on to its stemmed and any-word fallbacks
    result = retriever.search("annual zzzunknown", 5)
    assert "time budget of 1 s" in result.note and "partial" in result.note


def test_bad_time_budget_setting_is_a_clear_error():
    with pytest.raises(SettingsError, match="MADQA_SEARCH_TIMEOUT_S .*expects a number, got 'soon'"):
        Settings.from_env(env={"MADQA_SEARCH_TIMEOUT_S": "soon"})
    with pytest.raises(SettingsError, match="MADQA_SEARCH_TIMEOUT_S must be between 0.05 and 600"):
        Settings.from_env(env={"MADQA_SEARCH_TIMEOUT_S": "0"})


def test_a_bad_search_timeout_fails_at_start_not_at_each_search(tmp_path):
    """``=abc`` used to be read on every search: the model was told "expects a number" at each step and the
    question ended as a refusal with exit 0. Now the command stops before it starts, naming the variable."""
    make_pdf(tmp_path / "docs" / "r.pdf", ["Revenue was 7.5 million."])
    proc = cli("ask", "--corpus", str(tmp_path / "docs"), "What was the revenue?", home=tmp_path / "home",
               MADQA_SEARCH_TIMEOUT_S="abc")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "MADQA_SEARCH_TIMEOUT_S" in proc.stderr and "'abc'" in proc.stderr, proc.stderr


def test_cli_search_and_the_agent_tool_report_the_limits(wide, tmp_path):
    corpus, settings, registry = wide
    proc = cli("search", "--corpus", str(corpus.root), ATTACK, home=settings.home)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "needs at least 3 letters" in proc.stdout
    config = load_config("offline").with_overrides(backend="scripted")
    agent = Agent(corpus, config, registry, settings,
                  {"script": [{"search": ATTACK}, {"answer": ["x"], "citations": []}]})
    search = next(s for s in agent.run("anything?") if s.type == "search")
    assert "needs at least 3 letters" in search.retriever_note
    assert json.dumps(search.to_dict())  # the note travels in the trace
