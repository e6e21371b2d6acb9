"""What several commands share: the plugin registry, opening a corpus, configs and options from
flags, progress bars, and the plain-text view of agent steps."""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from madqa.settings import Settings

_exit_lock = threading.Lock()
_light_exit = False


def fast_exit_for(settings: Settings, *configs: Any) -> None:
    """When a config uses the litellm backend, let this process end without the interpreter's slow last
    garbage collection over litellm's modules (about 1 s, measured by bench/startup.py).
    ``MADQA_FAST_EXIT=0`` turns it off (the "before" figure)."""
    if settings.fast_exit and any(getattr(c, "backend", None) == "litellm" for c in configs):
        light_exit()


def light_exit() -> bool:
    """At exit, after every exit handler registered later (litellm's own among them: they run first),
    freeze the garbage collector so the interpreter skips its last full collection. For a process that
    ends after its command (the CLI), called before litellm is imported; every file madqa writes is
    closed by then and standard streams are still flushed. Returns whether it was registered now."""
    global _light_exit
    with _exit_lock:
        if _light_exit:
            return False
        atexit.register(gc.freeze)
        _light_exit = True
        return True


def agent_for(args: argparse.Namespace, settings: Settings) -> tuple[Any, Any]:
    """(config, agent) of the flags, on the corpus of --corpus (indexed first if it never was): what
    ``ask`` and ``chat`` answer with."""
    from madqa.agent import Agent

    show_index_logs()
    config = pipeline_config(args, settings)
    fast_exit_for(settings, config)
    reg = registry(settings)
    corpus = open_corpus(args, settings, reg)
    return config, Agent(corpus, config, reg, settings, backend_options(args))


def scope_of(args: argparse.Namespace, corpus: Any) -> tuple[str, ...]:
    """The files of ``--file`` as the corpus names them (none given: ``()``, the whole collection);
    ScopeError (exit status 2) for a name that is no document of the corpus, before any search."""
    from madqa.scope import resolve_files

    return resolve_files(args.file, corpus.documents) if getattr(args, "file", None) else ()


def add_scope_arg(p: argparse.ArgumentParser) -> None:
    """``--file NAME`` (repeatable): search only these documents of the corpus."""
    p.add_argument("--file", action="append", metavar="NAME",
                   help="search only this document (repeat for several); its name in the corpus, case, "
                        "folders and .pdf optional. A query may also say file:NAME")


def registry(settings: Settings) -> Any:
    from madqa.plugins import collect, get_plugin_manager

    return collect(get_plugin_manager(settings.plugins_dir), settings)


def progress_bar(desc: str) -> tuple[Callable[[str, int, int], None], Callable[[], None]]:
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


def index_progress(out: Any = None) -> Callable[[str, int, int | None, str], None]:
    """Progress of slow index builds (embedding) as one stderr line per report:
    ``dense: 256/1004 pages, 3.1 windows/s, about 9 min left``."""
    def report(name: str, done: int, total: int | None, detail: str) -> None:
        print(f"{name}: {done}/{total if total is not None else '?'} pages, {detail}", file=out or sys.stderr,
              flush=True)

    return report


def page_progress(out: Any = None, every_s: float = 2.0,
                  clock: Callable[[], float] = time.monotonic) -> Callable[[str, int, int, str], None]:
    """Progress of reading pages, one stderr line per report: every OCR'd page (a scan takes seconds a page:
    ``OCR page 3/12 · scans/report.pdf``), and for text layers at most one line per ``every_s`` seconds
    (``reading text: page 40/212 · big.pdf · 1,204 pages read``), so a long collection is never silent."""
    read = [0]
    last = [clock()]  # a collection read within every_s stays quiet

    def report(file: str, page: int, pages: int, source: str) -> None:
        read[0] += 1
        if source == "ocr":
            print(f"OCR page {page}/{pages} · {file}", file=out or sys.stderr, flush=True)
            last[0] = clock()
        elif clock() - last[0] >= every_s:
            last[0] = clock()
            print(f"reading text: page {page}/{pages} · {file} · {read[0]:,} pages read", file=out or sys.stderr,
                  flush=True)

    return report


def show_index_logs() -> None:
    """Have an index built on first use (``dense``) say its progress on stderr."""
    import logging

    logger = logging.getLogger("madqa_plugins.dense.dense")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def open_corpus(args: argparse.Namespace, settings: Settings, reg: Any, check: bool = False) -> Any:
    """The corpus named by --corpus, indexed first (with a summary on stderr) if it never was or is
    damaged (``check``: its page store and indexes checked first, see madqa.repair)."""
    from madqa.index import open_or_build

    corpus, report = open_or_build(args.corpus, settings, reg, check=check)
    if report is not None:
        print_report(report, out=sys.stderr)
    return corpus


def rebuild_corpus(args: argparse.Namespace, settings: Settings, damage: Exception) -> None:
    """Read every PDF of --corpus again into a new generation (its index was found damaged), saying so."""
    from madqa.index import open_or_build

    print(f"madqa: {damage}; rebuilding it from the PDFs", file=sys.stderr)
    corpus, report = open_or_build(args.corpus, settings, registry(settings), rebuild=str(damage))
    corpus.close()
    if report is not None:
        print_report(report, out=sys.stderr)


