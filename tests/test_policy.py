"""``madqa.ui.policy``: what a web visitor may set and where a visitor's request may go.

Endpoint checks only resolve names (literal addresses, ``localhost``, or a resolver given here):
nothing is ever sent to any address.
"""

from __future__ import annotations

import pytest

from madqa.errors import SettingsError
from madqa.settings import Settings, load_config
from madqa.types import ErrorStep, SearchStep
from madqa.ui.policy import (
    ENDPOINT_FAILURE,
    Refused,
    WebPolicy,
    public_address,
    visitor_row,
    visitor_steps,
)

PRIVATE = ["127.0.0.1", "127.5.5.5", "::1", "10.1.2.3", "172.16.0.1", "192.168.0.10", "169.254.169.254",
           "fe80::1", "fd00:ec2::254", "100.64.0.1", "0.0.0.0", "::", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
           "224.0.0.1", "240.0.0.1", "255.255.255.255", "198.18.0.1", "not-an-ip"]


@pytest.mark.parametrize("address", PRIVATE)
def test_non_public_addresses_are_recognised(address: str) -> None:
    assert not public_address(address)


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"])
def test_public_addresses_are_recognised(address: str) -> None:
    assert public_address(address)


def policy(**kw: object) -> WebPolicy:
    return WebPolicy.from_settings(Settings.from_env(env={}, **kw))


def test_endpoints_are_checked_after_resolving() -> None:
    lookups: list[tuple[str, int]] = []

    def resolver(host: str, port: int) -> list[str]:  # a name that resolves to a private address
        lookups.append((host, port))
        return {"rebind.example": ["93.184.216.34", "10.0.0.7"], "public.example": ["93.184.216.34"]}[host]

    p = WebPolicy.from_settings(Settings.from_env(env={}), resolver=resolver)
    with pytest.raises(Refused, match="public address"):
        p.check_endpoint("https://rebind.example/v1")  # one private answer among public ones is enough
    p.check_endpoint("https://public.example/v1")
    assert lookups == [("rebind.example", 443), ("public.example", 443)]
    with pytest.raises(Refused, match="cannot be resolved"):
        WebPolicy.from_settings(Settings.from_env(env={}),
                                resolver=lambda h, p: (_ for _ in ()).throw(OSError("no such host"))
                                ).check_endpoint("http://nowhere.invalid/")


@pytest.mark.parametrize("base", ["http://127.0.0.1:8000/v1", "http://localhost:11434", "http://[::1]/v1",
                                  "http://169.254.169.254/latest/", "http://2130706433/",
                                  "http://10.0.0.1/v1"])
def test_private_endpoints_are_refused_unless_the_operator_allows(base: str) -> None:
    with pytest.raises(Refused, match="public address"):
        policy().check_endpoint(base)
    policy(allow_private_api_base=True).check_endpoint(base)


def test_the_servers_key_goes_only_to_its_providers_endpoint_or_the_operators_list() -> None:
    config = load_config("gpt-4.1-mini")
    p = policy(allowed_api_bases="http://127.0.0.1:8000/v1, https://llm.internal/openai")
    with pytest.raises(Refused, match="needs your own API key"):
        p.backend_options(config, "", "https://api.example.com/v1")
    assert p.backend_options(config, "", "")["max_attempts"] == 2  # the provider's own endpoint
    listed = p.backend_options(config, "", "http://127.0.0.1:8000/v1/")
    assert listed["api_base"] == "http://127.0.0.1:8000/v1/" and "api_key" not in listed
    assert p.backend_options(config, "", "https://llm.internal/openai/v1")["api_base"]
    with pytest.raises(Refused, match="public address"):  # a prefix trick is not on the list
        p.backend_options(config, "sk-own", "http://127.0.0.1:8000/v10")
    with pytest.raises(Refused, match="OpenAI-compatible"):
        p.backend_options(config.with_overrides(model="anthropic/claude-sonnet-4-5"), "sk-own",
                          "http://93.184.216.34/v1")
    own = p.backend_options(config, "sk-own", "http://93.184.216.34/v1")  # resolves to itself: nothing sent
    assert own["api_key"] == "sk-own" and own["timeout"] == 30.0


def test_models_of_providers_with_local_default_endpoints_are_refused() -> None:
    config = load_config("gpt-4.1-mini")
    for model in ("ollama/llama3", "ollama_chat/llama3", "llamafile/x", "lm_studio/x"):
        with pytest.raises(Refused, match="not offered in the web app"):
            policy().backend_options(config.with_overrides(model=model), "", "")
    assert policy(web_providers="openai,ollama_chat").backend_options(
        config.with_overrides(model="ollama_chat/llama3"), "", "")


def test_the_policy_says_whether_a_run_spends_the_servers_key() -> None:
    """Decided here, not by comparing with "litellm" in the tabs (issue 26 point 3)."""
    web, model = policy(), load_config("gpt-4.1-mini")
    assert web.spends_server_key(model, web.backend_options(model, "", ""))
    assert not web.spends_server_key(model, web.backend_options(model, "sk-own", ""))
    offline = load_config("offline")
    assert not web.spends_server_key(offline, {})
    assert web.spends_server_key(offline.with_overrides(query_strategy="llm-rewrite"), {})  # its own model call
    assert not web.spends_server_key(offline.with_overrides(query_strategy="llm-rewrite"), {"api_key": "sk-own"})


def test_an_image_budget_left_to_the_operator_is_not_a_visitors_excess() -> None:
    config = load_config("gpt-4.1-mini")
    assert config.image_budget_px is None  # MADQA_IMAGE_BUDGET decides: the operator's own setting
    policy().check_server_key_config(config)
    with pytest.raises(Refused, match="image_budget_px 3,000,000 is above 2,000,000"):
        policy().check_server_key_config(config.with_overrides(image_budget_px=3_000_000))


