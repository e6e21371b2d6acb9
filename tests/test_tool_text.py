"""Tool calls written as text: every shape real models and servers emit, and what must not count as one."""

from __future__ import annotations

import json
import time

import pytest

import madqa
from madqa.tool_text import MAX_CALLS, TEXT_PROTOCOL, TextCall, read_tool_calls, strip_reasoning

TOOLS = ("search_documents", "show_pages", "submit_answer")
SEARCH = TextCall("search_documents", {"query": "revenue 2024"})
ANSWER_ARGS = {"answer": ["148,612"], "citations": [{"file": "annual_report_2024.pdf", "page": 6,
                                                     "quote": "Total revenue 148,612"}]}


def calls(text: str, tools: tuple[str, ...] = TOOLS) -> list[tuple[str, dict, str | None]]:
    return [(c.name, c.arguments, c.error) for c in read_tool_calls(text, tools)]


# --- the shapes ------------------------------------------------------------------------------

@pytest.mark.parametrize("reply", [
    # bare JSON objects: Llama 3.x JSON tool calling, small models asked for JSON
    '{"name": "search_documents", "arguments": {"query": "revenue 2024"}}',
    '{"name": "search_documents", "parameters": {"query": "revenue 2024"}}',
    '{"function": "search_documents", "parameters": {"query": "revenue 2024"}}',
    '{"tool": "search_documents", "arguments": {"query": "revenue 2024"}}',
    '{"name": "search_documents", "query": "revenue 2024"}',
    # arguments as a JSON string, and OpenAI's own tool_calls entry written into the content
    '{"name": "search_documents", "arguments": "{\\"query\\": \\"revenue 2024\\"}"}',
    '{"id": "call_abc", "type": "function", "function": {"name": "search_documents", '
    '"arguments": "{\\"query\\": \\"revenue 2024\\"}"}}',
    '{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "search_documents", '
    '"arguments": {"query": "revenue 2024"}}}]}',
    # Anthropic's tool_use block, echoed as text
    '{"type": "tool_use", "id": "toolu_01", "name": "search_documents", "input": {"query": "revenue 2024"}}',
    # fenced
    'I will search the documents.\n\n```json\n{"name": "search_documents", "arguments": {"query": "revenue 2024"}}\n```',
    '```\n{"name": "search_documents", "arguments": {"query": "revenue 2024"}}\n```',
    # Hermes / Qwen2.5 / Qwen3 chat templates (vLLM's hermes parser)
    '<tool_call>\n{"name": "search_documents", "arguments": {"query": "revenue 2024"}}\n</tool_call>',
    # Mistral before tokenizer v11, v11, and v13 with [ARGS] (vLLM's mistral parser)
    '[TOOL_CALLS] [{"name": "search_documents", "arguments": {"query": "revenue 2024"}}]',
    '[TOOL_CALLS]search_documents{"query": "revenue 2024"}',
    '[TOOL_CALLS]search_documents[ARGS]{"query": "revenue 2024"}',
    '[TOOL_CALLS]search_documents[CALL_ID]a1B2c3D4e[ARGS]{"query": "revenue 2024"}',
    # Llama 3.1: <|python_tag|> JSON, and the <function=...> custom format
    '<|python_tag|>{"name": "search_documents", "parameters": {"query": "revenue 2024"}}<|eom_id|>',
    '<function=search_documents>{"query": "revenue 2024"}</function>',
    # Qwen3-Coder XML parameters
    '<tool_call>\n<function=search_documents>\n<parameter=query>\nrevenue 2024\n</parameter>\n</function>\n</tool_call>',
    # GLM-4.5 / 4.6 (vLLM's glm45 parser): the name, then key and value tags
    '<tool_call>search_documents\n<arg_key>query</arg_key>\n<arg_value>revenue 2024</arg_value>\n</tool_call>',
    # pythonic (Llama 3.2 / 4, vLLM's pythonic parser) and Gemma's tool_code fence
    '[search_documents(query="revenue 2024")]',
    '<|python_start|>[search_documents(query="revenue 2024")]<|python_end|>',
    '```tool_code\nprint(default_api.search_documents(query="revenue 2024"))\n```',
    # the JSON-in-text protocol's own shapes
    '{"search": "revenue 2024"}',
    '{"search": {"query": "revenue 2024"}}',
    '{"query": "revenue 2024"}',
    '{"search_documents": {"query": "revenue 2024"}}',
    # names as some servers prefix or suffix them (Harmony, Kimi)
    '{"name": "functions.search_documents:0", "arguments": {"query": "revenue 2024"}}',
])
def test_a_search_written_in_any_shape_is_read(reply: str) -> None:
    assert read_tool_calls(reply, TOOLS) == (SEARCH,)


