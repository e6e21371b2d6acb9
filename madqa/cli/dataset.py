"""Dataset commands: ``dataset download`` fetches the gated Hugging Face MADQA dataset and its PDFs into
the folder ``run --dataset`` and ``app.py --corpus madqa=PATH`` read. Exit status: 0 everything in
place, 1 some PDFs failed (each listed with why), 2 nothing done (the Hub refused, bad input).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from madqa.cli.base import command
from madqa.settings import Settings
from madqa.text import plural

SPLIT_CHOICES = ("dev", "test", "train")


def _positive(kind: type, zero: bool = True) -> Any:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value < 0 or (value == 0 and not zero) or value != value:
            raise argparse.ArgumentTypeError(f"must be {'0 or more' if zero else 'more than 0'}: {text!r}")
        return value
    return parse


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("dataset", help="the Hugging Face MADQA dataset: download it (questions, document list, PDFs)")
    actions = p.add_subparsers(dest="dataset_action", required=True)
    d = actions.add_parser("download", help="fetch the questions from the Hub and the PDFs from their links; "
                                            "resumable, idempotent")
    d.add_argument("--split", choices=SPLIT_CHOICES, action="append",
                   help="only this split's questions (repeatable; default all three); the PDFs are the whole corpus")
    d.add_argument("--to", default="MADQA", metavar="PATH", help="the folder to fill (default ./MADQA)")
    d.add_argument("--no-pdfs", action="store_true", help="only the questions and the document list")
    d.add_argument("--workers", type=_positive(int, zero=False), default=4, metavar="N",
                   help="PDFs fetched at once (default 4; the host asks for restraint)")
    d.add_argument("--timeout", type=_positive(float, zero=False), default=60.0, metavar="SECONDS",
                   help="per request: connecting, and each wait for more of a body (default 60)")
    d.add_argument("--retries", type=_positive(int), default=4, metavar="N",
                   help="further attempts per PDF after a timeout, a cut body, 429 or 5xx (default 4)")
    d.add_argument("--retry-delay", type=_positive(float), default=2.0, metavar="SECONDS",
                   help="the first wait before a retry, doubled each time; a 429's Retry-After wins (default 2)")
    d.add_argument("--max-delay", type=_positive(float), default=120.0, metavar="SECONDS",
                   help="the longest wait between attempts, Retry-After included (default 120)")


def _say_questions(splits: list[str]) -> Any:
    def say(result: Any) -> None:
        new = len(result.new_question_files)
        print(f"questions: {plural(len(result.question_files), 'file')} for {', '.join(splits)} in "
              f"{result.root / 'data'} ({new} fetched, {len(result.question_files) - new} already there)",
              file=sys.stderr, flush=True)
    return say


@command("dataset")
def dataset(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.evaluation.download import download
    from madqa.evaluation.fetch import FetchOptions

    options = FetchOptions(timeout=args.timeout, retries=args.retries, retry_delay=args.retry_delay,
                           max_delay=args.max_delay, workers=args.workers)
    splits = list(dict.fromkeys(args.split or SPLIT_CHOICES))
    result = download(args.to, splits, options, pdfs=not args.no_pdfs, questions_done=_say_questions(splits))
    if args.no_pdfs:
        return 0
    got, have, failed = result.count("downloaded"), result.count("present"), result.failed
    if not got and not failed:
        print(f"nothing to download: all {plural(have, 'PDF')} already in {result.root / 'pdfs'} "
              "(checksums in manifest.json)", file=sys.stderr)
    else:
        print(f"PDFs: {got} downloaded, {have} already there, {len(failed)} failed; "
              f"checksums in {result.root / 'pdfs' / 'manifest.json'}", file=sys.stderr)
    for f in failed:
        print(f"  failed: {f.document}: {f.reason}", file=sys.stderr)
    if failed:
        print("run the same command again to retry the failed ones (finished PDFs are kept; partial ones resume)",
              file=sys.stderr)
        return 1
    print(f"ready: madqa run --dataset {result.root} --split {splits[0]}", file=sys.stderr)
    return 0
