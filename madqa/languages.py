"""A corpus's language: which ones madqa knows, reading a user's choice, and guessing it from page texts.

The language of a corpus chooses its text analysis (stop words and stemmer of ``whoosh`` and ``tantivy``,
``madqa_plugins.text.text_analysis``), the Tesseract language its scans are OCR'd in, and what refusal
detection looks for. It is stored in the corpus manifest (``madqa.index.ingest``), so every later open
uses it. When none is given it is guessed (``detect_language``) by counting each language's commonest
words in the pages' text: cheap, and right for any page of running prose.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from madqa.errors import CorpusError

DEFAULT = "en"
DETECT_CHARS = 400_000  # text read to guess a language: a few hundred pages of prose is plenty
MIN_DETECT_WORDS = 50  # below this many common words counted, the guess is the default


@dataclass(frozen=True)
class Language:
    """One language madqa can analyse: its code, name, Tesseract data name and Snowball stemmer name
    (Whoosh and Tantivy both ship Snowball stemmers and stop lists under these names)."""

    code: str
    name: str
    tesseract: str
    stemmer: str
    analysis_gaps: tuple[str, ...] = ()  # what Whoosh has no data for ("stop words", "stemmer"): warned about


LANGUAGES: dict[str, Language] = {lang.code: lang for lang in (
    Language("en", "English", "eng", "english"),
    Language("de", "German", "deu", "german"),
    Language("fr", "French", "fra", "french"),
    Language("es", "Spanish", "spa", "spanish"),
    Language("it", "Italian", "ita", "italian"),
    Language("pt", "Portuguese", "por", "portuguese"),
    Language("nl", "Dutch", "nld", "dutch"),
    Language("da", "Danish", "dan", "danish"),
    Language("sv", "Swedish", "swe", "swedish"),
    Language("no", "Norwegian", "nor", "norwegian"),
    Language("fi", "Finnish", "fin", "finnish"),
    Language("hu", "Hungarian", "hun", "hungarian"),
    Language("ro", "Romanian", "ron", "romanian", ("stop words",)),
    Language("ru", "Russian", "rus", "russian"),
    Language("tr", "Turkish", "tur", "turkish", ("stemmer",)),
)}

# the commonest words of each language that are rarely words of another: what detect_language counts
_COMMON: dict[str, frozenset[str]] = {code: frozenset(words.split()) for code, words in {
    "en": "the and of to is that for with are this was be by from which have not you it as or can",
    "de": "der die das und ist nicht mit ein eine den dem zu auf für sich des werden wird auch sie oder wenn",
    "fr": "le la les et des est une pour que qui dans pas sur sont avec ce du au par vous être ou cette",
    "es": "el los las y del que una por para con es se en al como pero más sus está son",
    "it": "il gli della che è per una sono con non di del le si anche nel alla questo",
    "pt": "os as que uma para com não por é mais dos das se ao como também pelo",
    "nl": "de het een en van is dat niet op te voor met zijn wordt ook die bij aan",
    "da": "og det er at en til på med den som af ikke har for kan de",
    "sv": "och det är att en till på med den som av inte har för kan de",
    "no": "og det er at en til på med den som av ikke har for kan de",
    "fi": "ja on ei se että joka kun mutta tai ovat myös sekä",
    "hu": "a az és hogy nem egy is van meg de csak ez mint",
    "ro": "și de la în cu pe nu este care un o din sau pentru",
    "ru": "и в не на что с по это как для или из он но",
    "tr": "ve bir bu da de için ile olarak gibi daha çok ama",
}.items()}
_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class Detection:
    """A guessed language and the evidence: common words counted, out of how many words read."""

    code: str
    common_words: int
    words: int
    chars: int

    def describe(self) -> str:
        """One line for a corpus status: what was detected, from how much text."""
        if self.common_words < MIN_DETECT_WORDS:
            return (f"{LANGUAGES[self.code].name} ({self.code}) by default: too little text to tell "
                    f"({self.words:,} words read)")
        return (f"detected {LANGUAGES[self.code].name} ({self.code}) from {self.words:,} words "
                f"({self.chars:,} characters) of page text")


def supported() -> str:
    """The supported codes with their names, for an error or a help text."""
    return ", ".join(f"{code} ({lang.name})" for code, lang in LANGUAGES.items())


def language_named(value: str) -> Language:
    """The language a user named by code (``de``), English name (``German``) or Tesseract name (``deu``);
    CorpusError listing the supported ones otherwise."""
    wanted = str(value).strip().lower()
    for lang in LANGUAGES.values():
        if wanted in (lang.code, lang.name.lower(), lang.tesseract):
            return lang
    raise CorpusError(f"unknown language {value!r}; supported: {supported()}")


def detect_language(texts: Iterable[str], max_chars: int = DETECT_CHARS) -> Detection:
    """The language whose common words the texts use most (reading at most ``max_chars``); the default
    when fewer than MIN_DETECT_WORDS common words were seen (scans without text, tables of numbers)."""
    counts = dict.fromkeys(_COMMON, 0)
    words = chars = 0
    for text in texts:
        text = text[: max_chars - chars]
        chars += len(text)
        for word in _WORD.findall(text.lower()):
            words += 1
            for code, common in _COMMON.items():
                if word in common:
                    counts[code] += 1
        if chars >= max_chars:
            break
    best = max(counts, key=lambda code: (counts[code], code == DEFAULT))
    if counts[best] < MIN_DETECT_WORDS:
        return Detection(DEFAULT, counts[best], words, chars)
    return Detection(best, counts[best], words, chars)


def tesseract_language(code: str, configured: str, tessdata: str | None) -> tuple[str, str | None]:
    """The Tesseract language for a corpus in ``code``: ``configured`` (MADQA_OCR_LANGUAGE) when it was set
    to something other than the default ``eng``, else the corpus language's; with a warning when that
    language's data is not installed (then ``eng`` is used)."""
    if configured and configured != "eng":
        return configured, None
    wanted = LANGUAGES[code].tesseract
    if wanted == "eng":
        return "eng", None
    if tessdata is not None and os.path.isfile(os.path.join(tessdata, f"{wanted}.traineddata")):
        return wanted, None
    return "eng", (f"Tesseract has no {LANGUAGES[code].name} data ({wanted}.traineddata) here: scans are "
                   f"OCR'd as English (Debian: apt install tesseract-ocr-{wanted})")


