"""Do two versions of the code rank alike? Top-10 of whoosh and tantivy, ingested and searched by the code it runs from.

    cd CHECKOUT_A && python -m bench.search_identity CORPUS HOME_A QUESTIONS > a.json
    cd CHECKOUT_B && python -m bench.search_identity CORPUS HOME_B QUESTIONS > b.json
    python -m bench.search_identity --compare a.json b.json

QUESTIONS is a MADQA-format JSONL (its questions are searched as typed), plus queries of the tool's
language (operators, phrases, wildcards, short and punctuated tokens). Each result is (file, page,
score rounded to 5 places, snippet) and the note; ``--compare`` prints per retriever how many queries
gave exactly the same. Used to check a change meant to make ingest faster changes no result.
"""

from __future__ import annotations

import json
import sys

EXTRA_QUERIES = ["doubleclick", "mouse AND resolution", "dxf OR postscript", '"default value"', "plot NOT splot",
                 "termin*", "C++", "image/png", "-v", "2.0", "max_steps", "x86-64", "set terminal png", "octave's",
                 "lily?ond", "gnuplot's"]


def results(root: str, home: str, questions: str) -> dict[str, list]:
    """Ingest ``root`` into ``home`` (text layer) and search every query with whoosh and tantivy."""
    from madqa.corpus import Corpus
    from madqa.index import ingest
    from madqa.plugins import collect, get_plugin_manager
    from madqa.settings import Settings

    settings = Settings.from_env(env={}, home=home)
    registry = collect(get_plugin_manager(entry_points=False))
    ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    with open(questions, encoding="utf-8") as f:
        queries = [json.loads(line)["question"] for line in f if line.strip()] + EXTRA_QUERIES
    out = {}
    for name in ("whoosh", "tantivy"):
        retriever = registry.create("retriever", name, corpus, {})
        out[name] = [[q, [(h.file, h.page, round(h.score, 5), h.snippet) for h in res.hits], res.note]
                     for q in queries for res in [retriever.search(q, 10)]]
    return out


def compare(a: dict[str, list], b: dict[str, list]) -> list[str]:
    """Per retriever: queries, how many gave identical results, hits in all."""
    return [f"{name}: {len(a[name])} queries, {sum(x == y for x, y in zip(a[name], b.get(name, []), strict=False))} "
            f"identical (hits, scores, snippets, notes); {sum(len(x[1]) for x in a[name])} hits in all" for name in a]


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        with open(sys.argv[2], encoding="utf-8") as fa, open(sys.argv[3], encoding="utf-8") as fb:
            print("\n".join(compare(json.load(fa), json.load(fb))))
    else:
        print(json.dumps(results(*sys.argv[1:4])))