def print_report(report: Any, out: Any = None) -> None:
    out = out or sys.stdout  # looked up per call: tests and pipes replace sys.stdout
    print(f"indexed {report.files} files, {report.pages} pages in {report.elapsed_s:.1f}s "
          f"({report.added} added, {report.updated} updated, {report.unchanged} unchanged, "
          f"{report.removed} removed)", file=out)
    print(f"pages OCR'd: {report.ocr_pages}, imported OCR: {report.imported_pages}, "
          f"with no text: {report.empty_pages}, blank: {report.blank_pages}, failures: {len(report.failures)}",
          file=out)
    if report.language_note:
        print(f"language: {report.language_note}", file=out)
    if report.pages_without_text:
        named = ", ".join(f"{f} p.{p}" for f, p in report.pages_without_text)
        more = report.empty_pages - len(report.pages_without_text)
        print(f"pages with no text (not searchable; try --ocr always or --ocr-jsonl): {named}"
              + (f" and {more} more" if more > 0 else ""), file=out)
    for file, message in report.warnings:
        print(f"warning: {file + ': ' if file else ''}{message}", file=sys.stderr)
    for file, reason in report.failures:
        print(f"failed: {file}: {reason}", file=sys.stderr)


def pipeline_config(args: argparse.Namespace, settings: Settings) -> Any:
    """The named config (--config, else MADQA_CONFIG) with any command-line overrides applied."""
    from madqa.settings import load_config

    config = load_config(args.config or settings.config)
    return config.with_overrides(backend=args.backend, model=args.model, retriever=args.retriever,
                                 reranker=args.reranker, query_strategy=args.strategy, top_k=args.top_k,
                                 max_steps=args.max_steps, image_budget_px=args.image_budget,
                                 tools=tool_list(getattr(args, "tools", None)), options=parsed_options(args.set or []))


def tool_list(text: str | None) -> tuple[str, ...] | None:
    """``--tools search_documents,open_page`` as the config's tool names (None: the config's own)."""
    if text is None:
        return None
    return tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))


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
        notes = "".join(f"\n      note: {n}" for n in getattr(step, "notes", ()))
        return f"[{step.iteration}] model{' (forced to answer)' if step.forced_answer else ''}: {text[:200]}{notes}"
    if kind == "error":
        return f"[{step.iteration}] error in {step.where}: {step.message}"
    if kind == "tool":  # a tool other than a search (open_page, document_outline, a plugin's)
        pages = ", ".join(f"{r.file} p.{r.page}" for r in step.new_pages) or "no new pages"
        result = step.text.strip().replace("\n", " | ")
        return f"[{step.iteration}] {step.name} {json.dumps(step.arguments, ensure_ascii=False)}: shown: {pages}\n" \
               f"      {result[:300]}"
    if kind == "steer":
        return f"[{step.iteration}] person: {step.action} " + ", ".join(c.name for c in step.calls)
    cites = ", ".join(f"{c.file} p.{c.page}" for c in step.citations) or "none"
    answer = " | ".join(step.answer) if step.answer else "(no answer: refusal)"
    if step.failure:
        answer = f"(failed: {step.failure})"
    flags = "".join(f"\n    flag: {f}" for f in step.flags)
    closest = "".join(f"\n  closest passage, {p.file} p.{p.page}: " + " / ".join(p.lines)
                      for p in step.closest_passages)
    return f"ANSWER: {answer}\n  citations: {cites}{answer_mark(step)}{closest}{flags}"


def answer_mark(step: Any) -> str:
    """The line saying whether the answer is written on its pages (``madqa.verification``), or nothing."""
    if step.verified is None:
        return ""
    if step.verified:
        where = ", ".join(dict.fromkeys(f"{c.page.file} p.{c.page.page}" for c in step.checks if c.page))
        return f"\n  checked: ✓ the answer is written on {where}"
    return "\n  checked: ✗ the answer is not written as such on a page the agent saw (see the flags)"


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (``-k 0`` finds nothing, ``-k -2`` is nonsense)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def image_budget(text: str) -> int:
    """An argparse type: pixels per page image, 10,000..50,000,000 (``--budget 6`` was taken for a model budget)."""
    from madqa.errors import SettingsError
    from madqa.settings import check_image_budget

    try:
        value = int(text.replace("_", ""))
        check_image_budget(value, "image budget")
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected pixels per page image (e.g. 1200000), got {text!r}") from None
    except SettingsError as exc:
        raise argparse.ArgumentTypeError(f"{exc}; to limit model calls, tokens or cost use --set "
                                         "budget.max_calls=N (or budget.max_tokens, budget.max_cost_usd)") from None
    return value


class _DeprecatedBudget(argparse.Action):
    """``--budget``: the old name of ``--image-budget``, kept working with a warning on stderr."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print("madqa: --budget is deprecated: it is the image budget, in pixels per page image; write "
              "--image-budget (model calls, tokens or cost: --set budget.max_calls=N)", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_image_budget_arg(p: argparse.ArgumentParser, default_help: str = "") -> None:
    """``--image-budget PX`` (most pixels of a page image) and its deprecated alias ``--budget``."""
    p.add_argument("--image-budget", type=image_budget, metavar="PX",
                   help="most pixels (width x height) of a page image, e.g. 1200000"
                        + (default_help or " (default: the config's image_budget_px, else MADQA_IMAGE_BUDGET, "
                                            "else 1.2M)"))
    p.add_argument("--budget", dest="image_budget", type=image_budget, action=_DeprecatedBudget,
                   help=argparse.SUPPRESS)


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
    p.add_argument("--top-k", type=positive_int)
    p.add_argument("--max-steps", type=positive_int)
    p.add_argument("--tools", metavar="NAME,NAME", help="the tools the agent is offered (see `madqa plugins`), e.g. "
                   "search_documents,show_pages,list_documents,document_outline,open_page,next_pages,search_in")
    add_image_budget_arg(p)
    p.add_argument("--set", action="append", metavar="PART.KEY=VALUE",
                   help="an option of the retriever, reranker, query_strategy or backend, "
                        "e.g. retriever.analyzer=stemming, backend.timeout=30")


