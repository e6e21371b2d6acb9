"""madqa: agentic question answering over collections of PDF documents.

The public face plugins import, and all of the contract: the ``hookimpl`` marker, what a factory is handed
(``Host``, ``Corpus``), the Protocols a component satisfies, the states and results it reads and returns
(``SearchState``, ``QuestionState``, ``Observation``, ``Hit``, ...), the shared query language
(``query_language``) and the errors. ``__all__`` is the contract: a plugin needs nothing else.
"""

import sys

try:
    import pluggy  # noqa: F401  (the first third-party import below; a Python without madqa's packages fails here)
except ModuleNotFoundError as exc:  # pragma: no cover - exercised by a subprocess test
    if sys.argv[:1] == ["-m"]:  # `python3 -m madqa` run by a Python outside madqa's virtualenv
        sys.exit(f"madqa: the Python at {sys.executable} lacks madqa's packages ({exc.name} is missing); "
                 "run scripts/install, then .venv/bin/madqa ... (or source .venv/bin/activate)")
    raise

from madqa import query_language
from madqa.answer import find_json_object
from madqa.contract import (
    Components,
    Corpus,
    DocumentRecord,
    Host,
    IndexProgress,
    Observation,
    PageText,
    QuestionState,
    SearchState,
    ShownPage,
)
from madqa.corpus import unfold_ligatures
from madqa.errors import (
    BackendError,
    CorpusError,
    IndexDamagedError,
    MadqaError,
    OptionError,
    PluginError,
    RenderError,
    ScopeError,
    SearchError,
    ServerLimitError,
    SettingsError,
)
from madqa.hookspecs import Register, hookimpl
from madqa.image_tokens import provider_image_tokens
from madqa.languages import DEFAULT as DEFAULT_LANGUAGE
from madqa.languages import LANGUAGES, Language, language_named
from madqa.ocr import OcrWord, find_tessdata, ocr_words
from madqa.options import Option, read_options
from madqa.outline import Outline, OutlineEntry, document_outline, outline_text
from madqa.prompts import ANSWER_TOOL, SEARCH_TOOL, SHOW_TOOL
from madqa.protocols import (
    CAPABILITIES,
    AgentTool,
    Backend,
    BackendCapabilities,
    IndexingRetriever,
    PageReader,
    QueryStrategy,
    Reranker,
    Retriever,
    RetrieverIndexing,
    backend_capabilities,
    reranker_candidates,
    retriever_filters_files,
    retriever_indexing,
    run_key_user,
    tool_checks_arguments,
)
from madqa.scope import ScopedQuery, parse_scope, resolve_files, search_scoped
from madqa.search_limits import SearchBudget, glob_regex, literal_prefix
from madqa.text import lexical_similarity, match_key, quote_on_page, stemmed_note
from madqa.tool_text import TEXT_PROTOCOL, TextCall, read_tool_calls, strip_reasoning, text_protocol
from madqa.tools import MAX_PAGES_PER_STEP
from madqa.types import (
    NO_PAGES_NOTE,
    AnswerStep,
    ErrorStep,
    Hit,
    ModelDecision,
    ModelStep,
    PageRef,
    SearchResult,
    SearchStep,
    SteerStep,
    Step,
    ToolCall,
    ToolStep,
    Usage,
)
from madqa.usage import estimate_usage

__version__ = "0.1.0"

__all__ = [
    "ANSWER_TOOL", "AgentTool", "MAX_PAGES_PER_STEP", "Observation", "Outline", "OutlineEntry", "QuestionState", "SEARCH_TOOL",
    "SHOW_TOOL", "SteerStep", "tool_checks_arguments", "ToolStep", "document_outline", "outline_text", "resolve_files", "text_protocol",
    "CAPABILITIES", "Backend", "BackendCapabilities", "IndexingRetriever", "Option", "OptionError", "PageReader",
    "QueryStrategy", "Reranker", "Retriever", "RetrieverIndexing", "backend_capabilities", "reranker_candidates",
    "retriever_filters_files", "retriever_indexing", "run_key_user",
    "ScopeError", "ScopedQuery", "parse_scope", "search_scoped",
    "NO_PAGES_NOTE", "AnswerStep", "BackendError", "CorpusError", "ErrorStep", "Hit", "IndexDamagedError", "MadqaError", "ModelDecision", "ModelStep", "OcrWord",
    "PageRef", "PluginError", "Register", "RenderError", "SearchBudget", "SearchError", "SearchResult", "SearchStep",
    "ServerLimitError", "SettingsError", "Step", "TEXT_PROTOCOL", "TextCall", "ToolCall", "Usage", "provider_image_tokens", "estimate_usage", "__version__",
    "find_json_object", "find_tessdata", "hookimpl", "glob_regex", "lexical_similarity", "literal_prefix", "match_key", "ocr_words", "quote_on_page", "read_options",
    "read_tool_calls", "stemmed_note", "strip_reasoning", "unfold_ligatures",
    "DEFAULT_LANGUAGE", "LANGUAGES", "Language", "language_named",
    # the contract's data (madqa.contract): what a factory is handed, the corpus it reads, the states it sees
    "Components", "Corpus", "DocumentRecord", "Host", "IndexProgress", "PageText", "SearchState", "ShownPage",
    "query_language",
]
