"""Earlier turns of a conversation -> what the next question carries.

Pure functions shared by Ask, ``madqa chat`` and multi-turn runs. A follow-up ("and in 2023?")
reaches the agent in one of two forms:

- a backend that reads the conversation (the ``reads_conversation`` capability, ``madqa.protocols``: a language
  model) gets a short text of the earlier turns (questions, answers, cited pages with their
  quotes; bounded by ``MAX_TURNS`` and ``MAX_CONTEXT_CHARS``) before the follow-up as typed; the
  cited pages are named by their labels, so ``show_pages`` can bring them back;
- a backend that does not (the offline baseline reads only the first user message) gets a
  standalone question: the earlier question with the follow-up's changes, by a small rule-based
  rewrite (``standalone_question``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from madqa.context import clip
from madqa.types import AnswerStep, PageRef

MAX_TURNS = 4  # earlier turns in the context text
MAX_CONTEXT_CHARS = 2_000  # the context text's most characters (older turns dropped first)
MAX_KEPT = 20  # turns a conversation keeps (more are never needed: the context takes MAX_TURNS)
QUOTE_CHARS = 160
ANSWER_CHARS = 300
CONTEXT_HEAD = "Earlier in this conversation (oldest first):"
CONTEXT_TAIL = ("The next message is a follow-up question; it may refer to these turns. The pages cited above "
                "can be seen again with show_pages.")

# a code such as WF-2024-0817 or INV/88; a year; any other number
_CODE = re.compile(r"\b(?=[\w./-]*\d)(?=[\w./-]*[A-Za-z])[A-Za-z0-9]+(?:[-/.][A-Za-z0-9]+)+\b|\b[A-Z]{2,}\d+\b")
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)*\b")
_NAME = re.compile(r"\b[A-Z][\w&'’-]*(?:\s+[A-Z][\w&'’-]*)*")  # capitalized words in a row
_WORD = re.compile(r"[\w'’-]+", re.UNICODE)
_LEADS = re.compile(r"^\s*(?:(?:and|but|so|also|then|ok|okay)\b[\s,]*)*(?:what|how)\s+about\b|"
                    r"^\s*(?:(?:and|but|so|also|then|ok|okay)\b[\s,]*)+", re.IGNORECASE)
_FILLER = frozenset("""a an the in for of on at to by and or but so also then what how about same that this
those these it its one ones same too as well again please ok okay is was were are""".split())
_WH = frozenset("what which who whom whose when where why how does do did is are was were can could "
                "list name give find show".split())
STANDALONE_WORDS = 6  # a question this long that starts like a question is taken as standalone


@dataclass(frozen=True)
class ChatTurn:
    """One earlier turn: the question as typed, as it stood on its own, and its answer with citations."""

    question: str
    standalone: str
    answer: tuple[str, ...] = ()
    citations: tuple[PageRef, ...] = ()
    quotes: tuple[str | None, ...] = ()
    failed: bool = False
    collection: str = ""  # the collection it searched, when a face offers several ('': not said)


def add_turn(turns: Sequence[ChatTurn], question: str, step: AnswerStep | None) -> tuple[ChatTurn, ...]:
    """The conversation with ``question`` and its answer (None: it never got one) appended, at most ``MAX_KEPT``."""
    turn = ChatTurn(question, standalone_question(turns, question),
                    tuple(step.answer) if step else (), tuple(step.citations) if step else (),
                    tuple(step.quotes) if step else (), failed=step is None or step.failure is not None)
    return (*turns, turn)[-MAX_KEPT:]


@dataclass(frozen=True)
class NextQuestion:
    """What the agent is given for a question: the text it is asked and the context before it (or None)."""

    question: str
    context: str | None
    standalone: str  # the question as it stands alone (searches and rerankers read this)


def next_question(turns: Sequence[ChatTurn], question: str, reads_context: bool) -> NextQuestion:
    """The follow-up as typed with the context (a backend that reads it), or the standalone question alone."""
    standalone = standalone_question(turns, question)
    if not turns:
        return NextQuestion(question, None, question)
    if reads_context:
        return NextQuestion(question, conversation_context(turns), standalone)
    return NextQuestion(standalone, None, standalone)


# --- the context text -----------------------------------------------------------------------------


def conversation_context(turns: Sequence[ChatTurn], max_turns: int = MAX_TURNS,
                         max_chars: int = MAX_CONTEXT_CHARS) -> str:
    """The earlier turns as text: the last ``max_turns``, older ones dropped until it fits ``max_chars``."""
    blocks = [_turn_text(n, t) for n, t in enumerate(turns, 1)][-max_turns:] if max_turns > 0 else []
    while blocks:
        text = "\n".join([CONTEXT_HEAD, *blocks, CONTEXT_TAIL])
        if len(text) <= max_chars or len(blocks) == 1:
            return text if len(text) <= max_chars else clip(text, max_chars)
        blocks.pop(0)
    return ""


def _turn_text(n: int, turn: ChatTurn) -> str:
    if turn.failed:
        said = "(no answer: the run failed)"
    elif turn.answer:
        said = clip(" | ".join(turn.answer), ANSWER_CHARS)
    else:
        said = "(no answer found in the documents)"
    lines = [f"Q{n}: {clip(turn.question, ANSWER_CHARS)}", f"A{n}: {said}"]
    for k, ref in enumerate(turn.citations):
        quote = turn.quotes[k] if k < len(turn.quotes) else None
        lines.append(f"  cited {ref.label()}" + (f' — "{clip(quote, QUOTE_CHARS)}"' if quote else ""))
    return "\n".join(lines)


# --- the standalone question ----------------------------------------------------------------------


def standalone_question(turns: Sequence[ChatTurn], follow_up: str) -> str:
    """The follow-up as a question of its own: the earlier question with what the follow-up changes.

    A follow-up that reads as a full question stays as it is. Otherwise the codes, years, other
    numbers and names it gives replace those of the same kind in the earlier question (the last
    of each kind); words left over are appended. "What was the revenue in 2024?" + "and in 2023?"
    -> "What was the revenue in 2023?"."""
    follow = " ".join(follow_up.split())
    base = turns[-1].standalone if turns else ""
    if not base or _stands_alone(follow):
        return follow
    rest = _LEADS.sub("", follow).strip(" ?.!,;:")
    out, unplaced = base, []
    for pattern in (_CODE, _YEAR, _NUMBER):
        given = [m.group(0) for m in pattern.finditer(rest)]
        rest = pattern.sub(" ", rest)
        if given and pattern.search(out):
            out = _replace_last(out, pattern, given)
        else:
            unplaced += given
    names = [m.group(0) for m in _NAME.finditer(rest) if m.group(0).lower() not in _FILLER
             and not m.group(0).isupper()]  # an acronym (EBIT, VAT) is a term asked about, not a name
    known = [m for m in _NAME.finditer(out) if m.start() > 0 and m.group(0).lower() not in _FILLER]
    if names and known:
        last = known[-1]
        out = out[:last.start()] + names[-1] + out[last.end():]
        rest = rest.replace(names[-1], " ")
    extra = unplaced + [w for w in _WORD.findall(rest) if w.lower() not in _FILLER and w.lower() not in out.lower()]
    if extra:
        stem = out.rstrip(" ?.!")
        out = f"{stem} ({' '.join(extra)})?" if stem else " ".join(extra)
    return out


def _stands_alone(text: str) -> bool:
    words = _WORD.findall(text)
    return len(words) >= STANDALONE_WORDS and words[0].lower() in _WH and not _LEADS.match(text)


def _replace_last(text: str, pattern: re.Pattern[str], given: list[str]) -> str:
    """``text`` with its last matches of ``pattern`` replaced by ``given`` (in order, as many as given)."""
    found = list(pattern.finditer(text))
    targets = found[-len(given):] if len(given) <= len(found) else found
    values = given[-len(targets):]
    for match, value in sorted(zip(targets, values, strict=True), key=lambda mv: -mv[0].start()):
        text = text[:match.start()] + value + text[match.end():]
    return text
