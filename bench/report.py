"""Targets checked against a benchmark result, and the readable table printed after the JSON."""

from __future__ import annotations

from typing import Any

DEFAULT_RETRIEVER = "whoosh"


def _get(r: dict, *path: str) -> Any:
    for key in path:
        if not isinstance(r, dict) or key not in r:
            return None
        r = r[key]
    return r


def targets(r: dict) -> list[dict[str, Any]]:
    """Each target of issue 7 with our figure and whether it is met (None when not measured)."""
    render = r.get("render", {})
    ratio_warm = (render["ref_ms_p50"] / render["warm_ms_p50"]) if render.get("warm_ms_p50") else None
    default_leg = next((b for b in _get(r, "legibility", "budgets") or [] if b["budget_px"] == render.get("budget_px")),
                       None)
    rows = [
        ("ingest+index, text layer (pages/s)", _get(r, "ingest", "pages_per_s"), ">= 300", lambda v: v >= 300),
        ("ingest peak memory (MB)", _get(r, "ingest", "peak_rss_mb"), "< 1024", lambda v: v < 1024),
        (f"search p95, {DEFAULT_RETRIEVER} (ms)", _get(r, "search_ms", DEFAULT_RETRIEVER, "p95"), "<= 20",
         lambda v: v <= 20),
        ("warm page image p95 (ms)", render.get("warm_ms_p95"), "<= 2", lambda v: v <= 2),
        ("repeated page vs reference (x faster)", ratio_warm, ">= 20", lambda v: v >= 20),
        ("cold render vs reference (ms)", render.get("cold_ms_p50"), f"< {render.get('ref_ms_p50', 0):.0f}",
         lambda v: v < render["ref_ms_p50"]),
        ("loop overhead (ms/step)", _get(r, "loop", "ms_per_step"), "<= 10", lambda v: v <= 10),
        ("legibility at default budget (share)", default_leg and default_leg["mean"], ">= 0.95",
         lambda v: v >= 0.95),
    ]
    return [{"target": name, "value": value, "goal": goal, "met": None if value is None else bool(test(value))}
            for name, value, goal, test in rows]


def _fmt(v: Any, digits: int = 1) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def _ratio(ours: float | None, ref: float | None) -> str:
    return f"{ref / ours:.1f}x" if ours and ref else "-"


def rows(r: dict) -> list[tuple[str, str, str, str]]:
    """(measure, ours, reference, ratio) rows; the ratio is reference/ours (>1: we are faster or smaller)."""
    out = []
    ing, only, ref_ix = r.get("ingest", {}), r.get("index_only", {}), r.get("ref_index", {})
    out.append(("corpus", f"{r['docs']:,} PDFs / {r['pages']:,} pages", "same", ""))
    def rate(d: dict) -> str:
        cpu = f" ({_fmt(d['pages_per_cpu_s'], 0)} per CPU-s)" if d.get("pages_per_cpu_s") else ""
        return f"{_fmt(d.get('pages_per_s'), 0)} pages/s{cpu}"

    out.append(("ingest+index, text layer", rate(ing), "-", ""))
    out.append(("index only, same texts", rate(only), rate(ref_ix),
                _ratio(ref_ix.get("pages_per_s"), only.get("pages_per_s"))))
    out.append(("peak memory (ingest / index only)", f"{_fmt(ing.get('peak_rss_mb'), 0)} / "
                f"{_fmt(only.get('peak_rss_mb'), 0)} MB", f"- / {_fmt(ref_ix.get('peak_rss_mb'), 0)} MB", ""))
    ref_search = _get(r, "search_ms", "reference") or {}
    for name, s in (r.get("search_ms") or {}).items():
        if name == "reference":
            continue
        if "skipped" in s:
            out.append((f"search {name}", "skipped: " + s["skipped"][:60], "", ""))
            continue
        out.append((f"search {name} p50/p95/p99", "{p50:.1f} / {p95:.1f} / {p99:.1f} ms".format(**s),
                    "{p50:.1f} / {p95:.1f} / {p99:.1f} ms".format(**ref_search) if ref_search else "-",
                    _ratio(s["p95"], ref_search.get("p95")) + " (p95)"))
    rd = r.get("render") or {}
    if rd:
        out.append(("page image, first request (p50)", f"{rd['cold_ms_p50']:.1f} ms", f"{rd['ref_ms_p50']:.1f} ms",
                    _ratio(rd["cold_ms_p50"], rd["ref_ms_p50"])))
        out.append(("page image, repeated (p50 / p95)", f"{rd['warm_ms_p50']:.2f} / {rd['warm_ms_p95']:.2f} ms",
                    f"{rd['ref_ms_p50']:.1f} ms (no cache)", _ratio(rd["warm_ms_p50"], rd["ref_ms_p50"])))
        out.append(("bytes per page", f"{rd['bytes_per_page'] / 1024:.0f} KiB {rd['format']} {rd['size_px']}",
                    f"{rd['ref_bytes_per_page'] / 1024:.0f} KiB png {rd['ref_size_px']}",
                    _ratio(rd["bytes_per_page"], rd["ref_bytes_per_page"])))
        for rule, tokens in rd["tokens_per_page"].items():
            ref = rd["ref_tokens_per_page"][rule]
            out.append((f"image tokens/page, {rule}", f"{tokens:,.0f}", f"{ref:,.0f}", _ratio(tokens, ref)))
    if r.get("loop"):
        out.append(("loop overhead", f"{r['loop']['ms_per_step']:.2f} ms/step", "-", ""))
    web = r.get("webapp") or {}
    if "first_step_ms_p50" in web:
        out.append(("web app, Enter -> first streamed step", f"{web['first_step_ms_p50']:.0f} ms (p50)", "-", ""))
    for b in _get(r, "legibility", "budgets") or []:
        tokens = " ".join(f"{rule.split('_')[0][:6]}{'-p' if rule.endswith('patches') else ''} {n:,}"
                          for rule, n in (b.get("tokens_per_page") or {}).items())
        out.append((f"legibility @ {b['budget_px'] / 1e6:.1f} MP {b['size_px']}",
                    f"{b['mean']:.1%} words (min {b['min']:.0%}, {b['pages_below_95']}/{b['pages']} pages < 95%)",
                    tokens, "ok" if b["acceptable"] else "too low"))
    return out


def print_table(r: dict) -> None:
    table = rows(r)
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    print(f"\n{r['date']} · {r['machine']}")
    header = ("measure", "ours", "reference", "ref/ours")
    print("  " + "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for row in table:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    print("\ntargets")
    for t in r.get("targets", []):
        mark = "n/a" if t["met"] is None else ("met" if t["met"] else "MISSED")
        print(f"  {t['target'].ljust(40)} {_fmt(t['value'], 2).rjust(10)}  {t['goal'].ljust(8)} {mark}")


def markdown(r: dict) -> str:
    """The same table and targets as Markdown, for docs/performance.md."""
    lines = [f"{r['date']} · {r['machine']}", "", "| measure | ours | reference | ref/ours |", "|---|---|---|---|"]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows(r)]
    lines += ["", "| target | ours | goal | met? |", "|---|---|---|---|"]
    for t in r.get("targets", []):
        mark = "n/a" if t["met"] is None else ("met" if t["met"] else "**missed**")
        lines.append(f"| {t['target']} | {_fmt(t['value'], 2)} | {t['goal']} | {mark} |")
    return "\n".join(lines)
