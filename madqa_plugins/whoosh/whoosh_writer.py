"""Writing the ``whoosh`` index from token lists, without Whoosh's per-token and per-posting overheads.

Not a plugin: ``madqa_plugins.whoosh.whoosh_bm25`` uses it. Whoosh's own ``add_document`` walks a page's tokens
as Token objects through generators and puts every posting into a pool of tuples that is sorted
(and spilled to disk and merged back, past ``limitmb``) at the commit, whose flush then reads each
posting's page length back from the length column it has just written and adds the postings one
call at a time. Here a page's ``text`` postings go into one array of ints per word, and the flush
writes the words in order, a posting block at a time, with the page lengths from memory. What
reaches the disk is what Whoosh writes for ``add_document(file=..., page=..., text=tokens)``, file
for file (``tests/test_whoosh_writer.py`` compares them, also when a commit merges older segments);
a schema of another shape goes through Whoosh's own ``add_document``. It relies on the internals of
the pinned Whoosh-Reloaded (``SegmentWriter``'s pool and per-document writer, ``W3PostingsWriter``'s
block buffers): that test is what says an upgrade changed them.
"""

from __future__ import annotations

import gc
import os
import pickle
import tempfile
import threading
from array import array
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

from whoosh import fields, formats
from whoosh.codec.whoosh3 import W3TermInfo
from whoosh.filedb.structfile import StructFile
from whoosh.system import pack_int, pack_long, pack_uint, pack_ushort
from whoosh.util.numeric import byte_to_length, length_to_byte
from whoosh.writing import SegmentWriter

TEXT = "text"
FIELDS = ("file", "page", TEXT)  # the schema this writer is fast for (madqa_plugins.whoosh.whoosh_bm25._schema)
PARALLEL_MIN_WORDS = 20_000  # fewer words than this: one process writes them all (a fork costs ~0.1 s)
WORD_COST = 40  # a word's fixed cost in the flush, in ints of postings (measured on the realdocs set)
HELPER_SHARE = 0.55  # of the flush's work, for the helper
_EXTENT = len(pack_long(0) + pack_int(0))  # a term info's last bytes: where its postings are


def _fast_text(field: Any) -> bool:
    """True when ``field`` is indexed exactly as this module assumes (positions, no boost, vector,
    spelling, column or stored value)."""
    return (isinstance(field, fields.TEXT) and type(field.format) is formats.Positions
            and field.format.field_boost == 1.0 and field.scorable and not field.stored and not field.vector
            and not field.separate_spelling() and field.column_type is None)


def _encode(positions: Any) -> bytes:
    """whoosh.formats.Positions.encode: the count, then the pickled gaps between positions. Always a
    new bytes object: a block's pickle refers back to an object it holds twice instead of repeating it,
    so shared ones would make other files than Whoosh's."""
    if len(positions) == 1:
        tail = _ONE_TAIL.get(positions[0])
        if tail is None:
            tail = _ONE_TAIL[positions[0]] = pickle.dumps([positions[0]], 2)
        return _ONE + tail  # a concatenation of two non-empty bytes is a new object
    deltas = [positions[0], *(b - a for a, b in pairwise(positions))]
    return pack_uint(len(deltas)) + pickle.dumps(deltas, 2)


_ONE = pack_uint(1)
_ONE_TAIL: dict[int, bytes] = {}  # the pickle of a lone position, by position


class _Lengths:
    """Page lengths for the flush: the pages added here from memory, the rest (merged segments) from disk."""

    def __init__(self, known: dict[int, int | None], stored: Any) -> None:
        self.known, self.stored = known, stored

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> int | None:
        if fieldname == TEXT and docnum in self.known:
            return self.known[docnum]
        return self.stored.doc_field_length(docnum, fieldname, default)

    def close(self) -> None:
        self.stored.close()