def test_the_answer_shape_becomes_submit_answer_with_its_two_keys() -> None:
    reply = json.dumps(ANSWER_ARGS)
    assert calls(reply) == [("submit_answer", ANSWER_ARGS, None)]
    assert calls(json.dumps({"answers": ["148,612"]})) == [("submit_answer", {"answer": ["148,612"]}, None)]
    wrapped = json.dumps({"name": "submit_answer", "arguments": ANSWER_ARGS})
    assert calls(wrapped) == [("submit_answer", ANSWER_ARGS, None)]


def test_a_json_answer_inside_prose_is_read() -> None:
    reply = ("Based on page 6 of the annual report, the total is given in the table.\n"
             f"{json.dumps(ANSWER_ARGS)}\nLet me know if you need anything else {{or not}}.")
    assert calls(reply) == [("submit_answer", ANSWER_ARGS, None)]


def test_the_answer_key_wins_over_a_query_key() -> None:
    reply = '{"answer": ["7.5 million"], "citations": [], "query": "revenue"}'
    assert [c[0] for c in calls(reply)] == ["submit_answer"]


def test_show_pages_in_the_protocol_shape_and_as_a_call() -> None:
    pages = [{"file": "report.pdf", "page": 2}]
    assert calls(json.dumps({"show_pages": pages})) == [("show_pages", {"pages": pages}, None)]
    assert calls(json.dumps({"show_pages": {"pages": pages}})) == [("show_pages", {"pages": pages}, None)]
    assert calls(f'[show_pages(pages={pages!r})]') == [("show_pages", {"pages": pages}, None)]


def test_several_calls_in_one_reply_come_in_order() -> None:
    hermes = ('<tool_call>\n{"name": "search_documents", "arguments": {"query": "a"}}\n</tool_call>\n'
              '<tool_call>\n{"name": "show_pages", "arguments": {"pages": [{"file": "x.pdf", "page": 1}]}}\n</tool_call>')
    assert [(c[0], c[1]) for c in calls(hermes)] == [
        ("search_documents", {"query": "a"}), ("show_pages", {"pages": [{"file": "x.pdf", "page": 1}]})]
    mistral = '[TOOL_CALLS]search_documents[ARGS]{"query": "a"}[TOOL_CALLS]search_documents[ARGS]{"query": "b"}'
    llama = ('<|python_tag|>{"name": "search_documents", "parameters": {"query": "a"}}; '
             '{"name": "search_documents", "parameters": {"query": "b"}}')
    json_list = json.dumps([{"name": "search_documents", "arguments": {"query": q}} for q in "ab"])
    mixed = '{"search": "a"}\nand then\n```json\n{"name": "search_documents", "arguments": {"query": "b"}}\n```'
    pythonic = '[search_documents(query="a"), search_documents(query="b")]'
    glm = ("<think>First a, then b.</think>" + "".join(
        f"<tool_call>search_documents\n<arg_key>query</arg_key>\n<arg_value>{q}</arg_value>\n</tool_call>"
        for q in "ab"))
    for reply in (mistral, llama, json_list, mixed, pythonic, glm):
        assert [c.arguments["query"] for c in read_tool_calls(reply, TOOLS)] == ["a", "b"], reply


def test_no_more_than_max_calls_are_read() -> None:
    assert len(read_tool_calls('{"search": "x"}\n' * (MAX_CALLS + 10), TOOLS)) == MAX_CALLS


# --- repaired, or an error the loop can quote back -----------------------------------------------

