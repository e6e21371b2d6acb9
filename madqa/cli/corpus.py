"""Commands over a corpus: ``index``, ``search``, ``render``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from madqa.cli import common
from madqa.cli.base import command
from madqa.errors import CorpusError
from madqa.jsonl import dumps
from madqa.languages import LANGUAGES, language_named
from madqa.settings import Settings


def language_code(value: str) -> str:
    """``--language``'s value as a code; argparse's error (listing the supported ones) otherwise."""
    try:
        return language_named(value).code
    except CorpusError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@command("index")
def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.cluster import cluster_for
    from madqa.index import ingest

    retrievers = [n.strip() for n in args.retrievers.split(",") if n.strip()] if args.retrievers else None
    update, close = common.progress_bar("indexing")
    try:
        with cluster_for(args.cluster) as executor:
            report = ingest(args.dir, settings, common.registry(settings), ocr=args.ocr,
                            ocr_jsonl=args.ocr_jsonl, progress=update, executor=executor, retrievers=retrievers,
                            index_progress=common.index_progress(), page_progress=common.page_progress(),
                            language=args.language)
    finally:
        close()
    if args.json:
        print(dumps(report.to_dict(), indent=1))
    else:
        common.print_report(report)
    return 1 if report.failures else 0


@command("search")
def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.scope import search_as_written

    reg = common.registry(settings)
    corpus = common.open_corpus(args, settings, reg)
    options = common.parsed_options(args.set or [], "retriever").get("retriever", {})
    common.show_index_logs()
    retriever = reg.create("retriever", args.retriever, corpus, options)
    result = search_as_written(retriever, args.query, args.k, corpus.documents, common.scope_of(args, corpus))
    if args.json:
        print(dumps([h.to_dict() for h in result.hits], indent=1))
        if result.note:
            print(f"note: {result.note}", file=sys.stderr)
        return 0
    if result.note:
        print(f"note: {result.note}")
    for rank, hit in enumerate(result.hits, 1):
        print(f"{rank}. {hit.file} p.{hit.page}  score {hit.score:.2f}\n   {hit.snippet}")
    return 0


@command("render")
def cmd_render(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.render import render_highlighted, render_page

    corpus = common.open_corpus(args, settings, common.registry(settings))
    fmt = args.format or {".jpg": "jpeg", ".jpeg": "jpeg", ".webp": "webp"}.get(Path(args.output).suffix.lower(), "png")
    output = Path(args.output)
    if output.is_dir():
        raise CorpusError(f"-o {args.output} is a folder; give a file name, e.g. {output / 'page.png'}")
    if not args.highlight and not args.answer:
        image = render_page(corpus, args.file, args.page, settings, budget_px=args.image_budget, fmt=fmt)
        output.parent.mkdir(parents=True, exist_ok=True)  # render into a new folder as asked
        output.write_bytes(image.data)
        print(f"{args.output}: {image.width}x{image.height} {fmt}, {len(image.data):,} bytes")
        return 0
    image, highlight = render_highlighted(corpus, args.file, args.page, settings, args.highlight or (),
                                          args.answer or (), budget_px=args.image_budget, fmt=fmt)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_bytes(image.data)
    words = {"text": "the text layer", "ocr": "OCR word boxes", "none": "no word positions"}[highlight.source]
    print(f"{args.output}: {image.width}x{image.height} {fmt}, {len(image.data):,} bytes; "
          f"{len(highlight.boxes)} boxes from {words}")
    for text in highlight.missing:
        print(f"not found on {args.file} p.{args.page}: {text!r}", file=sys.stderr)
    return 1 if highlight.missing else 0


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("index", help="ingest every PDF under DIR into a searchable corpus")
    p.add_argument("dir")
    p.add_argument("--ocr", choices=("auto", "always", "never"), default=None,
                   help="auto (default): OCR pages whose text layer is empty or nearly so")
    p.add_argument("--ocr-jsonl", metavar="FILE", help="page text from a MADQA-format OCR dump")
    p.add_argument("--language", type=language_code, metavar="CODE",
                   help="the corpus's language: its stop words, stemmer and OCR language (default: MADQA_LANGUAGE, "
                        "else the language it has, else detected from its text); changing it rebuilds the "
                        f"indexes from the stored texts. Supported: {', '.join(LANGUAGES)}")
    p.add_argument("--retrievers", metavar="LIST", help="indexes to write, e.g. whoosh,dense (default: "
                   "MADQA_INDEX_RETRIEVERS, else the BM25 ones; hybrid = whoosh,dense)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--cluster", metavar="URL", help="read files on a cluster: local:N or tcp://HOST:8786 (Dask)")

    p = sub.add_parser("search", help="BM25 search over the pages of a corpus")
    p.add_argument("--corpus", required=True, metavar="DIR")
    p.add_argument("query")
    p.add_argument("-k", type=common.positive_int, default=5, help="how many pages (default 5)")
    p.add_argument("--retriever", default="whoosh")
    common.add_scope_arg(p)
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="a retriever option, e.g. analyzer=stemming")
    p.add_argument("--json", action="store_true", help="print hits as JSON")

    p = sub.add_parser("render", help="render a page as an image under a pixel budget")
    p.add_argument("--corpus", required=True, metavar="DIR")
    p.add_argument("file", help="path of the PDF relative to the corpus folder")
    p.add_argument("page", type=common.positive_int, help="1-based page number")
    p.add_argument("-o", "--output", required=True)
    common.add_image_budget_arg(p, " (default: MADQA_IMAGE_BUDGET, else 1.2M)")
    p.add_argument("--format", choices=("png", "jpeg", "webp"), default=None, help="default: from -o's suffix")
    p.add_argument("--highlight", action="append", metavar="TEXT",
                   help="box TEXT (a quote) where it is on the page; exit status 1 when it is not there")
    p.add_argument("--answer", action="append", metavar="TEXT", help="frame these answer words (inside the quote first)")
