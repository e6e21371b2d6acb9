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
    options = parsed_options(args.set or [], "retriever").get("retriever", {})
    retriever = reg.create("retriever", args.retriever, corpus, options)
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
                                 max_steps=args.max_steps, image_budget_px=args.budget,
                                 options=parsed_options(args.set or []))


def parsed_options(texts: list[str], part: str | None = None) -> dict[str, dict[str, Any]]:
    """``--set PART.KEY=VALUE`` flags merged into option tables (``part`` prefixes bare keys)."""
    from madqa.settings import parse_options

    return parse_options(text if not part or text.startswith(part + ".") else f"{part}.{text}" for text in texts)


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


def _config_outputs(args: argparse.Namespace, settings: Settings) -> list[tuple[Any, Path]]:
    """(config, output path) per --config; several configs write PRED.<config>.jsonl each."""
    names = args.config or [None]
    out = Path(args.output)
    pairs = []
    for name in names:
        args_one = argparse.Namespace(**{**vars(args), "config": name})
        config = pipeline_config(args_one, settings)
        path = out if len(names) == 1 else out.with_name(f"{out.stem}.{config.name}{out.suffix or '.jsonl'}")
        pairs.append((config, path))
    return pairs


@command("run")
def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    from tqdm import tqdm

    from madqa.evaluation.questions import load_questions
    from madqa.evaluation.runner import run_batch, score_row

    questions, problems = load_questions(args.questions)
    for problem in problems:
        print(f"warning: {args.questions}: {problem}", file=sys.stderr)
    if not questions:
        print(f"madqa: no usable questions in {args.questions}", file=sys.stderr)
        return 2
    reg = registry(settings)
    corpus = open_corpus(args, settings, reg)
    failed = 0
    for config, path in _config_outputs(args, settings):
        total = min(len(questions), args.limit) if args.limit else len(questions)
        scores: list[bool] = []
        bar = tqdm(total=total, desc=config.name, unit="q", file=sys.stderr, disable=not sys.stderr.isatty())

        def on_row(row: dict[str, Any], question: dict[str, Any], bar: Any = bar, scores: list = scores) -> None:
            correct = score_row(row, question)
            if correct is not None:
                scores.append(correct)
                bar.set_postfix_str(f"accuracy {sum(scores) / len(scores):.3f}", refresh=False)
            bar.update(1)

        rows = run_batch(questions, corpus, config, reg, settings, out_path=path, workers=args.workers,
                         resume=args.resume, limit=args.limit, on_row=on_row,
                         backend_options=backend_options(args))
        bar.update(total - bar.n)
        bar.close()
        errors = sum(1 for r in rows if r.get("error"))
        failed += errors
        accuracy = f", accuracy {sum(scores) / len(scores):.3f} on {len(scores)} run now" if scores else ""
        print(f"{config.name}: {len(rows)} rows in {path} ({errors} with errors{accuracy})")
    return 1 if failed else 0


@command("eval")
def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.evaluation.questions import load_questions
    from madqa.evaluation.report import PredictionFileError, evaluate, format_table, load_predictions

    gold, problems = load_questions(args.gold)
    for problem in problems:
        print(f"warning: {args.gold}: {problem}", file=sys.stderr)
    results: dict[str, Any] = {}
    for pred_path in args.predictions:
        try:
            rows, row_problems = load_predictions(pred_path)
        except PredictionFileError as exc:
            print(f"madqa: {exc}", file=sys.stderr)
            return 2
        for problem in row_problems:
            print(f"warning: {pred_path}: {problem}", file=sys.stderr)
        name = Path(pred_path).stem
        while name in results:
            name += "'"
        results[name] = evaluate(rows, gold, by=args.by)
    if args.json:
        print(json.dumps(results, indent=1, ensure_ascii=False))
        return 0
    print(format_table(results))
    if len(results) == 1:
        only = next(iter(results.values()))
        groups = {f"{k}": v for k, v in only["by_hop_type"].items()}
        if args.by:
            groups.update({f"{k}": v for k, v in only[f"by_{args.by}"].items()})
        print("\n" + format_table(groups))
    return 0


def add_config_args(p: argparse.ArgumentParser, several: bool = False) -> None:
    if several:
        p.add_argument("--config", action="append", help="named config or .toml file; repeat to run several")
    else:
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
    p.add_argument("--set", action="append", metavar="PART.KEY=VALUE",
                   help="an option of the retriever, reranker or query_strategy, e.g. retriever.analyzer=stemming")


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
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="a retriever option, e.g. analyzer=stemming")
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

    p = sub.add_parser("run", help="run a question set through one or more configs")
    p.add_argument("--corpus", required=True, metavar="DIR")
    p.add_argument("--questions", required=True, metavar="FILE", help="MADQA questions, JSONL or Parquet")
    p.add_argument("-o", "--output", required=True, metavar="PRED.jsonl")
    add_config_args(p, several=True)
    p.add_argument("--workers", type=int, default=1, help="questions answered at once (API-bound work)")
    p.add_argument("--resume", action="store_true", help="keep answered rows, retry error rows, run the rest")
    p.add_argument("--limit", type=int, help="only the first N questions")

    p = sub.add_parser("eval", help="score prediction files against gold (official MADQA metrics + ours)")
    p.add_argument("predictions", nargs="+", metavar="PRED.jsonl")
    p.add_argument("--gold", required=True, metavar="FILE")
    p.add_argument("--json", action="store_true", help="print pure JSON")
    p.add_argument("--by", choices=("category", "domain"), help="also break down by this field")

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
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
