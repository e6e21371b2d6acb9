"""Answer type phrases for the offline reader: acronym expansions and the words after the asked
attribute ("the venue is the Old Mill"), or the first cell of a row keyed by a code of the question."""

from __future__ import annotations

import re

from madqa_plugins.offline.offline_spans import Bag, Candidate, Question, clean, proximity, stem, stems_of


def expansions(line: str, q: Question) -> list[tuple[int, str]]:
    """Word runs whose initials spell an acronym of the question ("MQTT" -> "Message Queuing Telemetry Transport")."""
    out = []
    tokens = [(m.start(), m.end(), m.group()) for m in re.finditer(r"[A-Za-z][\w']*", line)]
    for acro in (t for t in q.terms if t.isupper() and 2 <= len(t) <= 8 and t.isalpha()):
        for i in range(len(tokens)):
            letters, j = "", i
            while j < len(tokens) and len(letters) < len(acro):
                w = tokens[j][2]
                if not (letters and w.lower() in ("of", "and", "for", "to", "the", "in", "on", "a")):
                    letters += w[0].upper()
                j += 1
            if letters == acro.upper() and j - i >= 2 and tokens[i][2][0].upper() == acro[0]:
                out.append((tokens[i][0], line[tokens[i][0]:tokens[j - 1][1]]))
    return out




def phrase_after_terms(text: str, file: str, page: int, q: Question, weights: dict[str, float]) -> list[Candidate]:
    """Fallback phrases: after the asked attribute ("the venue is the Old Mill"; "Building C" for "which
    building"), and the first cell of a row keyed by a code of the question ("E-22 Memory full ...")."""
    out = []
    lines = text.splitlines()
    bags = [Bag(ln) for ln in lines]
    page_bag = Bag(stems=tuple(x for b in bags for x in b.seq.split()))
    codes = [t for t in q.terms if re.search(r"\d", t) and re.search(r"[A-Za-z]", t) or t.isupper() and len(t) > 1]
    own = set(stems_of(q.text))
    for i, line in enumerate(lines):
        found: list[tuple[str, float, str]] = []
        for t in q.target:
            pattern = rf"\b{re.escape(t)}\w*(?:\s+(?:is|was|are|were|will be|called|named|means?|:|-|–))+\s+([^.;:()]{{2,60}})"
            found += [(m.group(1), 0.5, "the words after the asked attribute") for m in re.finditer(pattern, line, re.I)]
            # ("Building C", "Form 7"; the name is a capital or a number: "Warning when" names nothing)
            found += [(m.group(), 0.7, "the asked attribute's name") for m in
                      re.finditer(rf"(?i:\b{re.escape(t)}\w*)\s+(?:[A-Z0-9][\w.\-]{{0,3}}|[A-Z]?[\w.\-]*\d[\w.\-]*)\b", line)
                      if m.group()[:1].isupper()]
        for key in codes:
            m = re.match(rf"\s*{re.escape(key)}\s+(\S+(?:\s+[^\sA-Z]\S*){{0,5}})", line)
            if m:
                fit = 0.9 if weights.get(stem(key), 0) >= max(weights.get(stem(c), 0) for c in codes) else 0.6
                found.append((m.group(1), fit, f"the first cell of the row of {key}"))
        for value, fit, why in found:
            quoted = re.search(r"['`\"\u2018]([^'`\"\u2019]{2,60})", value)
            if quoted:  # "- use 'set fit maxiter <n>'": the quoted command, without its placeholder
                value = re.sub(r"(?:\s+(?:<[^<>]*>?|\[[^][]*\]?))+$", "", quoted.group(1)) or quoted.group(1)
            value = clean(" ".join(value.split()[:6]))
            if value and not set(stems_of(value)) <= own:
                local, on_page, _ = proximity(bags, i, Bag(), weights, page_bag, q.alts)
                out.append(Candidate(value, "phrase", file, page, round(fit * (0.7 * local + 0.3 * on_page), 4), i, why,
                                     round(local, 4), round(on_page, 4), 0.0, fit))
    return out


