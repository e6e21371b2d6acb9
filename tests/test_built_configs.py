"""Configs built in the browser: rebuilt from the registry and re-checked by the web policy on the server,
whatever the table sent holds; and written as TOML files ``madqa run --config`` reads back equal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from madqa.plugins import Component, collect, get_plugin_manager
from madqa.settings import Settings, list_configs, load_config
from madqa.ui.built_configs import (
    HEADERS,
    MAX_BUILT,
    build_config,
    config_file_name,
    config_toml,
    specs_from_table,
    table_row,
    unavailable_parts,
)
from madqa.ui.policy import Refused, WebPolicy
from tests.test_ui_api import client, provider, pytestmark, server  # noqa: F401 - the app fixture, its warning filters

REGISTRY = collect(get_plugin_manager(entry_points=False))
POLICY = WebPolicy.from_settings(Settings(), registry=REGISTRY)
CONFIGS = POLICY.offered_configs(list_configs())


def built(**spec: Any) -> Any:
    return build_config({"base": "offline", **spec}, CONFIGS, REGISTRY, POLICY)


def test_parts_and_limits_make_a_named_config_of_the_registered_parts() -> None:
    config = built(retriever="tantivy", top_k="3", max_steps=4.0, image_budget_mp="0.8",
                   options='retriever.analyzer="stemming"')
    assert (config.retriever, config.top_k, config.max_steps, config.image_budget_px) == ("tantivy", 3, 4, 800_000)
    assert config.options == {"retriever": {"analyzer": "stemming"}}
    assert config.name.startswith("offline[") and "retriever=tantivy" in config.name and "top_k=3" in config.name
    assert "Built in the madqa web app" in config.description  # not the preset's "over Whoosh BM25"
    assert built() == CONFIGS["offline"]  # nothing changed: the preset itself


@pytest.mark.parametrize(("spec", "why"), [
    ({"retriever": "nope"}, "not offered"),
    ({"retriever": "x" * 5000}, "at most 200"),
    ({"reranker": "../../etc/passwd"}, "not offered"),
    ({"backend": "scripted"}, "not offered"),  # test-only: reads scripts given by the caller
    ({"backend": "litellm"}, "name the model"),
    ({"base": "no-such-preset"}, "not a config offered here"),
    ({"base": 3}, "must be text"),
    ({"top_k": 51}, "outside 1..50"),
    ({"top_k": 0}, "outside 1..50"),
    ({"top_k": "1e9"}, "outside 1..50"),
    ({"top_k": 2.5}, "whole number"),
    ({"top_k": True}, "must be a number"),
    ({"top_k": "nan"}, "finite"),
    ({"top_k": "inf"}, "finite"),
    ({"top_k": [3]}, "finite number"),
    ({"max_steps": 31}, "outside 1..30"),
    ({"max_steps": -1}, "outside 1..30"),
    ({"image_budget_mp": 100}, "outside 100,000..6,000,000"),
    ({"image_budget_mp": "0.01"}, "outside 100,000..6,000,000"),
    ({"options": "retriever.index_dir=\"/etc\""}, "unknown option index_dir"),
    ({"options": "backend.api_base=\"http://169.254.169.254\""}, "only the retriever's"),
    ({"options": "context.images_kept=99"}, "only the retriever's"),
    ({"options": "retriever.analyzer=\"klingon\""}, "must be one of"),
    ({"options": "retriever.ranking=\"or\""}, "cannot be set in the web app"),  # declared, not visitor-safe
    ({"retriever": "hybrid", "options": "retriever.depth=5000"}, "outside what the web app allows"),
    ({"options": "retriever.analyzer=stemming\n" * 200}, "at most 1000"),
    ({"options": {"retriever": {"analyzer": "stemming"}}}, "must be text"),
    ({"options": "not an option"}, "PART.KEY=VALUE"),
    ({"model": "offline\x00"}, "printable"),
])
def test_hostile_specs_are_refused_with_the_reason(spec: dict[str, Any], why: str) -> None:
    with pytest.raises(Refused, match=why.replace(".", r"\.").replace("(", r"\(")):
        built(**spec)


def test_an_unavailable_part_is_refused_and_listed_not_offered() -> None:
    registry = collect(get_plugin_manager(entry_points=False))
    tantivy = registry.components[("retriever", "tantivy")]
    registry.components[("retriever", "tantivy")] = Component(**{**tantivy.__dict__,
                                                                 "unavailable": "needs the package tantivy"})
    with pytest.raises(Refused, match="unavailable here: needs the package tantivy"):
        build_config({"base": "offline", "retriever": "tantivy"}, CONFIGS, registry, POLICY)
    assert "retriever tantivy: needs the package tantivy" in unavailable_parts(registry)
    assert "tantivy" not in registry.names("retriever")  # what the builder's menu offers


def test_a_table_from_a_browser_or_an_api_caller_is_read_row_by_row() -> None:
    config = built(retriever="tantivy", top_k=3)
    frame = pd.DataFrame([table_row(config, "offline", {"options": ""})], columns=HEADERS)
    (spec,) = specs_from_table(frame)
    assert build_config(spec, CONFIGS, REGISTRY, POLICY) == config
    forged = {"headers": HEADERS, "data": [["anything", "offline", "offline", "offline", "whoosh", "none",
                                             "passthrough", 3, 10, "", ""]]}
    assert build_config(specs_from_table(forged)[0], CONFIGS, REGISTRY, POLICY).name == "offline[top_k=3]"  # name ignored
    assert specs_from_table(pd.DataFrame(columns=HEADERS)) == []
    with pytest.raises(Refused, match="unknown column"):
        specs_from_table({"headers": ["api_key"], "data": [["sk-x"]]})
    with pytest.raises(Refused, match=f"at most {MAX_BUILT}"):
        specs_from_table({"headers": HEADERS, "data": [["x", "offline"] + [""] * 9] * (MAX_BUILT + 1)})
    with pytest.raises(Refused, match="a table"):
        specs_from_table("DROP TABLE")


def test_the_toml_file_is_read_back_equal_by_madqa_run(tmp_path: Path) -> None:
    config = built(retriever="hybrid", top_k=4, image_budget_mp=0.5,
                   options='retriever.depth=10\nretriever.bm25_weight=0.5\nquery_strategy.threshold=0.4',
                   query_strategy="drift")
    path = tmp_path / config_file_name(config)
    path.write_text(config_toml(config, "built in a test\nsecond line"), encoding="utf-8")
    assert "/" not in path.name and path.suffix == ".toml"
    assert load_config(str(path)) == config


def test_odd_text_survives_the_toml_round_trip(tmp_path: Path) -> None:
    config = CONFIGS["offline"].with_overrides(name='odd "name" \\ with\ttab \x7f and é', model="m\u2028x")
    path = tmp_path / "odd.toml"
    path.write_text(config_toml(config), encoding="utf-8")
    assert load_config(str(path)) == config


def test_the_evaluate_endpoint_rechecks_every_built_config(server: Any) -> None:  # noqa: F811
    from gradio_client.exceptions import AppError

    row = ["offline[top_k=3]", "offline", "offline", "offline", "tantivy", "none", "passthrough", 3, 10, "", ""]
    result = client(server).predict(question_file=None, configs=[], built_configs={"headers": HEADERS, "data": [row]},
                                    limit=2, workers=1, api_name="/evaluate")
    assert "Ran 2 questions" in result[0] and "through 1 config " in result[0]
    scores = result[-1]
    assert scores["data"][0][0] == "offline[retriever=tantivy,top_k=3]"  # the name is the server's, not the row's
    for hostile, why in ((dict(enumerate(row)) | {7: 10_000}, "outside 1..50"),
                         (dict(enumerate(row)) | {2: "scripted"}, "not offered"),
                         (dict(enumerate(row)) | {10: 'backend.api_base="http://10.0.0.1"'}, "only the retriever's")):
        with pytest.raises(AppError, match=f"Built config 1: .*{why}"):
            client(server).predict(question_file=None, configs=["offline"],
                                   built_configs={"headers": HEADERS, "data": [list(hostile.values())]},
                                   api_name="/evaluate")


def test_a_built_config_that_cannot_reach_its_model_is_not_run_and_not_scored(server: Any,  # noqa: F811
                                                                               monkeypatch: Any) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    row = ["", "offline", "litellm", "openai/gpt-4.1-mini", "tantivy", "none", "passthrough", 3, 10, "", ""]
    result = client(server).predict(question_file=None, configs=["offline"],
                                    built_configs={"headers": HEADERS, "data": [row]}, limit=2, workers=1,
                                    api_name="/evaluate")
    assert "not run, needs a key" in result[0] and "OPENAI\\_API\\_KEY is not set" in result[0]
    assert [r[0] for r in result[-1]["data"]] == ["offline"]  # no row of 0.0 for the config that never ran


def test_the_policy_caps_what_a_visitor_changes_but_not_the_operators_own_config() -> None:
    offline = CONFIGS["offline"]
    for change in ({"max_steps": 40}, {"top_k": 50, "image_budget_px": 8_000_000}):
        with pytest.raises(Refused, match="what the web app allows"):
            POLICY.check_config(offline.with_overrides(**change), offline)  # Ask's and Compare's panels too
    generous = offline.with_overrides(name="operator", max_steps=60)  # a preset the operator wrote
    POLICY.check_config(generous, generous)
    POLICY.check_config(generous.with_overrides(top_k=3), generous)  # max_steps is the operator's, unchanged


def test_the_add_config_endpoint_checks_what_it_adds(server: Any) -> None:  # noqa: F811
    from gradio_client.exceptions import AppError

    def add(table: Any, **changes: Any) -> Any:
        fields = {"base": "offline", "backend": "offline", "model": "offline", "retriever": "whoosh", "reranker": "none",
                  "query_strategy": "passthrough", "top_k": 5, "max_steps": 10, "image_budget_mp": 1.2, "options": "",
                  **changes}
        return client(server).predict(*fields.values(), table, "", "", api_name="/eval_add_config")

    empty = {"headers": HEADERS, "data": []}
    table, files, note, listing = add(empty, top_k=3)
    assert "<b>offline[top_k=3]</b>" in listing and "top_k 3" in listing
    assert "Added" in note and [r[0] for r in table["data"]] == ["offline[top_k=3]"] and len(files) == 1
    assert add(table, top_k=3)[2].endswith("is already in the table.")
    with pytest.raises(AppError, match="greater than maximum value 50"):  # Gradio's slider refuses first
        add(table, top_k=99)
    with pytest.raises(AppError, match="Not added: backend options cannot be set here"):
        add(table, options='backend.api_base="http://169.254.169.254"')
    with pytest.raises(AppError, match="Not added: .*option retriever.analyzer='klingon' is outside|must be one of"):
        add(table, options='retriever.analyzer="klingon"')
    full = {"headers": HEADERS, "data": [table["data"][0]] * MAX_BUILT}
    with pytest.raises(AppError, match=f"at most {MAX_BUILT}"):
        add(full, top_k=4)


def test_a_config_that_cannot_start_is_said_not_run_and_the_others_keep_their_scores(server: Any,  # noqa: F811
                                                                                       monkeypatch: Any) -> None:
    import madqa.ui.evaluate_run as evaluate_tab  # where the Evaluate tab runs its configs
    from madqa.errors import PluginError

    real = evaluate_tab.run_batch

    def failing_for_tantivy(questions: Any, corpus: Any, config: Any, *args: Any, **kwargs: Any) -> Any:
        if config.retriever == "tantivy":
            raise PluginError("retriever tantivy: its index cannot be opened")
        return real(questions, corpus, config, *args, **kwargs)

    monkeypatch.setattr(evaluate_tab, "run_batch", failing_for_tantivy)
    rows = [["", "offline", "offline", "offline", r, "none", "passthrough", 3, 10, "", ""] for r in ("tantivy", "whoosh")]
    result = client(server).predict(question_file=None, configs=[], built_configs={"headers": HEADERS, "data": rows},
                                    limit=2, workers=1, api_name="/evaluate")
    assert "offline\\[retriever=tantivy,top\\_k=3\\]: not run, it could not start." in result[0]
    assert "its index cannot be opened" in result[0] and "through 1 config " in result[0]
    assert [r[0] for r in result[-1]["data"]] == ["offline[top_k=3]"]  # the failed one has no row, no 0.0
    with pytest.raises(Exception, match="its index cannot be opened"):  # nothing ran at all: an error, no report
        client(server).predict(question_file=None, configs=[], built_configs={"headers": HEADERS, "data": rows[:1]},
                               limit=1, api_name="/evaluate")