class PageWriter(SegmentWriter):
    """A Whoosh segment writer with ``add_page(file, page, tokens)``, a fast ``add_document``.

    The ``text`` postings of the pages added here are kept per word (docnum, count, positions in one
    array of ints: ~13 bytes a posting) instead of as sorted and spilled tuples in Whoosh's pool,
    and written word by word at the flush. When the commit merges older segments, whose postings
    Whoosh puts into its pool, these postings join them there and Whoosh's own flush writes all.
    """

    def __init__(self, ix: Any, **kwargs: Any) -> None:
        super().__init__(ix, **kwargs)
        self._text_lengths: dict[int, int | None] = {}
        self._postings: dict[str, array] = {}
        self._fast = tuple(sorted(self.schema.names())) == FIELDS and _fast_text(self.schema[TEXT])

    def add_page(self, file: str, page: int, tokens: list[str]) -> None:
        """Add one page, as ``add_document(file=file, page=page, text=tokens)`` would."""
        if not self._fast:
            self.add_document(file=file, page=page, text=tokens)
            return
        self._check_state()
        docnum, schema, perdoc, pool = self.docnum, self.schema, self.perdocwriter, self.pool
        perdoc.start_doc(docnum)
        try:
            for name, value in (("file", file), ("page", page)):  # sorted field order, as add_document
                field = schema[name]
                length = 0
                if field.indexed:
                    for tbytes, freq, weight, vbytes in field.index(value):
                        if field.scorable:
                            length += freq
                        pool.add((name, tbytes, docnum, weight * 1.0, vbytes))  # times the field boost
                perdoc.add_field(name, field, value if field.stored else None, length)
                if field.column_type:
                    perdoc.add_column_value(name, field.column_type, field.to_column_value(value))
            perdoc.add_field(TEXT, schema[TEXT], None, len(tokens))
        except Exception:
            perdoc.cancel_doc()
            raise
        perdoc.finish_doc()
        positions: dict[str, list[int]] = {}
        for at, token in enumerate(tokens):
            found = positions.get(token)
            if found is None:
                positions[token] = [at]
            else:
                found.append(at)
        postings = self._postings
        for word, where in positions.items():
            row = postings.get(word)
            if row is None:
                row = postings[word] = array("I")
            row.append(docnum)
            row.append(len(where))
            row.extend(where)
        quantized = length_to_byte(len(tokens)) if tokens else 0
        self._text_lengths[docnum] = byte_to_length(quantized) if quantized else None
        self._added = True
        self.docnum += 1

    def _rows(self) -> Iterator[tuple[bytes, array]]:
        """Each word's utf-8 bytes and postings row, in byte order (a str's code point order is its
        UTF-8 byte order); the rows are dropped as they go."""
        for word in sorted(self._postings):
            yield word.encode("utf-8"), self._postings.pop(word)

    @staticmethod
    def _row_postings(row: array) -> Iterator[tuple[int, float, bytes]]:
        """A postings row as (docnum, weight, encoded positions)."""
        at, end = 0, len(row)
        while at < end:
            count = row[at + 1]
            yield row[at], float(count), _encode(row[at + 2:at + 2 + count])
            at += 2 + count

    def _flush_segment(self) -> None:
        # SegmentWriter._flush_segment, with the pages' lengths from memory and their text postings
        # written from self._postings
        self.perdocwriter.close()
        lengths = _Lengths(self._text_lengths, self.per_document_reader()) if self.codec.length_stats else None
        merged = TEXT in self.pool.fieldnames  # text postings of merged segments wait in the pool
        if merged:
            for btext, row in self._rows():
                for docnum, weight, vbytes in self._row_postings(row):
                    self.pool.add((TEXT, btext, docnum, weight, vbytes))
        self.fieldwriter.add_postings(self.schema, lengths, self.pool.iter_postings())
        if not merged and self._postings:
            self._write_text()
        self.fieldwriter.close()
        if lengths:
            lengths.close()

    def _write_text(self) -> None:
        """The ``text`` field's terms and postings as FieldWriter.add_postings writes them (it has
        written the fields before ``text`` already). With many words, on two or more CPUs in a
        single-threaded process, a forked helper writes the postings of the later words while this
        process writes the earlier ones, and they are joined here: the same bytes in about half the time."""
        writer = self.fieldwriter
        writer.start_field(TEXT, self.schema[TEXT])
        enabled = gc.isenabled()
        gc.disable()  # the flush makes millions of objects and no cycle: collections would only walk them
        try:
            words = sorted(self._postings)
            split = _split(words, self._postings) if _may_fork(len(words)) else len(words)
            helper = self._start_helper(words[split:]) if split < len(words) else None
            for word in words[:split]:
                writer.start_term(word.encode("utf-8"))
                self._add_postings(writer._postwriter, self._postings.pop(word))
                writer.finish_term()
            if helper is not None:
                self._join_helper(writer, helper, words[split:])
        finally:
            if enabled:
                gc.enable()
        writer.finish_field()

    def _add_postings(self, postings: Any, row: array) -> None:
        """One word's postings, a block at a time: each block's buffers and statistics set as
        W3PostingsWriter.add_posting leaves them after its postings."""
        limit, known = postings._blocklimit, self._text_lengths
        ids: list[Any] = []
        weights: list[Any] = []
        values: list[Any] = []
        for docnum, weight, vbytes in self._row_postings(row):
            if len(ids) >= limit:
                self._fill(postings, ids, weights, values, known)
                postings._write_block()
                postings._new_block()
                ids, weights, values = [], [], []
            ids.append(docnum)
            weights.append(weight)
            values.append(vbytes)
        self._fill(postings, ids, weights, values, known)

    def _start_helper(self, words: list[str]) -> tuple[int, Any, Any]:
        """Fork a process writing ``words``' postings into a file of their own, from offset 0, and their
        term infos (the offset apart) into another: (pid, postings file, term infos file)."""
        data, terms = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        pid = os.fork()
        if pid:
            return pid, data, terms
        code = 1
        try:
            out = StructFile(data)
            postings = self.codec.postings_writer(out)
            form = self.schema[TEXT].format
            rows = []
            for word in words:
                postings.start_postings(form, W3TermInfo())
                self._add_postings(postings, self._postings[word])
                info = postings.finish_postings()
                value = info.to_bytes()
                rows.append((value, None, None) if info.is_inlined() else
                            (value[:-_EXTENT], info._offset, info._length))
            out.flush()
            pickle.dump(rows, terms, protocol=pickle.HIGHEST_PROTOCOL)
            terms.flush()
            code = 0
        finally:
            os._exit(code)  # never back into the caller's code: this process is a copy of it

    def _join_helper(self, writer: Any, helper: tuple[int, Any, Any], words: list[str]) -> None:
        """Append the helper's postings and term infos (offsets moved past ours); if it failed, write
        its words here."""
        pid, data, terms = helper
        with data, terms:
            _, status = os.waitpid(pid, 0)
            if status != 0:
                for word in words:
                    writer.start_term(word.encode("utf-8"))
                    self._add_postings(writer._postwriter, self._postings.pop(word))
                    writer.finish_term()
                return
            self._postings.clear()
            base = writer._postfile.tell()
            data.seek(0)
            while block := data.read(1 << 20):
                writer._postfile.write(block)
            terms.seek(0)
            field, add = pack_ushort(writer._fieldid), writer._tindex.add
            for word, (value, offset, length) in zip(words, pickle.load(terms), strict=True):
                add(field + word.encode("utf-8"),
                    value if offset is None else value + pack_long(base + offset) + pack_int(length))

    @staticmethod
    def _fill(postings: Any, ids: list[int], weights: list[float], values: list[bytes],
              known: dict[int, int | None]) -> None:
        postings._ids = array("I", ids)
        postings._weights = array("f", weights)
        postings._values = values
        postings._maxweight = max(weights)  # every weight is >= 1.0, above the starting 0
        lengths = [n for n in map(known.__getitem__, ids) if n]
        postings._minlength = min(lengths) if lengths else None
        postings._maxlength = max(lengths) if lengths else 0


def _may_fork(words: int) -> bool:
    """True when a helper process may write half the postings: enough words to pay for the fork, two
    CPUs, and no other thread (a fork copies none of them, nor any lock they hold)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return words >= PARALLEL_MIN_WORDS and cpus >= 2 and hasattr(os, "fork") and threading.active_count() == 1


def _split(words: list[str], postings: dict[str, array]) -> int:
    """Where the helper's words begin: a little past half the work (a word costs about as much as
    ``WORD_COST`` ints of postings), since this process also joins the two."""
    costs = [WORD_COST + len(postings[w]) for w in words]
    target, done = sum(costs) * (1 - HELPER_SHARE), 0
    for at, cost in enumerate(costs):
        done += cost
        if done >= target:
            return at + 1
    return len(words)
