"""Multi-turn question sets: rows that share a ``conversation_id`` run in ``turn`` order, as one conversation.

Each turn is still its own question (its own prediction row, scored alone); what a turn adds is the
conversation before it (``madqa.conversation``): the earlier turns' questions, answers and cited pages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from madqa.conversation import ChatTurn, add_turn
from madqa.types import AnswerStep, PageRef

Unit = list[dict[str, Any]]  # questions answered in order by one agent: one question, or a conversation's turns


def conversation_units(questions: Sequence[Any]) -> list[Unit]:
    """The questions as units of work, in the order each unit's first question comes: a question without a
    ``conversation_id`` alone, a conversation's turns together sorted by ``turn``."""
    units: list[Unit] = []
    where: dict[str, Unit] = {}
    for question in questions:
        cid = question.get("conversation_id") if isinstance(question, dict) else None
        if cid is None:
            units.append([question])
        elif str(cid) in where:
            where[str(cid)].append(question)
        else:
            where[str(cid)] = [question]
            units.append(where[str(cid)])
    for unit in units:
        unit.sort(key=_turn)
    return units


def _turn(question: Any) -> int:
    turn = question.get("turn") if isinstance(question, dict) else None
    return turn if isinstance(turn, int) and not isinstance(turn, bool) else 0


def conversation_problems(record: dict[str, Any], where: str) -> list[str]:
    """What is wrong with a question's ``conversation_id`` and ``turn`` (both or neither; ``turn`` from 1);
    an integer ``conversation_id`` becomes its decimal string, as an id does."""
    cid, turn = record.get("conversation_id"), record.get("turn")
    if cid is None and turn is None:
        return []
    if isinstance(cid, int) and not isinstance(cid, bool):
        record["conversation_id"] = cid = str(cid)
    problems = []
    if not isinstance(cid, str) or not cid.strip():
        problems.append(f"{where}: 'conversation_id' must be a non-empty string (with 'turn')")
    if isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
        problems.append(f"{where}: 'turn' must be a whole number from 1 (with 'conversation_id'), got {turn!r}")
    return problems


def turns_after(turns: Sequence[ChatTurn], question: dict[str, Any], row: dict[str, Any]) -> tuple[ChatTurn, ...]:
    """The conversation with one more turn, read back from its prediction row (also a row kept by ``--resume``)."""
    cited = [c for c in row.get("citations") or [] if isinstance(c, dict)
             and isinstance(c.get("file"), str) and isinstance(c.get("page"), int)]
    step = AnswerStep(0, tuple(str(a) for a in row.get("answer") or []),
                      tuple(PageRef(c["file"], c["page"]) for c in cited),
                      quotes=tuple(c.get("quote") if isinstance(c.get("quote"), str) else None for c in cited),
                      failure=str(row["error"]) if row.get("error") else None)
    return add_turn(turns, str(question.get("question") or ""), None if step.failure else step)


def conversation_fields(question: Any) -> dict[str, Any]:
    """``conversation_id`` and ``turn`` for the row of a turn (nothing for a question on its own)."""
    if not isinstance(question, dict) or question.get("conversation_id") is None:
        return {}
    return {"conversation_id": question["conversation_id"], "turn": question.get("turn")}
