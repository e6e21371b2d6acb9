"""``eval``: score prediction files with the official MADQA metrics and ours."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from madqa.cli import research
from madqa.cli.base import command
from madqa.jsonl import dumps
from madqa.settings import Settings


@command("eval")
def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from madqa.evaluation.glossary import legend
    from madqa.evaluation.questions import load_questions
    from madqa.evaluation.report import TABLE_ROWS, PredictionFileError, evaluate, format_table, load_predictions

    gold, problems = load_questions(args.gold)
    for problem in problems:
        print(f"warning: {args.gold}: {problem}", file=sys.stderr)
    results: dict[str, Any] = {}
    rows_by_name: dict[str, list[dict[str, Any]]] = {}
    corpus = None
    if args.corpus:  # rows written before answers were checked get their check here
        from madqa.cli import common

        corpus = common.open_corpus(args, settings, common.registry(settings))
    for pred_path in args.predictions:
        try:
            rows, row_problems = load_predictions(pred_path)
        except PredictionFileError as exc:
            print(f"madqa: {exc}", file=sys.stderr)
            return 2
        for problem in row_problems:
            print(f"warning: {pred_path}: {problem}", file=sys.stderr)
        if corpus is not None:
            from madqa.evaluation.answer_checks import checked_row

            rows = [checked_row(r, corpus) for r in rows]
        name = Path(pred_path).stem
        while name in results:
            name += "'"
        results[name] = evaluate(rows, gold, by=args.by)
        rows_by_name[name] = rows
    extras = research.eval_extras(args, settings, gold, rows_by_name, results)
    if isinstance(extras, str):
        print(f"madqa: {extras}", file=sys.stderr)
        return 2
    if args.semantic:
        refused = _semantic(args, settings, gold, rows_by_name, results)
        if refused is not None:
            print(f"madqa: {refused}", file=sys.stderr)
            return 2
    if args.json:
        print(dumps({**results, **extras}, indent=1))
        return 0
    print(format_table(results))
    if args.semantic:
        from madqa.evaluation.semantic import format_semantic

        for name, result in results.items():
            if "semantic" in result:
                print("\n" + format_semantic(name, result["semantic"]))
    research.print_eval_extras(extras, results)
    if len(results) == 1:
        only = next(iter(results.values()))
        groups = {f"{k}": v for k, v in only["by_hop_type"].items()}
        if args.by:
            groups.update({f"{k}": v for k, v in only[f"by_{args.by}"].items()})
        print("\n" + format_table(groups))
    print("\nwhat the numbers mean:\n" + legend([label for label, _ in TABLE_ROWS]))
    return 0


def _semantic(args: argparse.Namespace, settings: Settings, gold: list[dict[str, Any]],
              rows_by_name: dict[str, list[dict[str, Any]]], results: dict[str, Any]) -> str | None:
    """Each run's ``semantic`` figures (the official ``--semantic``), or why there can be none."""
    from madqa.evaluation.judge import JUDGE_PROMPT, Judge, JudgeError, PromptError, load_prompt
    from madqa.evaluation.semantic import JudgmentCache, judge_key, score_rows

    try:
        template = load_prompt(args.judge_prompt) if args.judge_prompt else JUDGE_PROMPT
        judge = Judge(args.judge, api_base=args.judge_api_base, api_key=judge_key(args.judge, args.judge_api_base))
    except (JudgeError, PromptError) as exc:
        return str(exc)
    cache = JudgmentCache(Path(settings.cache_dir) / "judgments.sqlite")
    try:
        for name, rows in rows_by_name.items():
            results[name]["semantic"] = score_rows(rows, gold, judge, cache, template)
            results[name]["semantic"]["prompt"] = args.judge_prompt or "madqa's wording of the official criteria"
    except JudgeError as exc:
        return f"{exc}; no semantic score (the judgments made so far are cached)"
    finally:
        cache.close()
    return None


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("eval", help="score prediction files against gold (official MADQA metrics + ours)")
    p.add_argument("predictions", nargs="+", metavar="PRED.jsonl")
    p.add_argument("--gold", required=True, metavar="FILE")
    p.add_argument("--json", action="store_true", help="print pure JSON")
    p.add_argument("--by", metavar="FIELD", help="also break down by this question field: category, domain, "
                                                 "or any other (e.g. kind)")
    p.add_argument("--corpus", metavar="DIR", help="check the answers of rows that carry no answer_check (rows of "
                                                   "older versions, other tools) on this corpus's pages")
    research.add_eval_arguments(p)
    p.add_argument("--semantic", action="store_true",
                   help="also the official semantic score: ANLS*, then an LLM judge, Rogan-Gladen corrected "
                        "(needs the judge's key: GEMINI_API_KEY or GOOGLE_API_KEY for the default judge)")
    p.add_argument("--judge", default="gemini/gemini-2.5-flash", metavar="MODEL",
                   help="the judge, any litellm model (default gemini/gemini-2.5-flash, the harness's)")
    p.add_argument("--judge-api-base", metavar="URL", help="the judge's server (a proxy, a local model)")
    p.add_argument("--judge-prompt", metavar="FILE",
                   help="the judge's template: the harness's eval/metrics.py, or a text file with {question}, "
                        "{predicted} and {gold_variants}")
