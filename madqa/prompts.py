"""What the agent says to the model: the system prompts, the tool schemas and the repair notes.

Two worlds: the MADQA benchmark's rule that "the answer is definitely in the documents"
(``CLOSED_WORLD``, for benchmark runs) and one that lets the model say the documents do not hold
the answer (``OPEN_WORLD``, the default for people asking about their own PDFs). The loop
(``madqa.agent``) picks one per config (``answer_always_present``) and records which in the row.
"""

from __future__ import annotations

from typing import Any

_INTRO = """You are a document QA assistant with access to a search tool over a collection of PDF documents.
The search tool returns images of document pages, each labelled "File: <file>, Page: <n>"."""

CLOSED_WORLD = """IMPORTANT: The answer to the question is definitely in the documents. If a search returns no results or unhelpful pages, search again with different terms: synonyms, abbreviations, or different phrasings."""

OPEN_WORLD = """The answer is usually in the documents, but it may not be. If a search returns no results or unhelpful pages, search again with different terms: synonyms, abbreviations, or different phrasings. Only when several different searches found nothing that answers the question, call submit_answer with an empty answer list [] and no citations: that says the documents do not hold the answer. Never guess an answer the pages do not show."""

_ANSWER_FORMAT = """Once you have found the relevant pages, answer with submit_answer:
- answer: a list of short answer values, as few words as possible, using the exact words of the document where possible; one element for a single answer, several for several items or entities
- citations: the pages the answer comes from, each {"file": the exact file name shown in the label, "page": the page number, "quote": a short verbatim quote from that page that supports the answer (one sentence or table row, copied exactly)}"""


def system_prompt(answer_always_present: bool) -> str:
    """The system prompt: the benchmark's closed world, or the open one that allows "not found"."""
    return "\n\n".join((_INTRO, CLOSED_WORLD if answer_always_present else OPEN_WORLD, _ANSWER_FORMAT))


SYSTEM_PROMPT = system_prompt(True)  # the paper's prompt (benchmark runs)

# Added to the system prompt only when a config offers tools beyond the paper's (search, show_pages): the
# paper's prompt stays byte for byte what it was for the paper's setup.
OTHER_TOOLS_NOTE = """Besides searching, you may use these tools: {tools}. Use them the way a person browses a collection: read a document's outline, open the page a section starts on, turn the page."""

# One short turn restating the answer format, after a reply the loop could not read as an answer
# (prose, other keys, unreadable JSON, a search when it had to answer). No search tool is offered.
REPAIR_NOTE = """Your last reply could not be read as a final answer{why}. Do not search again. Call submit_answer now, or reply with only this JSON object:
{{"answer": ["short answer value"], "citations": [{{"file": "<file from a page label>", "page": <page number>, "quote": "<verbatim quote from that page>"}}]}}
If the pages you saw do not answer the question, give "answer": [] and "citations": []."""

VERIFY_NOTE = """Your answer is not written on the pages you saw as it stands: {why}. Give the answer as it is written in the document, as short as possible (a value, a name, a date: not a sentence or a passage), in the document's own words and units, with the file and page it is on. Do not search again. Call submit_answer now. If the pages you saw do not hold the answer, give "answer": [] and "citations": []."""

SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "search_documents",
        "description": (
            "Search the document collection and return images of the best matching pages. Supports terms and "
            "phrases (quotes for an exact phrase), boolean operators (AND, OR, NOT; AND is the default between "
            "words) and wildcards (* for several characters, ? for one). Examples: 'engine specifications', "
            "'\"annual report\" AND revenue', 'employ*', 'incorporation NOT date'. Pages already shown are listed "
            "with an excerpt, not shown again (run the same query again, or call show_pages, to see them)."
        ),
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "keywords, \"phrases\" and AND/OR/NOT"}},
            "required": ["query"],
        },
    },
}

SHOW_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "show_pages",
        "description": "Show pages again as images, e.g. pages seen earlier that are now only listed with an "
                       "excerpt. Give the file and page exactly as in their labels.",
        "parameters": {
            "type": "object",
            "properties": {"pages": {"type": "array", "items": {
                "type": "object", "properties": {"file": {"type": "string"}, "page": {"type": "integer"}},
                "required": ["file", "page"]}}},
            "required": ["pages"],
        },
    },
}

ANSWER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "submit_answer",
        "description": "Give the final answer with the pages it comes from. Ends the task.",
        "parameters": {
            "type": "object",
            "properties": {
                "answer": {"type": "array", "items": {"type": "string"},
                           "description": "short answer values, exact document words where possible"},
                "citations": {
                    "type": "array",
                    "items": {"type": "object",
                              "properties": {"file": {"type": "string"}, "page": {"type": "integer"},
                                             "quote": {"type": "string",
                                                       "description": "a short verbatim quote from this page "
                                                                      "(a sentence or table row) supporting "
                                                                      "the answer, copied exactly"}},
                              "required": ["file", "page", "quote"]},
                },
            },
            "required": ["answer", "citations"],
        },
    },
}
