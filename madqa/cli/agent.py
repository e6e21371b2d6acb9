"""Commands that run the agent: ``ask`` (one question) and ``run`` (a question set)."""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from madqa.cli import common, research
from madqa.cli.base import command
from madqa.jsonl import dumps
from madqa.settings import Settings, config_keys
from madqa.text import plural


@command("ask")
def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.budget import Budget
    from madqa.trace import Trace

    config, agent = common.agent_for(args, settings)
    scope = common.scope_of(args, agent.corpus)
    trace = Trace(args.question, config, args.id)
    if not args.json:
        print(f"config {config.name}: {config.backend}/{config.model}, {config.retriever}, "
              f"strategy {config.query_strategy}, top_k {config.top_k}, max {config.max_steps} steps")
        if scope:
            print(f"searching only: {', '.join(scope)}")
    # the command's own budget (no limit: `--set budget.max_calls=N` limits the question), through the
    # same mechanism the web app uses for a visitor's day on the server's keys (madqa.budget)
    for step in trace.follow(agent.run(args.question, budget=Budget(name="command"), scope=scope)):
        if not args.json:
            print(common.describe_step(step), flush=True)
    row = trace.row() | ({"scope": list(scope)} if scope else {})
    if args.json:
        print(dumps(row))
    return 1 if failed(row) else 0


def failed(row: dict[str, Any]) -> bool:
    """Whether a row is a failure rather than an answer or a refusal: it carries an ``error`` (the model
    or a plugin failed, or no answer could be read), or, in rows of older versions, a no-answer flag."""
    from madqa.agent import NO_ANSWER_FLAGS

    return bool(row.get("error")) or any(str(f).startswith(NO_ANSWER_FLAGS) for f in row.get("flags") or [])


def _config_outputs(args: argparse.Namespace, settings: Settings) -> list[tuple[Any, Path]]:
    """(config, output path) per --config; several configs write PRED.<config>.jsonl each."""
    names = args.config or [None]
    out = Path(args.output)
    pairs = []
    for name in names:
        args_one = argparse.Namespace(**{**vars(args), "config": name})
        config = common.pipeline_config(args_one, settings)
        if getattr(args, "dataset", None) and "answer_always_present" not in config_keys(name or settings.config):
            config = replace(config, answer_always_present=True)  # the MADQA benchmark's closed world
        tag = re.sub(r"[^\w.=,:+-]+", "_", config.name).replace(":", "-")  # a model's "/" is no folder
        path = out if len(names) == 1 else out.with_name(f"{out.stem}.{tag}{out.suffix or '.jsonl'}")
        pairs.append((config, path))
    return pairs


@command("run")
def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.cluster import cluster_for

    if args.oracle and args.cluster:  # said before a cluster is started for nothing
        print("madqa: --oracle does not run on a cluster yet: run the oracle condition without --cluster",
              file=sys.stderr)
        return 2
    with cluster_for(args.cluster) as executor:  # started first: a bad URL fails before any work
        return _run(args, settings, executor)


