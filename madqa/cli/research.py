"""Research commands: ``diff`` and ``export``, and what ``run``/``eval`` gain from this group
(``--oracle``, ``--dataset``/``--split``, ``--embedding-drift``; ``agent.py`` and ``scoring.py``
call the helpers below). Exit status: 0 done, 1 refused, 2 nothing done (bad input).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from madqa.cli import common
from madqa.cli.base import command
from madqa.settings import Settings
from madqa.text import plural


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """``run``'s research flags: the oracle and a local copy of the Hugging Face dataset."""
    p.add_argument("--oracle", action="store_true",
                   help="the first search of each question returns its gold evidence pages (the oracle condition)")
    p.add_argument("--dataset", metavar="PATH",
                   help="a local copy of the Hugging Face MADQA dataset (Parquet questions + PDFs), "
                        "instead of --corpus and --questions")
    p.add_argument("--split", choices=("dev", "test", "train"), default="dev", help="with --dataset (default dev)")


def add_eval_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--oracle", metavar="ORACLE.jsonl",
                   help="the same questions run with --oracle: adds the oracle accuracy and the gap split")
    p.add_argument("--embedding-drift", action="store_true",
                   help="also the query drift with the optional embedding model (cosine distance)")


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("diff", help="two prediction files question by question: who was right, where they diverged")
    p.add_argument("a", metavar="A.jsonl")
    p.add_argument("b", metavar="B.jsonl")
    p.add_argument("--gold", required=True, metavar="FILE")
    p.add_argument("--only", choices=("A only", "B only", "both", "neither"), help="show only these questions (A: the first file, B: the second)")
    p.add_argument("--summary", action="store_true", help="only the summary")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("export", help="write a prediction file for the MADQA leaderboard, checked first")
    p.add_argument("predictions", metavar="PRED.jsonl")
    p.add_argument("--leaderboard", action="store_true", required=True,
                   help="the official harness's fields (the only export format so far)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl")
    p.add_argument("--corpus", metavar="DIR", help="check every cited file and page against this corpus")
    p.add_argument("--gold", metavar="FILE", help="check the questions against this set and print the official figures")
    p.add_argument("--force", action="store_true", help="overwrite OUT.jsonl if it exists")


def run_inputs(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[str], str, str] | str:
    """(questions, problems, where they came from, corpus folder) for ``run``, or why they cannot be had."""
    from madqa.evaluation.questions import load_questions

    if args.dataset:
        if args.corpus or args.questions:
            return "--dataset brings its own questions and PDFs: leave out --corpus and --questions"
        from madqa.evaluation.dataset import open_dataset

        data = open_dataset(args.dataset, args.split)
        if data.missing_documents:
            print(f"warning: {len(data.missing_documents)} documents of {args.dataset} have no PDF in "
                  f"{data.docs_dir}, e.g. {data.missing_documents[0]}", file=sys.stderr)
        label = f"{args.dataset} ({args.split}: {', '.join(f.name for f in data.question_files)})"
        return data.questions, data.problems, label, str(data.docs_dir)
    if not args.corpus or not args.questions:
        return "give --corpus DIR and --questions FILE, or --dataset PATH"
    questions, problems = load_questions(args.questions, unique_ids=True)
    return questions, problems, args.questions, args.corpus


def _load(path: str) -> tuple[list[dict[str, Any]], list[str]] | str:
    from madqa.evaluation.report import PredictionFileError, load_predictions

    try:
        return load_predictions(path)
    except PredictionFileError as exc:
        return str(exc)


def eval_extras(args: argparse.Namespace, settings: Settings, gold: list[dict[str, Any]],
                rows_by_name: dict[str, list[dict[str, Any]]], results: dict[str, Any]) -> dict[str, Any] | str:
    """The oracle gap per run (and the oracle run's own scores, and embedding drift when asked)."""
    from madqa.evaluation.report import evaluate

    extras: dict[str, Any] = {}
    if args.embedding_drift:
        from madqa.evaluation.drift import add_embedding_drift, embedding_drift, registry_embed

        embed, representation = registry_embed(common.registry(settings))
        for name, rows in rows_by_name.items():
            add_embedding_drift(results[name], embedding_drift(rows, gold, embed, representation))
    if args.oracle:
        from madqa.evaluation.oracle import oracle_gap

        loaded = _load(args.oracle)
        if isinstance(loaded, str):
            return loaded
        oracle_rows, problems = loaded
        for problem in problems:
            print(f"warning: {args.oracle}: {problem}", file=sys.stderr)
        results[f"{Path(args.oracle).stem} (oracle)"] = evaluate(oracle_rows, gold)
        extras["oracle_gap"] = {name: oracle_gap(rows, oracle_rows, gold) for name, rows in rows_by_name.items()}
    return extras


