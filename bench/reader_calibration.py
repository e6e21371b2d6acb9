#!/usr/bin/env python3
"""Measure the offline reader on the real-document development set and calibrate its abstention.

Usage::

    python bench/reader_calibration.py --docs DIR [--questions Q.jsonl] [--unanswerable U.jsonl]
                                       [--fit] [--plot docs/img/offline-reader-pr.png] [--json OUT.json]

Runs the offline agent (never abstaining) on every question, records the best candidate's
confidence features (``madqa_plugins.offline.offline_confidence``) and whether the answer is right (ANLS* >= 0.5;
an unanswerable question is never right when answered). ``--fit`` fits the logistic weights on
these rows and prints them (paste them into ``offline_confidence.py``). Then, for each threshold,
it prints precision (right answers / answers given), recall (right answers / answerable questions)
and the refusal rate on unanswerable questions, and draws that curve as a PNG with Pillow.
Prints JSON figures by answer type and kind at the chosen threshold: precision (right / answered),
coverage (answered / answerable), accuracy, answers given and refused. ``--questions`` takes several
files (a set's questions and its table / two-page questions).

``--cross A.jsonl B.jsonl`` (the ``--rows`` of two development sets) skips the run and checks that the
confidence generalises: it fits the weights on A and prints precision / coverage / unanswerable refused at
each threshold on A and on B, then the other way round, then fitted on both; and the same for the
weights in ``offline_confidence.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from madqa.agent import Agent  # noqa: E402
from madqa.evaluation.metrics import anls_star  # noqa: E402
from madqa.evaluation.questions import load_questions  # noqa: E402
from madqa.index import open_or_build  # noqa: E402
from madqa.plugins import collect, get_plugin_manager  # noqa: E402
from madqa.settings import Settings, load_config  # noqa: E402
from madqa.trace import Trace  # noqa: E402
from madqa_plugins.offline import offline_confidence as oc  # noqa: E402
from madqa_plugins.offline.offline_question import analyze  # noqa: E402

THRESHOLDS = [round(i * 0.02, 2) for i in range(51)]


def run(docs: Path, questions: list[dict[str, Any]], settings: Settings,
        log: Path | None = None) -> list[dict[str, Any]]:
    """One record per question: features, confidence, answer, right or not, kind, answer type
    (each also appended to ``log`` as a JSON line as soon as it is known)."""
    registry = collect(get_plugin_manager(entry_points=False))
    corpus, _ = open_or_build(docs, settings, registry)
    config = load_config("offline").with_overrides(options={"backend": {"abstain_threshold": 0.0}})
    rows = []
    for n, q in enumerate(questions, 1):
        started = time.perf_counter()
        agent = Agent(corpus, config, registry, settings)
        trace = Trace(q["question"], config, q["id"]).consume(agent.run(q["question"]))
        row = trace.row()
        last = agent.backend.last
        answerable = bool(q.get("answer_variants"))
        right = answerable and bool(row["answer"]) and anls_star(row["answer"], q["answer_variants"]) >= 0.5
        check = row.get("quote_check") or {}
        rows.append({"id": q["id"], "kind": q.get("kind", "ordinary" if answerable else "unanswerable"),
                     "type": analyze(q["question"]).kind, "answerable": answerable, "right": bool(right),
                     "answer": row["answer"], "gold": (q.get("answer_variants") or [[]])[0],
                     "features": last.features if last else {}, "confidence": last.value if last else 0.0,
                     "quote_ok": bool(check.get("verified")), "s": round(time.perf_counter() - started, 2)})
        if log is not None:
            with open(log, "a", encoding="utf-8") as out:
                out.write(json.dumps(rows[-1]) + "\n")
        print(f"{n}/{len(questions)} {q['id']} {rows[-1]['kind']}/{rows[-1]['type']} right={right} "
              f"conf={rows[-1]['confidence']:.2f} {row['answer']!r} gold {rows[-1]['gold']!r}", file=sys.stderr)
    return rows


def fit(rows: list[dict[str, Any]], steps: int = 4000, rate: float = 0.5, l2: float = 0.01) -> tuple[dict, float]:
    """Logistic regression (batch gradient descent, a little L2) of right-or-not on the features."""
    data = [(r["features"], 1.0 if r["right"] else 0.0) for r in rows if r["features"]]
    w = {k: 0.0 for k in oc.FEATURES}
    b = 0.0
    for _ in range(steps):
        gw = {k: 0.0 for k in w}
        gb = 0.0
        for x, y in data:
            z = b + sum(w[k] * x.get(k, 0.0) for k in w)
            p = 1 / (1 + math.exp(-max(-30, min(30, z))))
            for k in w:
                gw[k] += (p - y) * x.get(k, 0.0)
            gb += p - y
        n = max(len(data), 1)
        for k in w:
            w[k] -= rate * (gw[k] / n + l2 * w[k])
        b -= rate * gb / n
    return {k: round(v, 3) for k, v in w.items()}, round(b, 3)


def curve(rows: list[dict[str, Any]], confidences: list[float]) -> list[dict[str, float]]:
    """Precision, recall and unanswerable refusal rate at each threshold."""
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    out = []
    for t in THRESHOLDS:
        given = [(r, c) for r, c in zip(rows, confidences, strict=True) if c >= t and r["answer"]]
        right = sum(1 for r, _ in given if r["right"])
        refused_u = sum(1 for r, c in zip(rows, confidences, strict=True) if not r["answerable"] and
                        (c < t or not r["answer"]))
        out.append({"threshold": t, "precision": right / len(given) if given else 1.0,
                    "recall": right / len(answerable) if answerable else 0.0,
                    "refused_unanswerable": refused_u / len(unanswerable) if unanswerable else 0.0,
                    "answered": len(given)})
    return out


def plot(points: list[dict[str, float]], chosen: float, path: Path) -> None:
    """Precision, recall and unanswerable refusal rate against the threshold, drawn with Pillow."""
    from PIL import Image, ImageDraw

    w, h, m = 760, 480, 60
    image = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(image)
    x0, y0, x1, y1 = m, h - m, w - 180, m

    def xy(t: float, v: float) -> tuple[float, float]:
        return x0 + (x1 - x0) * t, y0 - (y0 - y1) * v

    d.rectangle((x0, y1, x1, y0), outline="black")
    for i in range(11):
        t = i / 10
        d.line((*xy(t, 0), xy(t, 0)[0], y0 + 5), fill="black")
        d.text((xy(t, 0)[0] - 8, y0 + 8), f"{t:.1f}", fill="black")
        d.line((x0 - 5, xy(0, t)[1], x0, xy(0, t)[1]), fill="black")
        d.text((x0 - 30, xy(0, t)[1] - 6), f"{t:.1f}", fill="black")
        d.line((x0, xy(0, t)[1], x1, xy(0, t)[1]), fill=(230, 230, 230))
    series = (("precision", (31, 119, 180)), ("recall", (214, 39, 40)), ("refused_unanswerable", (44, 160, 44)))
    for n, (key, color) in enumerate(series):
        d.line([xy(p["threshold"], p[key]) for p in points], fill=color, width=3)
        d.line((x1 + 15, y1 + 20 + 22 * n, x1 + 40, y1 + 20 + 22 * n), fill=color, width=3)
        d.text((x1 + 45, y1 + 14 + 22 * n), key.replace("_", " "), fill="black")
    cx = xy(chosen, 0)[0]
    d.line((cx, y1, cx, y0), fill=(120, 120, 120), width=1)
    d.text((cx + 4, y1 + 4), f"chosen {chosen:.2f}", fill="black")
    d.text((x0, y0 + 26), "abstention threshold (calibrated confidence)", fill="black")
    d.text((x0, 20), "Offline reader on the real-document dev set: precision / recall / unanswerable refused",
           fill="black")
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)


def figures_at(rows: list[dict[str, Any]], weights: dict[str, float], bias: float, t: float) -> str:
    """Precision (right / answered), coverage (answered / answerable) and unanswerable refused at ``t``."""
    given = [r for r in rows if r["answer"] and r["features"] and oc.confidence_of(r["features"], weights, bias) >= t]
    right = sum(1 for r in given if r["right"])
    answerable = sum(1 for r in rows if r["answerable"])
    unanswerable = sum(1 for r in rows if not r["answerable"])
    covered = sum(1 for r in given if r["answerable"])
    precision = f"{right / len(given):.3f}" if given else "-"
    return (f"P {precision} ({right}/{len(given)}) C {covered / max(answerable, 1):.3f} "
            f"U {unanswerable - (len(given) - covered)}/{unanswerable}")


def cross(a: Path, b: Path) -> None:
    """Fit on one development set, check on the other (both ways), then on both; and the weights in use."""
    def load(path: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    ra, rb = load(a), load(b)
    fits = [(f"fit on {a.name}", *fit(ra)), (f"fit on {b.name}", *fit(rb)), ("fit on both", *fit(ra + rb)),
            ("offline_confidence.py", oc.WEIGHTS, oc.BIAS)]
    for name, weights, bias in fits:
        print(f"{name}: {json.dumps({'WEIGHTS': weights, 'BIAS': bias})}")
        for t in THRESHOLDS[20:46:2]:
            print(f"  t={t:.2f}  {a.name}: {figures_at(ra, weights, bias, t)}  |  {b.name}: {figures_at(rb, weights, bias, t)}")


def load_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def pick_threshold(rows: list[dict[str, Any]], weights: dict[str, float], bias: float, target: float) -> float:
    """The lowest threshold at which the answers given on ``rows`` are right at least ``target`` of the time."""
    for t in THRESHOLDS[20:50]:
        given = [r for r in rows if r["answer"] and r["features"] and oc.confidence_of(r["features"], weights, bias) >= t]
        if given and sum(1 for r in given if r["right"]) / len(given) >= target:
            return t
    return THRESHOLDS[49]


def leave_one_set_out(paths: list[Path], target: float, l2: float) -> None:
    """For each set: fit the weights on the other sets, pick the threshold there (the lowest reaching ``target``
    precision on them), and report precision / coverage / unanswerable refused on the set left out: what a
    calibration does on documents it never saw. Then the weights in use, at their threshold, on each set."""
    sets = {p.name: load_rows(p) for p in paths}
    for name, rows in sets.items():
        train = [r for other, rs in sets.items() if other != name for r in rs]
        weights, bias = fit(train, l2=l2)
        t = pick_threshold(train, weights, bias, target)
        print(f"left out {name}: t={t:.2f}  train {figures_at(train, weights, bias, t)}  ->  {figures_at(rows, weights, bias, t)}")
    weights, bias = fit([r for rs in sets.values() for r in rs], l2=l2)
    print(f"fit on all: {json.dumps({'WEIGHTS': weights, 'BIAS': bias})}")
    for t in (oc.THRESHOLD, pick_threshold([r for rs in sets.values() for r in rs], weights, bias, target)):
        print(f"  fit on all, t={t:.2f}: " + "  ".join(f"{n}: {figures_at(rs, weights, bias, t)}" for n, rs in sets.items()))
    print(f"  offline_confidence.py, t={oc.THRESHOLD:.2f}: " +
          "  ".join(f"{n}: {figures_at(rs, oc.WEIGHTS, oc.BIAS, oc.THRESHOLD)}" for n, rs in sets.items()))


def breakdown(rows: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """Accuracy, answers given and their precision by kind and by expected answer type."""
    def figures(group: list[dict[str, Any]]) -> dict[str, Any]:
        given = [r for r in group if r["answer"] and r["confidence"] >= threshold]
        right = [r for r in given if r["right"]]
        answerable = [r for r in group if r["answerable"]]
        covered = [r for r in given if r["answerable"]]
        return {"n": len(group), "accuracy": round(len(right) / len(group), 3) if group else None,
                "answered": len(given), "precision": round(len(right) / len(given), 3) if given else None,
                "coverage": round(len(covered) / len(answerable), 3) if answerable else None,
                "refused": len(group) - len(given),
                "quotes_ok": sum(1 for r in given if r["quote_ok"])}
    by_kind: dict[str, list] = defaultdict(list)
    by_type: dict[str, list] = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
        if r["answerable"]:
            by_type[r["type"]].append(r)
    hard = [r for r in rows if r["answerable"] and r["kind"] != "ordinary"]
    return {"threshold": threshold, "all": figures(rows),
            "all_answerable": figures([r for r in rows if r["answerable"]]),
            "hard": figures(hard), "by_kind": {k: figures(v) for k, v in sorted(by_kind.items())},
            "by_type": {k: figures(v) for k, v in sorted(by_type.items())}}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--docs", required=True, type=Path)
    p.add_argument("--questions", type=Path, nargs="+", default=[REPO / "data" / "realdocs" / "questions.jsonl"])
    p.add_argument("--unanswerable", type=Path, default=REPO / "data" / "realdocs" / "unanswerable.jsonl")
    p.add_argument("--home", type=Path, default=REPO / "bench" / ".cache" / "reader-home")
    p.add_argument("--fit", action="store_true", help="fit the logistic weights and use them")
    p.add_argument("--threshold", type=float, default=oc.THRESHOLD)
    p.add_argument("--plot", type=Path)
    p.add_argument("--json", type=Path, help="write the per-question records here")
    p.add_argument("--limit", type=int)
    p.add_argument("--rows", type=Path, help="append each question's record here (JSONL) as it is done")
    p.add_argument("--from-rows", type=Path, help="skip the run: fit and plot the records of an earlier --rows")
    p.add_argument("--cross", type=Path, nargs=2, metavar=("A", "B"),
                   help="skip the run: fit on one set's --rows, check on the other's, both ways")
    p.add_argument("--loso", type=Path, nargs="+", metavar="ROWS",
                   help="skip the run: fit on all sets' --rows but one, check on the one left out, each in turn")
    p.add_argument("--target", type=float, default=0.85, help="--loso: the precision the threshold is picked for")
    p.add_argument("--l2", type=float, default=0.01, help="--loso: the fit's L2 penalty")
    args = p.parse_args()
    if args.loso:
        leave_one_set_out(args.loso, args.target, args.l2)
        return 0
    if args.cross:
        cross(*args.cross)
        return 0
    questions = []
    for path in (*args.questions, args.unanswerable):
        if path.is_file():
            loaded, problems = load_questions(path)
            for problem in problems:
                print(f"warning: {path}: {problem}", file=sys.stderr)
            questions += loaded
    questions = questions[: args.limit] if args.limit else questions
    settings = Settings.from_env(home=args.home)
    if args.from_rows:
        rows = [json.loads(line) for line in args.from_rows.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        rows = run(args.docs, questions, settings, args.rows)
    weights, bias = oc.WEIGHTS, oc.BIAS
    if args.fit:
        weights, bias = fit(rows)
        print(json.dumps({"WEIGHTS": weights, "BIAS": bias}))
    confidences = [oc.confidence_of(r["features"], weights, bias) if r["features"] else 0.0 for r in rows]
    for r, c in zip(rows, confidences, strict=True):
        r["confidence"] = c
    points = curve(rows, confidences)
    for pt in points:
        print(json.dumps(pt))
    if args.plot:
        plot(points, args.threshold, args.plot)
    print(json.dumps(breakdown(rows, args.threshold), indent=1))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
