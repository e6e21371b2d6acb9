"""The errors madqa raises. Only the UI turns them into gr.Error, only the CLI into exit codes."""

from __future__ import annotations


class MadqaError(Exception):
    """Base of every error madqa raises on purpose; its message is meant for a person."""


class SettingsError(MadqaError):
    """A setting or a named config is missing or invalid."""


class PluginError(MadqaError):
    """A component is unknown, unavailable, or a plugin failed to load."""


class CorpusError(MadqaError):
    """A corpus folder, a file in it, or its stored index cannot be used."""


class IndexDamagedError(CorpusError):
    """A stored generation (manifest, page store, a retriever's index) is truncated or corrupt;
    ``madqa index`` rebuilds it from the PDFs as a new generation."""


class SearchError(MadqaError):
    """A retriever failed on a query (the agent turns this into an observation)."""


class RenderError(MadqaError):
    """A page cannot be rendered (unknown file, page out of range, broken PDF)."""


class BackendError(MadqaError):
    """A model backend failed after its retries (the agent turns this into an error step)."""


class ClusterError(MadqaError):
    """A cluster cannot be started or reached, or a job kept failing on its workers."""
