"""Answer types codes for the offline reader: identifiers and reference numbers, versions, command-line
option flags, file names and paths, and programming identifiers (``set_terminal``, ``\\SIunit``,
``GNUTERM``, ``MetaPost``, ``MArray<T>``), and how code-like a span looks (``codeish``)."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

CODE_RE = re.compile(r"(?<![\w-])(?:\d+(?:\.\d+){2,}|(?=[\w/.\-#]*\d)(?=[\w/.\-#]*[A-Za-z\-/#])[A-Za-z0-9][\w/.\-#]{1,30}"
                     r"[A-Za-z0-9])(?![\w-])")
VERSION_RE = re.compile(r"(?<![\w.])(?:[vV]\s?)?\d+(?:\.\d+){1,3}(?:[a-z]\d*|[-+~](?:rc|beta|alpha|dev)\d*)?"
                        r"(?![\w.]*\d)(?!\.\w)")
FLAG_RE = re.compile(r"(?<![\w\-/])--?[A-Za-z][\w\-]*(?:=[\w\-./]+)?(?![\w\-])")
_EXT = (r"pdf|txt|ly|ily|asy|tex|sty|cls|bib|m|c|h|cc|cpp|hh|py|sh|dat|gp|gnu|plt|png|jpe?g|eps|ps|svg|xml|html?|json|"
        r"cfg|conf|ini|log|mac|dem|mid|midi|oct|mat|csv|gz|tar|tgz|zip|el|rc|in|mk|ac|am|texi|info|1|"
        r"map|def|fd|enc|tfm|vf|afm|pfb|pfa|otf|ttf|mp|mf|dtx|ins|bst|bbx|cbx|lua|pl|rb|js|css|java|R|Rd|mod|"
        r"md|rst|yaml|yml|toml|diff|patch|deb|so|bat")
FILE_RE = re.compile(rf"(?<![\w/~.-])(?:(?:~|\.{{1,2}})?/(?:[\w.+-]+/)*[\w.+-]+|[\w+-][\w.+-]*\.(?:{_EXT}))(?![\w/])")
IDENT_RE = re.compile(r"(?<![\w\\-])(?:\\[A-Za-z@]+"
                      r"|[A-Za-z]\w*<[\w ,:*]+>"  # a template: MArray<T>
                      r"|[A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z]{2}[A-Z0-9]+"  # an environment variable, a constant: GNUTERM
                      r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+"  # CamelCase: MetaPost, ColumnVector
                      r"|[a-z][a-z0-9]*(?:[_-][a-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*|"
                      r"[a-z][a-z0-9]*(?=\s*\())(?![\w-])")
# a quoted command or value ("use 'set fit maxiter <n>'"): the quoted text, not its bullet or verb
QUOTED_RE = re.compile(r"(?<![\w'])(?:'[^'\n]{2,60}'|`[^`\n]{2,60}`|\"[^\"\n]{2,60}\"|‘[^’\n]{2,60}’)(?![\w'])")
SYMBOL_RE = re.compile(r"(?<![\w\-.])[A-Za-z]{1,3}(?![\w\-])")  # a unit's or an element's symbol: Wb, cd, mol

# what a question calls a kind of file -> the extensions of such files ("which map file": .map)
FILE_KINDS = {"map": ("map",), "configuration": ("cfg", "conf", "config", "ini", "rc"), "config": ("cfg", "conf", "ini", "rc"),
              "style": ("sty",), "class": ("cls",), "definition": ("def", "fd"), "font": ("ttf", "otf", "pfb", "pfa", "tfm", "vf", "afm"),
              "metric": ("tfm", "afm"), "encoding": ("enc", "def"), "bibliography": ("bib", "bst", "bbx", "cbx"),
              "image": ("png", "jpg", "jpeg", "eps", "svg", "pdf", "ps"), "graphic": ("png", "jpg", "jpeg", "eps", "svg", "pdf", "ps"),
              "archive": ("zip", "tar", "gz", "tgz"), "script": ("sh", "py", "pl", "lua", "rb", "bat"), "log": ("log",),
              "source": ("dtx", "c", "cc", "cpp", "h", "py", "tex", "mp", "mf"), "header": ("h", "hh"), "midi": ("mid", "midi")}


def file_kind_fit(value: str, question_stems: AbstractSet[str]) -> float:
    """1 when a file's extension is of the kind the question names ("the map file": ``txr3.map``), 0.6 when
    the question names a kind and this file is of another, 1 when it names none."""
    wanted = {e for s in question_stems for e in FILE_KINDS.get(s, ())}
    wanted |= {s for s in question_stems if len(s) >= 3 and re.fullmatch(_EXT, s)}  # "which .sty file", "the tex file"
    if not wanted:
        return 1.0
    ext = value.rsplit(".", 1)[-1].lower() if "." in value else ""
    return 1.0 if ext in wanted else 0.6


SPAN_RES = {"code": CODE_RE, "version": VERSION_RE, "flag": FLAG_RE, "file": FILE_RE, "ident": IDENT_RE}


def codeish(value: str, common: AbstractSet[str]) -> float:
    """How much ``value`` looks like a name in code (1) rather than a common word (0.5): all capitals,
    CamelCase, or holding ``_ . < > \\ ( )`` or a digit count as code; a word (or hyphenated words) that
    the corpus also writes in running lower case does not."""
    if re.search(r"[_<>\\().]|\d", value) or re.search(r"[a-z][A-Z]|[A-Z]{2}", value) or \
            re.fullmatch(r"[A-Z][a-z]?", value):
        return 1.0
    parts = [p for p in re.split(r"[-\s]+", value.lower()) if p]
    if parts and all(p in common for p in parts):
        return 0.5
    return 0.8