def test_single_quotes_and_trailing_commas_are_repaired() -> None:
    assert read_tool_calls("{'name': 'search_documents', 'arguments': {'query': 'revenue 2024',},}", TOOLS) == (SEARCH,)
    assert read_tool_calls('[{"name": "search_documents", "arguments": {"query": "revenue 2024"}},]', TOOLS) == (SEARCH,)


@pytest.mark.parametrize(("reply", "name", "why"), [
    ('{"name": "search_documents", "arguments": {query: revenue}}', "search_documents", "could not be read"),
    ('<tool_call>{"name": "submit_answer", "arguments": {"answer": ["x"], "citations": [{"file": "a.pdf"',
     "submit_answer", "not closed"),
    ('{"answer": ["x"], "citations": [{"file": "a.pdf", "page": 3}', "submit_answer", "not closed"),
    ('{"name": "search_documents", "arguments": "{query: revenue"}', "search_documents", "not valid JSON"),
    ('{"name": "search_documents", "arguments": ["revenue"]}', "search_documents", "not a JSON object"),
    ('[TOOL_CALLS]search_documents[ARGS]{"query": "revenue', "search_documents", "not closed"),
    ('[search_documents("revenue")]', "search_documents", "by name"),
])
def test_unreadable_arguments_give_an_error_call(reply: str, name: str, why: str) -> None:
    (call,) = read_tool_calls(reply, TOOLS)
    assert call.name == name and call.arguments == {} and why in (call.error or "")


# --- what is not a call ------------------------------------------------------------------------

@pytest.mark.parametrize("reply", [
    "",
    "The total revenue in 2024 was 148,612 thousand euros.",
    "I cannot find this information in the documents.",
    "The set {a, b} has two elements; f(x) = {x: 1} and {it's fine}.",
    "In JSON, an empty object is written {} and a list [] - see [1], [2].",
    '{"name": "Acme Corp", "revenue": 148612}',  # data with a "name" that is no tool
    '{"file": "report.pdf", "page": 3}',
    '["7.5 million"]',
    '{"name": "delete_files", "arguments": {"path": "/"}}',  # not offered
    '<tool_call>{"name": "web_search", "arguments": {"query": "x"}}</tool_call>',
    "[TOOL_CALLS]web_search[ARGS]{\"query\": \"x\"}",
    '<function=run_shell>{"cmd": "ls"}</function>',
    "[web_search(query='x')]",
    "I would call search_documents(query='revenue') if I could.",
])
def test_prose_junk_and_tools_not_offered_are_no_calls(reply: str) -> None:
    assert read_tool_calls(reply, TOOLS) == ()


def test_an_unclosed_brace_in_prose_does_not_hide_a_later_call() -> None:
    assert read_tool_calls('Careful with { in prose. I\'ll search: {"search": "revenue 2024"}', TOOLS) == (SEARCH,)
    assert read_tool_calls("I don't know {it's odd} so: " + '{"search": "revenue 2024"}', TOOLS) == (SEARCH,)


def test_only_the_tools_offered_this_turn_are_read() -> None:
    reply = '{"search": "revenue"}\n' + json.dumps(ANSWER_ARGS)
    assert [c.name for c in read_tool_calls(reply, ("submit_answer",))] == ["submit_answer"]
    assert [c.name for c in read_tool_calls(reply, ("search_documents",))] == ["search_documents"]
    assert read_tool_calls(reply, ()) == ()


def test_calls_inside_reasoning_are_ignored() -> None:
    fake = '{"name": "submit_answer", "arguments": {"answer": ["guess"], "citations": []}}'
    deepseek = f'<think>\nMaybe I should answer {fake} now... no, search first.\n</think>\n\n{{"search": "revenue 2024"}}'
    qwen3_server = f'Let me think. {fake} Hmm.\n</think>\n\n<tool_call>\n{{"name": "search_documents", ' \
                   f'"arguments": {{"query": "revenue 2024"}}}}\n</tool_call>'
    claude = f'<thinking>{fake}</thinking><reasoning>{{"search": "no"}}</reasoning>{{"search": "revenue 2024"}}'
    for reply in (deepseek, qwen3_server, claude):
        assert read_tool_calls(reply, TOOLS) == (SEARCH,), reply
    assert read_tool_calls(f"<think>cut off while thinking {fake}", TOOLS) == ()