def print_eval_extras(extras: dict[str, Any], results: dict[str, Any]) -> None:
    from madqa.evaluation.oracle import format_gap

    for name, gap in extras.get("oracle_gap", {}).items():
        print(f"\n{name}: " + format_gap(gap))
    notes = {o["overall"].get("query_drift_representation") for o in results.values()}
    embedded = {o["overall"].get("query_drift_embedding_representation") for o in results.values()} - {None}
    print("\nquery_drift: " + "; ".join(sorted(n for n in notes if n)))
    if embedded:
        print("query_drift_embedding: " + "; ".join(sorted(embedded)))


@command("diff")
def cmd_diff(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.evaluation.diff import diff_runs, format_diff, format_summary, run_name, run_names
    from madqa.evaluation.questions import load_questions

    gold, problems = load_questions(args.gold)
    for problem in problems:
        print(f"warning: {args.gold}: {problem}", file=sys.stderr)
    sides = []
    for path in (args.a, args.b):
        loaded = _load(path)
        if isinstance(loaded, str):
            print(f"madqa: {loaded}", file=sys.stderr)
            return 2
        for problem in loaded[1]:
            print(f"warning: {path}: {problem}", file=sys.stderr)
        sides.append(loaded[0])
    result = diff_runs(sides[0], sides[1], gold)
    if args.json:
        print(json.dumps(result, indent=1, ensure_ascii=False))
        return 0
    names = run_names((run_name(Path(args.a).name, sides[0]), run_name(Path(args.b).name, sides[1])))
    print(format_summary(result["summary"], names) if args.summary
          else format_diff(result, names, only=args.only))
    return 0


@command("export")
def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.evaluation.export import check_rows, format_official, leaderboard_row
    from madqa.evaluation.questions import read_jsonl
    from madqa.evaluation.report import PredictionFileError, evaluate

    out = Path(args.output)
    if out.exists() and not args.force:
        print(f"madqa: {out} exists; pass --force to overwrite it", file=sys.stderr)
        return 2
    try:
        located, unreadable = read_jsonl(args.predictions, PredictionFileError)
    except PredictionFileError as exc:
        print(f"madqa: {exc}", file=sys.stderr)
        return 2
    gold = None
    if args.gold:
        from madqa.evaluation.questions import load_questions

        gold, gold_problems = load_questions(args.gold)
        for problem in gold_problems:
            print(f"warning: {args.gold}: {problem}", file=sys.stderr)
    corpus = None
    if args.corpus:
        corpus = common.open_corpus(args, settings, common.registry(settings))
    problems = sorted(unreadable + check_rows(located, gold, corpus), key=_line_number)
    if not located and not problems:
        problems = ["the file holds no prediction rows"]
    if problems:
        for problem in problems:
            print(f"{args.predictions}: {problem}", file=sys.stderr)
        print(f"madqa: refused: {plural(len(problems), 'problem')}; nothing written to {out}", file=sys.stderr)
        return 1
    rows = [leaderboard_row(row) for _, row in located]
    tmp = out.with_name(out.name + ".tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    tmp.replace(out)
    print(f"wrote {len(rows)} rows to {out} (fields: id, question, answer, citations, search_history, iterations)")
    if gold is not None:
        missing = len(gold) - len({r["question"].strip() for r in rows} & {g["question"].strip() for g in gold})
        if missing > 0:
            print(f"note: {missing} questions of {args.gold} have no row in the export")
        print("\n" + format_official(out.stem, evaluate(rows, gold)))
    return 0


def _line_number(problem: str) -> int:
    head = problem.split(":", 1)[0].split()
    return int(head[1]) if len(head) == 2 and head[1].isdigit() else 0
