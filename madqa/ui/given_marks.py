"""What a session may see highlighted: only the quotes, answer words and closest-passage lines its own answers
gave it. A citation's value comes back from the browser, and a raw client can send any quote through
``/gradio_api/queue/join``: drawn, each new one is a new 2.4 MP image on disk (and a copy in Gradio's cache), so
a client that made up quotes could fill the disk. Here every mark an answer hands out is recorded under the
session's token; a pick whose marks were not handed out is shown as the plain page (one image per page,
shared by every visitor), and each session's record is capped (``PER_SESSION``), so the highlighted images a
session can cause are bounded by the answers it was given."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from madqa.types import PageRef
from madqa.ui.messages import MARK_CHARS

PER_SESSION = 200  # marks kept per session (an answer hands out one per cited page or closest passage)
SESSIONS = 5000  # sessions remembered (the least recently answered is forgotten first)


def mark_key(corpus_key: str, ref: PageRef, quotes: Sequence[str], answers: Sequence[str]) -> str:
    """One key for a page and its marks, cut as a citation value cuts them (``citation_value``)."""
    cut = [[str(q)[:MARK_CHARS] for q in list(quotes)[:11] if str(q).strip()],
           [str(a)[:MARK_CHARS] for a in list(answers)[:10] if str(a).strip()]]
    raw = json.dumps([corpus_key, ref.file, int(ref.page), cut], ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class GivenMarks:
    """The marks each session was given, by session token: bounded per session and in sessions."""

    def __init__(self, per_session: int = PER_SESSION, sessions: int = SESSIONS) -> None:
        self.per_session, self.sessions = per_session, sessions
        self._given: OrderedDict[str, OrderedDict[str, None]] = OrderedDict()
        self._lock = threading.Lock()

    def give(self, token: str | None, key: str) -> None:
        if not token:
            return
        with self._lock:
            marks = self._given.pop(token, None) or OrderedDict()
            self._given[token] = marks
            marks.pop(key, None)
            marks[key] = None
            while len(marks) > self.per_session:
                marks.popitem(last=False)
            while len(self._given) > self.sessions:
                self._given.popitem(last=False)

    def given(self, token: str | None, key: str) -> bool:
        with self._lock:
            return bool(token) and key in self._given.get(token or "", ())

    def forget(self, token: str | None) -> None:
        with self._lock:
            self._given.pop(token or "", None)


def session_token(session: Any) -> str | None:
    token = session.get("token") if isinstance(session, dict) else None
    return token if isinstance(token, str) and token else None


def give_answer_marks(marks: GivenMarks, session: Any, corpus_key: str, step: Any) -> None:
    """Record the marks an answer step hands out: each citation's quote and answer words, each closest
    passage's lines (what ``citation_value`` and the cited pages' references carry)."""
    token = session_token(session)
    answers = [a for a in (getattr(step, "answer", None) or []) if isinstance(a, str)][:10]
    for n, ref in enumerate(getattr(step, "citations", ()) or ()):
        quote = step.quote_of(n)
        marks.give(token, mark_key(corpus_key, ref, [quote] if quote else [], answers))
    for passage in getattr(step, "closest_passages", ()) or ():
        marks.give(token, mark_key(corpus_key, passage.ref, list(passage.lines)[:10], []))
