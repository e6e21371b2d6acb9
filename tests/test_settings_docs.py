"""What the README and docs/space.md say about settings, limits and links is what the code holds: every
``MADQA_*`` variable in one table (the README's Settings, or space.md's public-Space table) with its default,
space.md's fixed limits equal to the constants, and every link to a section of a page finds it."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

from madqa.settings import Settings
from tests.conftest import REPO

README = REPO / "README.md"
SPACE = REPO / "docs" / "space.md"
TABLES = ((README, "## Settings"), (SPACE, "## Running a public Space: secrets and limits"))
MEANT_NOT_WRITTEN = {"MADQA_EMBED_THREADS"}  # a default of 0 documented as what it means: the CPUs, at most 4


def section(path: Path, heading: str) -> str:
    text = path.read_text(encoding="utf-8")
    assert f"\n{heading}\n" in text, f"{path.name} lost its section {heading!r}"
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def documented() -> dict[str, tuple[str, str]]:
    """variable -> (its default as the table writes it, the file of the table)."""
    found: dict[str, tuple[str, str]] = {}
    for path, heading in TABLES:
        for line in section(path, heading).splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not line.startswith("| `MADQA_") or len(cells) < 3:
                continue
            names = re.findall(r"`(MADQA_\w+)`", cells[0])
            defaults = [d.strip().strip("`") for d in cells[1].split(" / ")]
            if len(defaults) != len(names):
                defaults = [cells[1].strip("`")] * len(names)
            for name, default in zip(names, defaults, strict=True):
                assert name not in found, f"{name} is in two tables: {found[name][1]} and {path.name}"
                found[name] = (default, path.name)
    return found


def written(value: object, cell: str) -> bool:
    if isinstance(value, bool):
        return cell.lower() in (("1", "true") if value else ("0", "false"))
    if isinstance(value, (int, float)):
        try:
            return float(cell.replace(",", "")) == float(value)
        except ValueError:
            return False
    if value in ("", None):
        return cell.startswith("—")
    return cell == str(value)


def test_every_setting_is_in_one_table_with_its_default() -> None:
    tables = documented()
    for f in dataclasses.fields(Settings):
        env = f.metadata.get("env")
        if not env:
            continue
        assert env in tables, f"{env} is in neither the README's Settings nor space.md's public-Space table"
        cell, where = tables[env]
        if f.default is dataclasses.MISSING or env in MEANT_NOT_WRITTEN:
            continue
        assert written(f.default, cell), f"{where} gives {env} the default {cell!r}; the code has {f.default!r}"
    known = {f.metadata.get("env") for f in dataclasses.fields(Settings)}
    assert not set(tables) - known, f"documented but not settings: {sorted(set(tables) - known)}"


def constants(module: str) -> dict[str, object]:
    tree = ast.parse((REPO / module).read_text(encoding="utf-8"))
    return {t.id: ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name) and isinstance(node.value, ast.Constant)}


def test_the_fixed_limits_are_the_codes() -> None:
    sessions, questions = constants("madqa/ui/sessions.py"), constants("madqa/evaluation/questions.py")
    evaluate, build, context = (constants(f"madqa/ui/{m}.py") for m in ("evaluate_run", "build", "context"))
    budget, size = constants("madqa/evaluation/file_budget.py"), constants("madqa/ui/request_size.py")
    expected = (f"{sessions['MAX_UPLOAD_FILES']} PDFs of at most {sessions['MAX_UPLOAD_MB']} MB and "
                f"{sessions['MAX_SESSION_MB']} MB in all per session; question files\n  of at most "
                f"{questions['MAX_FILE_MB']} MB (Parquet: {budget['MAX_ROWS']:,} rows, "
                f"{questions['MAX_PARQUET_UNCOMPRESSED_MB']} MB unpacked) and {questions['MAX_QUESTION_CHARS']:,} "
                f"characters a question, {evaluate['MAX_EVAL_QUESTIONS']:,}\n  questions an evaluation; "
                f"question and prediction files of at most {budget['MAX_ROWS']:,} rows, {budget['MAX_LINE_MB']} "
                f"MB a line and {budget['MAX_DECODED_MB']} MB\n  decoded, counted as they are read, not as they "
                f"declare; a chat history of at most {size['MAX_HISTORY_MESSAGES']:,} messages,\n  "
                f"{size['MAX_MESSAGE_CHARS']:,} characters a message and {size['MAX_HISTORY_CHARS']:,} in all, and "
                f"{size['MAX_EVENT_MB']} MB a request; {context['AGENT_CONCURRENCY']} questions answered at once\n"
                f"  and {build['QUEUE_SIZE']} queued")
    assert expected in section(SPACE, "## Running a public Space: secrets and limits")


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces as -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_to_sections_find_them() -> None:
    for page in (README, SPACE):
        for target, fragment in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", page.read_text(encoding="utf-8")):
            linked = (page.parent / target).resolve() if target else page
            assert linked.is_file(), f"{page.name} links to {target}, which is missing"
            headings = [anchor(h) for h in re.findall(r"^#+ (.+)$", linked.read_text(encoding="utf-8"), re.M)]
            assert fragment in headings, f"{page.name} links to {target or page.name}#{fragment}: no such section"