def stored_language(manifest: Path) -> dict[str, Any] | None:
    """The ``language`` record a corpus manifest stores, read even when its generation is damaged (a rebuild
    keeps the language it had); None when there is none."""
    try:
        stored = json.loads(manifest.read_text(encoding="utf-8")).get("language")
    except (OSError, ValueError, AttributeError):
        return None
    return stored if isinstance(stored, dict) and stored.get("code") in LANGUAGES else None


def language_record(asked: str | None, kept: dict[str, Any] | None, texts: Callable[[], Iterable[str]],
                    ocr_note: str | None) -> dict[str, Any]:
    """The manifest's ``language``: its code, how it was chosen (``set``, ``kept``, or ``detected`` from
    ``texts()``, read only then), a note for the corpus status, and warnings for what this machine lacks
    for it (analysis or OCR data) and what stays English."""
    if asked:
        code, how, note = asked, "set", f"{LANGUAGES[asked].name} ({asked}): set with --language"
    elif kept:
        code, how, note = kept["code"], "kept", str(kept.get("note") or kept["code"])
    else:
        detection = detect_language(texts())
        code, how, note = detection.code, "detected", detection.describe() + "; `madqa index --language` sets it"
    warnings = [f"{LANGUAGES[code].name} has no {what} here: search "
                f"{'keeps every word' if what == 'stop words' else 'matches words only as written'}"
                for what in LANGUAGES[code].analysis_gaps]
    if ocr_note:
        warnings.append(ocr_note)
    if code != DEFAULT:
        warnings.append(f"the drift strategy's thesaurus and the offline reader's question words are English only; "
                        f"with {LANGUAGES[code].name} pages they add nothing")
    return {"code": code, "how": how, "note": note, "warnings": warnings}