def _run(args: argparse.Namespace, settings: Settings, executor: Any) -> int:
    from tqdm import tqdm

    common.show_index_logs()
    from madqa.evaluation.runner import run_batch, score_row

    for _, path in _config_outputs(args, settings):  # nothing already stored is overwritten
        if args.questions and path.resolve() == Path(args.questions).resolve():
            print(f"madqa: -o {path} is the questions file; write the predictions elsewhere", file=sys.stderr)
            return 2
        if path.exists() and path.stat().st_size and not args.resume:
            print(f"madqa: {path} already holds predictions; add --resume to continue it, or give another -o",
                  file=sys.stderr)
            return 2
    inputs = research.run_inputs(args)
    if isinstance(inputs, str):
        print(f"madqa: {inputs}", file=sys.stderr)
        return 2
    questions, problems, source, args.corpus = inputs
    for problem in problems:
        print(f"warning: {source}: {problem}", file=sys.stderr)
    if not questions:
        print(f"madqa: no usable questions in {source}", file=sys.stderr)
        return 2
    from madqa.budget import Budget

    common.fast_exit_for(settings, *(config for config, _ in _config_outputs(args, settings)))
    reg = common.registry(settings)
    corpus = common.open_corpus(args, settings, reg, check=True)  # damage found before any row is written
    unknown = scope_problems(questions, corpus)
    if unknown:  # a scope naming no document: said before any row is written
        for problem in unknown:
            print(f"madqa: {source}: {problem}", file=sys.stderr)
        return 2
    failures = 0
    for config, path in _config_outputs(args, settings):
        total = min(len(questions), args.limit) if args.limit else len(questions)
        tally = {"correct": 0, "failed": 0, "done": 0}
        bar = tqdm(total=total, desc=config.name, unit="q", file=sys.stderr, disable=not sys.stderr.isatty())

        def on_row(row: dict[str, Any], question: dict[str, Any], bar: Any = bar, tally: dict = tally) -> None:
            tally["done"] += 1
            tally["failed"] += failed(row)
            tally["correct"] += not failed(row) and bool(score_row(row, question, unanswerable=True))
            scored = tally["done"] - tally["failed"]  # a failed row is no score (run_summary)
            shown = f"accuracy {tally['correct'] / scored:.3f}" if scored else "none scored"
            bar.set_postfix_str(f"{shown}, {tally['failed']} failed", refresh=False)
            bar.update(1)

        rows = run_batch(questions, corpus, config, reg, settings, out_path=path, workers=args.workers,
                         resume=args.resume, limit=args.limit, on_row=on_row,
                         backend_options=common.backend_options(args), executor=executor, oracle=args.oracle,
                         budget=Budget(name="run"))  # no limit: one mechanism with the web app's (madqa.budget)
        bar.update(total - bar.n)
        bar.close()
        print(f"{config.name}: {len(rows)} rows in {path}; {run_summary(rows, questions)}")
        failures += sum(1 for r in rows if failed(r))
    if failures:
        print(f"madqa: {plural(failures, 'question')} failed (see each row's error); run again with --resume to retry "
              "them", file=sys.stderr)
    return 1 if failures else 0


def scope_problems(questions: list[dict[str, Any]], corpus: Any) -> list[str]:
    """Each question whose ``scope`` names a file the corpus does not hold, with why."""
    from madqa.errors import ScopeError
    from madqa.scope import resolve_files

    problems = []
    for question in questions:
        try:
            resolve_files(question.get("scope") or (), corpus.documents)
        except ScopeError as exc:
            problems.append(f"question {question.get('id')!r}: scope: {exc}")
    return problems


def run_summary(rows: list[dict[str, Any]], questions: list[dict[str, Any]]) -> str:
    """Accuracy on the rows that were scored (a failed row holds no answer to score: counted apart, never as
    a wrong answer), how many failed and were refused, and, when some failed, the accuracy ``madqa eval`` and
    the official harness give, which count a failed row as wrong."""
    from madqa.evaluation.runner import question_key, score_row

    by_key = {question_key(q): q for q in questions}
    failed_rows = sum(1 for r in rows if failed(r))
    scored = [r for r in rows if not failed(r)]
    correct = sum(bool(score_row(r, by_key.get(question_key(r), {}), unanswerable=True)) for r in scored)
    refused = sum(1 for r in scored if r.get("refusal"))
    accuracy = f"accuracy {correct / len(scored):.3f} on {len(scored)} scored" if scored else "no row scored"
    summary = f"{accuracy}, {failed_rows} failed, {refused} refused"
    if failed_rows and scored:
        summary += f" (madqa eval counts the failed as wrong: {correct / len(rows):.3f} on {len(rows)})"
    return summary


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("ask", help="answer a question with the agent, printing each step")
    p.add_argument("--corpus", required=True, metavar="DIR")
    p.add_argument("question")
    p.add_argument("--id", help="question id to put in the prediction row")
    common.add_scope_arg(p)
    common.add_config_args(p)
    p.add_argument("--json", action="store_true", help="print only the prediction row")

    p = sub.add_parser("run", help="run a question set through one or more configs")
    p.add_argument("--corpus", metavar="DIR", help="the PDFs (or give --dataset)")
    p.add_argument("--questions", metavar="FILE", help="MADQA questions, JSONL or Parquet (or give --dataset)")
    p.add_argument("-o", "--output", required=True, metavar="PRED.jsonl")
    common.add_config_args(p, several=True)
    p.add_argument("--workers", type=common.positive_int, default=1, help="questions answered at once (API-bound work)")
    p.add_argument("--resume", action="store_true", help="keep answered rows, retry error rows, run the rest")
    p.add_argument("--limit", type=common.positive_int, help="only the first N questions")
    p.add_argument("--cluster", metavar="URL", help="answer on a cluster: local:N or tcp://HOST:8786 (Dask)")
    research.add_run_arguments(p)