def test_strip_reasoning() -> None:
    assert strip_reasoning("<think>a {x}</think>\n\nThe answer is 7.") == "The answer is 7."
    assert strip_reasoning("<THINKING>a</THINKING>B<reasoning>c</reasoning>D") == "BD"
    assert strip_reasoning("before <think> never closed") == "before"
    assert strip_reasoning("<think>only thoughts") == ""
    assert strip_reasoning("reasoning the server did not open\n</think>\nAnswer") == "Answer"
    assert strip_reasoning("<think>a <think> b</think>c") == "c"
    assert strip_reasoning("No tags at all.") == "No tags at all."


# --- bounded work --------------------------------------------------------------------------------

@pytest.mark.parametrize("reply", [
    "x" * 1_000_000,
    '{"search": "revenue 2024"}' + "x" * 1_000_000,
    "{" * 1_000_000,
    '{"a": ' * 200_000,
    "[" * 300_000 + "]" * 300_000,
    "{]" * 500_000,
    '{"' + '\\"' * 500_000,
    "{'" * 500_000,
    "<think>" * 200_000,
    "<function=search_documents>" * 50_000,
    "```" * 300_000,
    "[TOOL_CALLS]search_documents" * 50_000,
    '{"search": "revenue 2024"} ' * 50_000,
])
def test_a_huge_or_hostile_reply_is_read_in_bounded_time(reply: str) -> None:
    started = time.perf_counter()
    found = read_tool_calls(reply, TOOLS)
    assert time.perf_counter() - started < 2.0
    assert len(found) <= MAX_CALLS
    if reply.startswith('{"search": "revenue 2024"}'):
        assert found[0] == SEARCH


def test_deeply_nested_braces_around_a_call() -> None:
    nested = '{"x": ' * 500 + '{"search": "revenue 2024"}' + "}" * 500
    assert read_tool_calls(nested, TOOLS) == ()  # a search buried in data is no call: only top-level objects are
    assert read_tool_calls("[" * 5000 + "]" * 5000 + ' {"search": "revenue 2024"}', TOOLS) == (SEARCH,)


# --- the protocol text -------------------------------------------------------------------------

def test_text_protocol_teaches_shapes_the_reader_understands() -> None:
    decoder = json.JSONDecoder()
    shapes = [decoder.raw_decode(part)[0] for part in TEXT_PROTOCOL.split("reply with only ")[1:]]
    assert [c.name for s in shapes for c in read_tool_calls(json.dumps(s), TOOLS)] == [
        "search_documents", "show_pages", "submit_answer"]


def test_public_face_exports() -> None:
    assert madqa.read_tool_calls is read_tool_calls and madqa.strip_reasoning is strip_reasoning
    assert madqa.TextCall is TextCall and madqa.TEXT_PROTOCOL is TEXT_PROTOCOL


def test_the_json_repair_it_relies_on_never_raises_and_is_bounded() -> None:
    assert madqa.find_json_object("{{}}") is None  # a set of dicts to Python: once a TypeError
    assert madqa.find_json_object('It is {"answer": ["7.5"], "note": "}",} - done') == {"answer": ["7.5"], "note": "}"}
    for hostile in ("{" * 1_000_000, '{"' * 500_000, '{"a": ' * 200_000):
        started = time.perf_counter()
        assert madqa.find_json_object(hostile) is None
        assert time.perf_counter() - started < 3.0


def test_glm_values_that_read_as_json_are_taken_as_json() -> None:
    reply = ('<tool_call>show_pages\n<arg_key>pages</arg_key>\n<arg_value>[{"file": "x.pdf", "page": 2}]</arg_value>'
             '\n</tool_call>')
    assert calls(reply) == [("show_pages", {"pages": [{"file": "x.pdf", "page": 2}]}, None)]
    assert calls("<tool_call>not_offered\n<arg_key>q</arg_key><arg_value>x</arg_value></tool_call>") == []
