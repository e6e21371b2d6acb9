"""The errors madqa raises. Only the UI turns them into gr.Error, only the CLI into exit codes."""

from __future__ import annotations


class MadqaError(Exception):
    """Base of every error madqa raises on purpose; its message is meant for a person."""


class SettingsError(MadqaError):
    """A setting or a named config is missing or invalid."""


class PluginError(MadqaError):
    """A component is unknown, unavailable, or a plugin failed to load."""


class OptionError(PluginError, SettingsError):
    """A part's option has a value of the wrong type or outside its declared range or choices: a plugin's
    error and a setting's alike (the value came from a config, ``--set`` or a form)."""


class CorpusError(MadqaError):
    """A corpus folder, a file in it, or its stored index cannot be used."""


class IndexDamagedError(CorpusError):
    """A stored generation (manifest, page store, a retriever's index) is truncated or corrupt;
    ``madqa index`` rebuilds it from the PDFs as a new generation."""


class IngestStopped(MadqaError):
    """An ingest ran past its time (``ingest(..., timeout_s=...)``) and was stopped: nothing of it was kept,
    the corpus stays as it was."""


class SearchError(MadqaError):
    """A retriever failed on a query (the agent turns this into an observation)."""


class ScopeError(SearchError):
    """A scope naming a file the corpus does not hold (the message lists the names it could mean)."""


class RenderError(MadqaError):
    """A page cannot be rendered (unknown file, page out of range, broken PDF)."""


class PageLimitError(RenderError):
    """A page could not be drawn within the drawing limits (CPU time, memory, declared image size): the same
    page of the same file is not tried again with the same limits (``render.py`` remembers it)."""


class BackendError(MadqaError):
    """A model backend failed after its retries (the agent turns this into an error step)."""


class ServerLimitError(BackendError):
    """The model's server refused a request for a limit the loop can work around by sending less.

    ``limit`` is one of ``LIMITS``: ``images_per_request`` (e.g. vLLM's ``limit_mm_per_prompt``;
    ``value`` is the number the server allows, when it said one), ``vision`` (a text-only model
    rejected images), ``image_size`` (an image too large), ``context_length`` (the request is too
    long). The loop retries the same turn with less (fewer images, page text, smaller images,
    older pages as excerpts) and notes it; when nothing is left to cut it ends the question with
    this error. ``message`` names the provider and its own reason, like any BackendError."""

    LIMITS = ("images_per_request", "vision", "image_size", "context_length")

    def __init__(self, message: str, limit: str, value: int | None = None) -> None:
        if limit not in self.LIMITS:
            raise ValueError(f"unknown server limit {limit!r}; one of {self.LIMITS}")
        super().__init__(message)
        self.limit = limit
        self.value = value


class ClusterError(MadqaError):
    """A cluster cannot be started or reached, or a job kept failing on its workers."""
