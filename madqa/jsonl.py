"""JSON that is always writable: lone surrogates in text never stop a prediction or trace from being saved.

``json.loads('"\\ud800"')`` gives a str that cannot be encoded as UTF-8, so a question file holding
that escape used to kill ``run`` (and every ``--resume`` after it) with ``UnicodeEncodeError``.
"""

from __future__ import annotations

import json
import re
from typing import Any

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def dumps(obj: Any, **kwargs: Any) -> str:
    """``json.dumps(obj, ensure_ascii=False)``, or with ``\\uXXXX`` escapes when some text holds a lone
    surrogate: valid UTF-8 either way, and the row reads back exactly as it was."""
    text = json.dumps(obj, ensure_ascii=False, **kwargs)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, ensure_ascii=True, **kwargs)
    return text


def clean_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so it can be shown, sent and encoded."""
    return _LONE_SURROGATE.sub("\ufffd", text)