def test_server_keys_have_size_limits_per_question() -> None:
    config = load_config("gpt-4.1-mini")
    with pytest.raises(Refused, match="top_k 50 is above 10"):
        policy().backend_options(config.with_overrides(top_k=50), "", "")
    assert policy().backend_options(config.with_overrides(top_k=50), "sk-own", "")["api_key"] == "sk-own"


def test_only_allow_listed_options_may_be_set_by_a_visitor() -> None:
    base = load_config("offline")
    p = policy()
    for options in ({"query_strategy": {"api_key_env": "HF_TOKEN"}}, {"query_strategy": {"api_base": "http://x"}},
                    {"query_strategy": {"model": "openai/gpt-5"}}, {"retriever": {"max_windows": 100}},
                    {"backend": {"api_base": "http://x"}}, {"context": {"keep": 100}}):
        config = base.__class__(**{**base.to_dict(), "options": options})  # also parts a later branch adds
        with pytest.raises(Refused, match="cannot be set in the web app"):
            p.check_config(config, base)
    with pytest.raises(Refused, match="outside"):
        p.check_config(base.with_overrides(options={"query_strategy": {"threshold": 3}}), base)
    p.check_config(base.with_overrides(options={"query_strategy": {"threshold": 0.5, "when": "always"}}), base)
    operator = base.with_overrides(options={"query_strategy": {"api_key_env": "MY_KEY"}})
    p.check_config(operator, operator)  # the named config's own option: the operator's, not the visitor's


def test_test_only_backends_are_never_offered() -> None:
    p = policy(web_backends="offline,litellm,scripted")
    assert p.offered_backends(["litellm", "offline", "scripted"]) == ["litellm", "offline"]
    with pytest.raises(Refused, match="not offered"):
        p.check_config(load_config("offline").with_overrides(backend="scripted"), load_config("offline"))


def test_the_scripted_backend_never_reads_a_path(registry) -> None:
    for model in ("file:/etc/passwd", "file:/dev/zero", "file:/nonexistent"):
        with pytest.raises(SettingsError) as caught:
            registry.create("backend", "scripted", model, {})
        assert "passwd" not in str(caught.value) and "No such file" not in str(caught.value)
    backend = registry.create("backend", "scripted", "x", {"script": [{"answer": ["a"], "citations": []}]})
    assert backend.decide([], [], True).answer == {"answer": ["a"], "citations": []}


def test_failures_at_a_typed_api_base_all_read_the_same() -> None:
    steps = [ErrorStep(1, "backend", "the openai server at api_base could not be reached (connection error)"),
             ErrorStep(2, "search", "bad query")]
    typed = list(visitor_steps(steps, {"api_base": "http://x"}))
    assert [s.message for s in typed] == [ENDPOINT_FAILURE, "bad query"]
    assert list(visitor_steps(steps, {})) == steps
    row = {"error": "backend: the openai server at api_base did not answer in time (timeout)",
           "trajectory": [{"type": "error", "message": "the openai server at api_base did not answer in time "
                                                      "(timeout)"}]}
    assert ENDPOINT_FAILURE in visitor_row(row, {"api_base": "http://x"})["error"]
    assert "timeout" not in str(visitor_row(row, {"api_base": "http://x"}))


def test_errors_shown_to_visitors_hold_no_server_path_and_no_bug_text() -> None:
    steps = [ErrorStep(1, "show", "OSError: [Errno 5] Input/output error: '/srv/madqa/cache/ab/cd.val'"),
             SearchStep(2, "q", "q", (), (), error="DatabaseError: file /srv/madqa/corpora/x/pages.sqlite is damaged")]
    shown = list(visitor_steps(steps, {}))
    assert "/srv" not in str(shown) and "…/cd.val" in shown[0].message and "…/pages.sqlite" in shown[1].error
    row = {"id": "q1", "error": "internal: KeyError: '/srv/madqa/corpora/x/manifest.json' secret detail",
           "trajectory": [{"type": "error", "message": "failed at /srv/madqa/corpora/x/segment_1.seg"}]}
    visible = visitor_row(row, {})
    assert visible["error"] == "internal: KeyError (the server log has the details)"
    assert "/srv" not in str(visible) and "…/segment_1.seg" in visible["trajectory"][0]["message"]
    assert "trajectory" not in visitor_row({"id": "q2", "error": None}, {})


def test_settings_read_booleans_and_numbers() -> None:
    s = Settings.from_env(env={"MADQA_ALLOW_PRIVATE_API_BASE": "yes", "MADQA_WEB_PROVIDER_TIMEOUT": "7.5"})
    assert s.allow_private_api_base is True and s.web_provider_timeout_s == 7.5
    with pytest.raises(SettingsError, match="true or false"):
        Settings.from_env(env={"MADQA_ALLOW_PRIVATE_API_BASE": "maybe"})
    with pytest.raises(SettingsError, match="above 0"):
        Settings.from_env(env={"MADQA_WEB_PROVIDER_TIMEOUT": "0"})


def test_private_settings_are_not_shown() -> None:
    from madqa.ui.plugins import settings_frame

    listed = "http://10.9.8.7:8000/v1"
    frame = settings_frame(Settings.from_env(env={"MADQA_ALLOWED_API_BASES": listed}))
    row = frame[frame["variable"] == "MADQA_ALLOWED_API_BASES"].values.tolist()[0]
    assert row[1] == "(set)" and listed not in frame.to_string()
    assert listed not in repr(Settings.from_env(env={"MADQA_ALLOWED_API_BASES": listed}))
    assert listed not in repr(WebPolicy.from_settings(Settings.from_env(env={"MADQA_ALLOWED_API_BASES": listed})))
