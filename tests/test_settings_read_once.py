"""Every ``MADQA_*`` variable is read once, by ``Settings.from_env`` (issue 26, point 2).

A variable read elsewhere (``MADQA_SEARCH_TIMEOUT_S`` on every search, ``MADQA_EMBED_THREADS`` at import,
``MADQA_MILVUS_URI``/``_TOKEN`` at ingest) escaped the start-up check: a bad value surfaced mid-question,
as an observation the model was told about, and the question ended as a refusal.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from madqa.errors import SettingsError
from madqa.settings import Settings

REPO = Path(__file__).resolve().parent.parent
SOURCES = [*sorted((REPO / "madqa").rglob("*.py")), *sorted((REPO / "madqa_plugins").rglob("*.py")), REPO / "app.py"]


def madqa_reads(source: str) -> list[tuple[int, str]]:
    """(line, variable) of each ``MADQA_*`` name looked up in a mapping or the environment: ``X.get("MADQA_...")``,
    ``X["MADQA_..."]``, ``os.getenv(...)``, ``"MADQA_..." in X``, the name also given through a constant."""
    tree = ast.parse(source)
    constants = {t.id: n.value.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                 for t in n.targets if isinstance(t, ast.Name)}

    def name(node: ast.AST) -> str | None:
        value = node.value if isinstance(node, ast.Constant) else constants.get(getattr(node, "id", ""))
        return value if isinstance(value, str) and value.startswith("MADQA_") else None

    found = []
    for node in ast.walk(tree):
        keys: list[ast.AST] = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                and node.func.attr in ("get", "getenv", "pop", "setdefault"):
            keys = [node.args[0]]
        elif isinstance(node, ast.Subscript):
            keys = [node.slice]
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            keys = [node.left]
        found += [(node.lineno, n) for key in keys if (n := name(key))]
    return found


def test_the_meta_test_sees_the_reads_it_is_meant_to_catch() -> None:
    caught = madqa_reads('import os\nENV = "MADQA_X"\na = os.environ.get("MADQA_A")\nb = os.getenv(ENV)\n'
                         'c = os.environ["MADQA_C"]\nd = "MADQA_D" in os.environ\ne = "say MADQA_E"\n')
    assert [v for _, v in caught] == ["MADQA_A", "MADQA_X", "MADQA_C", "MADQA_D"]


def test_no_madqa_variable_is_read_outside_settings() -> None:
    reads = {f"{path.relative_to(REPO)}:{line}": name for path in SOURCES if path.name != "settings.py"
             for line, name in madqa_reads(path.read_text(encoding="utf-8"))}
    assert reads == {}, "read these through madqa.settings.Settings (a field with metadata env=...)"


def test_every_settings_field_names_its_variable() -> None:
    from dataclasses import fields

    names = [f.metadata.get("env", "") for f in fields(Settings)]
    assert all(n.startswith("MADQA_") for n in names) and len(set(names)) == len(names)
    assert {"MADQA_SEARCH_TIMEOUT_S", "MADQA_EMBED_THREADS", "MADQA_MILVUS_URI", "MADQA_MILVUS_TOKEN"} <= set(names)


@pytest.mark.parametrize("variable,value,words", [
    ("MADQA_SEARCH_TIMEOUT_S", "abc", "expects a number, got 'abc'"),
    ("MADQA_EMBED_THREADS", "two", "expects a whole number, got 'two'"),
    ("MADQA_EMBED_THREADS", "-1", "between 0"),
    ("MADQA_IMAGE_BUDGET", "lots", "expects a whole number"),
])
def test_a_bad_value_fails_at_start_up_naming_the_variable(variable: str, value: str, words: str) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(env={variable: value})
    assert variable in str(caught.value) and words in str(caught.value)


def test_the_milvus_token_is_never_shown() -> None:
    settings = Settings.from_env(env={"MADQA_MILVUS_URI": "http://milvus:19530", "MADQA_MILVUS_TOKEN": "root:s3cret"})
    assert settings.milvus_uri == "http://milvus:19530" and settings.milvus_token == "root:s3cret"
    assert "s3cret" not in repr(settings)
