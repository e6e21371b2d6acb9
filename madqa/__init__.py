"""madqa: agentic question answering over collections of PDF documents.

The public face plugins import: the ``hookimpl`` marker, the core types and the errors.
"""

from madqa.answer import find_json_object
from madqa.errors import (
    BackendError,
    CorpusError,
    MadqaError,
    PluginError,
    RenderError,
    SearchError,
    SettingsError,
)
from madqa.hookspecs import Register, hookimpl
from madqa.options import read_options
from madqa.types import (
    AnswerStep,
    ErrorStep,
    Hit,
    ModelDecision,
    ModelStep,
    PageRef,
    SearchResult,
    SearchStep,
    Step,
    ToolCall,
    Usage,
)

__version__ = "0.1.0"

__all__ = [
    "AnswerStep", "BackendError", "CorpusError", "ErrorStep", "Hit", "MadqaError", "ModelDecision", "ModelStep",
    "PageRef", "PluginError", "Register", "RenderError", "SearchError", "SearchResult", "SearchStep",
    "SettingsError", "Step", "ToolCall", "Usage", "__version__", "find_json_object", "hookimpl",
    "read_options",
]
