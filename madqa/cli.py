"""``python -m madqa ...``: index, search, render, plugins, configs, ask, run, eval.

Core errors become a message on stderr and an exit status: 0 done, 1 done with some failures
(e.g. files that could not be indexed), 2 nothing done (bad input or settings).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from madqa.errors import MadqaError
from madqa.settings import Settings

COMMANDS: dict[str, Callable[[argparse.Namespace, Settings], int]] = {}


def command(name: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    def wrap(fn: Callable[..., int]) -> Callable[..., int]:
        COMMANDS[name] = fn
        return fn
    return wrap


def registry(settings: Settings) -> Any:
    from madqa.plugins import collect, get_plugin_manager

    return collect(get_plugin_manager(settings.plugins_dir))


def _progress_bar(desc: str) -> tuple[Callable[[str, int, int], None], Callable[[], None]]:
    from tqdm import tqdm

    bar: list[Any] = []

    def update(item: str, done: int, total: int) -> None:
        if not bar:
            bar.append(tqdm(total=total, desc=desc, unit="file", file=sys.stderr, leave=False,
                            disable=total < 3 or not sys.stderr.isatty()))
        bar[0].set_postfix_str(item[-40:], refresh=False)
        bar[0].update(done - bar[0].n)

    def close() -> None:
        if bar:
            bar[0].close()

    return update, close


def print_report(report: Any, out: Any = sys.stdout) -> None:
    print(f"indexed {report.files} files, {report.pages} pages in {report.elapsed_s:.1f}s "
          f"({report.added} added, {report.updated} updated, {report.unchanged} unchanged, "
          f"{report.removed} removed)", file=out)
    print(f"pages OCR'd: {report.ocr_pages}, imported OCR: {report.imported_pages}, "
          f"with no text: {report.empty_pages}, failures: {len(report.failures)}", file=out)
    for file, message in report.warnings:
        print(f"warning: {file + ': ' if file else ''}{message}", file=sys.stderr)
    for file, reason in report.failures:
        print(f"failed: {file}: {reason}", file=sys.stderr)


@command("index")
def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.index import ingest

    update, close = _progress_bar("indexing")
    try:
        report = ingest(args.dir, settings, registry(settings), ocr=args.ocr, ocr_jsonl=args.ocr_jsonl,
                        progress=update)
    finally:
        close()
    if args.json:
        print(json.dumps(report.to_dict(), indent=1, ensure_ascii=False))
    else:
        print_report(report)
    return 1 if report.failures else 0


def open_corpus(args: argparse.Namespace, settings: Settings, reg: Any) -> Any:
    """The corpus named by --corpus, indexed first (with a summary on stderr) if it never was."""
    from madqa.index import open_or_build

    corpus, report = open_or_build(args.corpus, settings, reg)
    if report is not None:
        print_report(report, out=sys.stderr)
    return corpus


@command("search")
def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    reg = registry(settings)
    corpus = open_corpus(args, settings, reg)
    retriever = reg.create("retriever", args.retriever, corpus, {})
    result = retriever.search(args.query, args.k)
    if args.json:
        print(json.dumps([h.to_dict() for h in result.hits], indent=1, ensure_ascii=False))
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
    from madqa.render import render_page

    corpus = open_corpus(args, settings, registry(settings))
    fmt = args.format or {".jpg": "jpeg", ".jpeg": "jpeg", ".webp": "webp"}.get(Path(args.output).suffix.lower(), "png")
    image = render_page(corpus, args.file, args.page, settings, budget_px=args.budget, fmt=fmt)
    Path(args.output).write_bytes(image.data)
    print(f"{args.output}: {image.width}x{image.height} {fmt}, {len(image.data):,} bytes")
    return 0


@command("plugins")
def cmd_plugins(args: argparse.Namespace, settings: Settings) -> int:
    components = registry(settings).list()
    if args.json:
        print(json.dumps([c.to_dict() for c in components], indent=1))
        return 0
    for c in components:
        state = f"  [unavailable: {c.unavailable}]" if c.unavailable else ""
        print(f"{c.kind:15} {c.name:14} {c.plugin:28} {c.description}{state}")
    return 0


@command("configs")
def cmd_configs(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.settings import list_configs

    configs = list_configs()
    if args.json:
        print(json.dumps({n: c.to_dict() for n, c in configs.items()}, indent=1))
        return 0
    for name, c in configs.items():
        print(f"{name:18} {c.backend}/{c.model} · {c.retriever} · rerank {c.reranker} · "
              f"{c.query_strategy} · top_k {c.top_k} · {c.max_steps} steps\n{'':18} {c.description}")
    return 0


def pipeline_config(args: argparse.Namespace, settings: Settings) -> Any:
    """The named config (--config, else MADQA_CONFIG) with any command-line overrides applied."""
    from madqa.settings import load_config

    config = load_config(args.config or settings.config)
    return config.with_overrides(backend=args.backend, model=args.model, retriever=args.retriever,
                                 reranker=args.reranker, query_strategy=args.strategy, top_k=args.top_k,
                                 max_steps=args.max_steps, image_budget_px=args.budget)


def backend_options(args: argparse.Namespace) -> dict[str, Any]:
    return {"api_base": args.api_base} if args.api_base else {}


def describe_step(step: Any) -> str:
    """One step as a line or two of plain text (the CLI's view of the stream)."""
    kind = step.type
    if kind == "search":
        rewritten = f" -> {step.executed_query!r}" if step.executed_query != step.query else ""
        pages = ", ".join(f"{r.file} p.{r.page}" for r in step.new_pages) or "no new pages"
        extra = "".join(f"\n      note: {n}" for n in (step.strategy_note, step.retriever_note, step.error) if n)
        return f"[{step.iteration}] search {step.query!r}{rewritten}: {len(step.hits)} hits; shown: {pages}{extra}"
    if kind == "model":
        text = (step.text or "").strip().replace("\n", " ")
        return f"[{step.iteration}] model{' (forced to answer)' if step.forced_answer else ''}: {text[:200]}"
    if kind == "error":
        return f"[{step.iteration}] error in {step.where}: {step.message}"
    cites = ", ".join(f"{c.file} p.{c.page}" for c in step.citations) or "none"
    answer = " | ".join(step.answer) if step.answer else "(no answer: refusal)"
    flags = "".join(f"\n    flag: {f}" for f in step.flags)
    return f"ANSWER: {answer}\n  citations: {cites}{flags}"


@command("ask")
def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.agent import Agent
    from madqa.trace import Trace

    reg = registry(settings)
    config = pipeline_config(args, settings)
    corpus = open_corpus(args, settings, reg)
    agent = Agent(corpus, config, reg, settings, backend_options(args))
    trace = Trace(args.question, config, args.id)
    if not args.json:
        print(f"config {config.name}: {config.backend}/{config.model}, {config.retriever}, "
              f"strategy {config.query_strategy}, top_k {config.top_k}, max {config.max_steps} steps")
    for step in trace.follow(agent.run(args.question)):
        if not args.json:
            print(describe_step(step), flush=True)
    if args.json:
        print(json.dumps(trace.row(), ensure_ascii=False))
    return 0


def add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="named config (see `madqa configs`) or a .toml file")
    p.add_argument("--backend", help="backend name (offline, litellm, scripted, ...)")
    p.add_argument("--model", help="model, e.g. openai/gpt-4.1-mini, anthropic/claude-sonnet-4-5")
    p.add_argument("--api-base", help="base URL of an OpenAI-compatible server (vLLM, llama.cpp, ...)")
    p.add_argument("--retriever")
    p.add_argument("--reranker")
    p.add_argument("--strategy", help="query strategy (passthrough, drift, ...)")
    p.add_argument("--top-k", type=int)
    p.add_argument("--max-steps", type=int)
    p.add_argument("--budget", type=int, help="image budget in pixels")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="madqa", description="Agentic question answering over PDF collections.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="ingest every PDF under DIR into a searchable corpus")
    p.add_argument("dir")
    p.add_argument("--ocr", choices=("auto", "always", "never"), default=None,
                   help="auto (default): OCR pages whose text layer is empty or nearly so")
    p.add_argument("--ocr-jsonl", metavar="FILE", help="page text from a MADQA-format OCR dump")
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    p = sub.add_parser("search", help="BM25 search over the pages of a corpus")
    p.add_argument("--corpus", required=True, metavar="DIR")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=5, help="how many pages (default 5)")
    p.add_argument("--retriever", default="whoosh")
    p.add_argument("--json", action="store_true", help="print hits as JSON")

    p = sub.add_parser("render", help="render a page as an image under a pixel budget")
    p.add_argument("--corpus", required=True, metavar="DIR")
    p.add_argument("file", help="path of the PDF relative to the corpus folder")
    p.add_argument("page", type=int, help="1-based page number")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--budget", type=int, default=None, help="most pixels (default MADQA_IMAGE_BUDGET, 1.2M)")
    p.add_argument("--format", choices=("png", "jpeg", "webp"), default=None, help="default: from -o's suffix")

    p = sub.add_parser("ask", help="answer a question with the agent, printing each step")
    p.add_argument("--corpus", required=True, metavar="DIR")
    p.add_argument("question")
    p.add_argument("--id", help="question id to put in the prediction row")
    add_config_args(p)
    p.add_argument("--json", action="store_true", help="print only the prediction row")

    for name, help_text in (("plugins", "list registered components"), ("configs", "list named configs")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--json", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
        return COMMANDS[args.command](args, settings)
    except MadqaError as exc:
        print(f"madqa: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("madqa: interrupted", file=sys.stderr)
        return 130
