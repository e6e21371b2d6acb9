"""Answer types codes for the offline reader: identifiers and reference numbers, versions, command-line
option flags, file names and paths, and programming identifiers (``set_terminal``, ``\\SIunit``)."""

from __future__ import annotations

import re

CODE_RE = re.compile(r"(?<![\w-])(?:\d+(?:\.\d+){2,}|(?=[\w/.\-#]*\d)(?=[\w/.\-#]*[A-Za-z\-/#])[A-Za-z0-9][\w/.\-#]{1,30}"
                     r"[A-Za-z0-9])(?![\w-])")
VERSION_RE = re.compile(r"(?<![\w.])(?:[vV]\s?)?\d+(?:\.\d+){1,3}(?:[a-z]\d*|[-+~](?:rc|beta|alpha|dev)\d*)?"
                        r"(?![\w.]*\d)(?!\.\w)")
FLAG_RE = re.compile(r"(?<![\w\-/])--?[A-Za-z][\w\-]*(?:=[\w\-./]+)?(?![\w\-])")
_EXT = (r"pdf|txt|ly|ily|asy|tex|sty|cls|bib|m|c|h|cc|cpp|hh|py|sh|dat|gp|gnu|plt|png|jpe?g|eps|ps|svg|xml|html?|json|"
        r"cfg|conf|ini|log|mac|dem|mid|midi|oct|mat|csv|gz|tar|zip|el|rc|in|mk|ac|am|texi|info|1")
FILE_RE = re.compile(rf"(?<![\w/~.-])(?:(?:~|\.{{1,2}})?/(?:[\w.+-]+/)*[\w.+-]+|[\w+-][\w.+-]*\.(?:{_EXT}))(?![\w/])")
IDENT_RE = re.compile(r"(?<![\w\\-])(?:\\[A-Za-z@]+|[a-z][a-z0-9]*(?:[_-][a-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*|"
                      r"[a-z][a-z0-9]*(?=\s*\())(?![\w-])")

SPAN_RES = {"code": CODE_RE, "version": VERSION_RE, "flag": FLAG_RE, "file": FILE_RE, "ident": IDENT_RE}
