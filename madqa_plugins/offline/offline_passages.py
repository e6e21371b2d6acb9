"""The closest passages the offline reader offers when it refuses: pages and their matching lines.

When no candidate is sure enough to answer, the reader does not guess: it shows the lines (sentences
or table rows, as the page's stored text has them) that hold the most of the question's terms,
weighted by rarity, on the pages it read, best page first. The lines are verbatim, so the loop can
check them on their page and the app can highlight them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from madqa_plugins.offline.offline_spans import Bag, Question

MAX_PAGES = 3  # pages offered
MAX_LINES = 3  # lines offered per page
MIN_SHARE = 0.3  # a line must hold at least this share of the question's weighted terms
MAX_LINE_CHARS = 300


@dataclass(frozen=True)
class ClosestPassage:
    """One page's best-matching lines and the share of the question's weight its best line holds."""

    file: str
    page: int
    lines: tuple[str, ...]
    share: float

    def to_dict(self) -> dict[str, object]:
        """The ``closest_passages`` item of a refusal payload (``madqa.answer.read_passages`` reads it)."""
        return {"file": self.file, "page": self.page, "lines": list(self.lines)}


def line_share(line: str, q: Question, weights: dict[str, float]) -> float:
    """The weighted share of the question's terms (or their synonyms) that ``line`` holds (0..1)."""
    total = sum(weights.values())
    if not total:
        return 0.0
    bag = Bag(line)
    return sum(w * bag.credit(t, q.alts) for t, w in weights.items()) / total


def closest_passages(q: Question, weights: dict[str, float], shown: list[tuple[str, int, int]],
                     page_text: Callable[[str, int], str], first: tuple[str, int, int] | None = None,
                     max_pages: int = MAX_PAGES) -> list[ClosestPassage]:
    """The pages among ``shown`` whose lines match the question best, each with its best lines.

    ``first``: (file, page, line) of the best candidate: its line (the table row or sentence it was
    read from) is offered first among its page's lines; pages rank by their best line's share. Empty when no line
    holds ``MIN_SHARE`` of the question's weight.
    """
    found: list[tuple[float, int, ClosestPassage]] = []
    for order, (file, page, _) in enumerate(shown):
        scored = []
        for n, raw in enumerate(page_text(file, page).splitlines()):
            line = " ".join(raw.split())
            if len(line) < 3 or len(line) > MAX_LINE_CHARS:
                continue
            share = line_share(line, q, weights)
            if share >= MIN_SHARE or first == (file, page, n):
                scored.append((share, n, line))
        if not scored:
            continue
        scored.sort(key=lambda s: (-s[0], s[1]))
        top = scored[0][0]
        read = [s for s in scored if first == (file, page, s[1])]  # the best candidate's own line first
        keep = (read + [s for s in scored if s[0] >= 0.6 * top and s not in read])[:MAX_LINES]
        lines = tuple(line for _, _, line in sorted(keep, key=lambda s: s[1]))  # in page order
        found.append((top, -order, ClosestPassage(file, page, lines, round(top, 4))))
    found.sort(key=lambda f: (-f[0], -f[1]))
    return [p for _, _, p in found[:max_pages]]
