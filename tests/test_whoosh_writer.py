"""madqa_plugins.whoosh.whoosh_writer writes what Whoosh's own add_document writes, file for file, only faster."""

from __future__ import annotations

import hashlib
import random
import shutil
from pathlib import Path

import pytest
from whoosh import fields, index
from whoosh.codec.whoosh3 import W3Codec
from whoosh.writing import SegmentWriter

from madqa_plugins.text.text_analysis import analyze
from madqa_plugins.whoosh import whoosh_bm25
from madqa_plugins.whoosh.whoosh_writer import PageWriter

WORDS = ("report revenue the of 2.0 image/png C++ -v --no-color max_steps x86-64 naïve Straße 6 c "
         "gnuplot's docu-\nment plot axis grid legend table").split(" ")


def _pages(count: int, seed: int) -> list[tuple[str, int, list[str]]]:
    """Page token lists with repeated words (several positions), words on more pages than a posting
    block holds (128), an empty page and one-off words."""
    rng = random.Random(seed)
    pages = []
    for n in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(0, 60))] + [f"w{rng.randint(0, 900)}", "common"]
        text = "" if n == 7 else " ".join(words)
        pages.append((f"dir/doc{n // 10}.pdf", n % 10 + 1, analyze(text)))
    return pages


def _write(folder: Path, pages: list[tuple[str, int, list[str]]], fast: bool, limitmb: int = 128,
           merge: bool = True) -> None:
    ix = index.open_dir(str(folder)) if index.exists_in(str(folder)) else index.create_in(str(folder),
                                                                                          whoosh_bm25._schema())
    writer = (PageWriter if fast else SegmentWriter)(ix, limitmb=limitmb, codec=W3Codec(compression=0),
                                                     compound=False)
    for file, page, tokens in pages:
        if fast:
            writer.add_page(file, page, tokens)
        else:
            writer.add_document(file=file, page=page, text=tokens)
    writer.commit(merge=merge)
    ix.close()


def _files(folder: Path) -> dict[str, list[str]]:
    """The segment files' contents by kind (their names hold a random segment id; the TOC names them)."""
    out: dict[str, list[str]] = {}
    for path in folder.iterdir():
        if path.suffix in (".toc",) or "LOCK" in path.name:
            continue
        out.setdefault(path.suffix, []).append(hashlib.sha256(path.read_bytes()).hexdigest())
    return {kind: sorted(digests) for kind, digests in out.items()}


@pytest.mark.parametrize("limitmb", [128, 1])  # 1 MB: Whoosh's pool spills runs to disk for the file/page fields
def test_a_fresh_index_has_the_files_whoosh_writes(tmp_path: Path, limitmb: int) -> None:
    pages = _pages(400, seed=limitmb)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    _write(ours, pages, fast=True, limitmb=limitmb)
    _write(theirs, pages, fast=False, limitmb=limitmb)
    assert _files(ours) == _files(theirs)
    assert {".pst", ".trm", ".col"} <= set(_files(ours))
    with index.open_dir(str(ours)).searcher() as searcher:
        assert searcher.doc_count() == 400
        assert searcher.doc_frequency("text", "common") == 399  # all but the empty page: several blocks
        assert searcher.doc_frequency("text", "image/png") > 0


@pytest.mark.parametrize("helper_fails", [False, True])
def test_a_flush_split_with_a_helper_process_writes_the_same_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    helper_fails: bool) -> None:
    """A big flush forks a helper for the later words (here forced, on a small index); its postings and
    term infos are joined into the very files Whoosh writes. A helper that fails leaves its words to
    the writer, which writes them itself."""
    from madqa_plugins.whoosh import whoosh_writer

    joined = []
    join = PageWriter._join_helper
    monkeypatch.setattr(whoosh_writer, "_may_fork", lambda words: True)
    monkeypatch.setattr(PageWriter, "_join_helper",
                        lambda self, writer, helper, words: (joined.append(len(words)), join(self, writer, helper, words)))
    if helper_fails:  # only the forked helper ever makes a term info of its own: there it raises
        monkeypatch.setattr(whoosh_writer, "W3TermInfo", lambda: 1 / 0)
    pages = _pages(400, seed=5)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    _write(ours, pages, fast=True)
    _write(theirs, pages, fast=False)
    assert joined and joined[0] > 100  # the helper had words of its own
    assert _files(ours) == _files(theirs)
    with index.open_dir(str(ours)).searcher() as searcher:
        assert searcher.doc_frequency("text", "common") == 399
        assert searcher.doc_frequency("text", "w900") + searcher.doc_frequency("text", "w0") > 0


def test_a_commit_that_merges_older_segments_has_the_files_whoosh_writes(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    for part in range(6):  # six small segments: the next commit merges them (Whoosh's MERGE_SMALL)
        _write(base, _pages(3, seed=part), fast=False, merge=False)
    assert len(index.open_dir(str(base))._segments()) == 6
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    pages = _pages(40, seed=99)
    _write(ours, pages, fast=True)
    _write(theirs, pages, fast=False)
    assert _files(ours) == _files(theirs)
    ix = index.open_dir(str(ours))
    assert len(ix._segments()) < 7  # the merge happened
    with ix.searcher() as searcher:
        assert searcher.doc_count() == 6 * 3 + 40
    ix.close()


def test_another_schema_goes_through_add_document(tmp_path: Path) -> None:
    schema = fields.Schema(file=fields.ID(stored=True), page=fields.NUMERIC(stored=True),
                           text=fields.TEXT(stored=True))  # a stored text field: not this writer's shape
    ix = index.create_in(str(tmp_path), schema)
    writer = PageWriter(ix)
    writer.add_page("a.pdf", 1, ["stored", "words"])
    writer.commit()
    with ix.searcher() as searcher:
        assert searcher.stored_fields(0) == {"file": "a.pdf", "page": 1, "text": ["stored", "words"]}
