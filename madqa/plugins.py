"""The plugin manager and the registry of components it collects.

Built-ins live in the ``madqa_plugins`` package and register through the same public API
third-party plugins use; packaged plugins come from the entry-point group ``madqa``, single-file
plugins from the folder named by ``MADQA_PLUGINS_DIR``.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

import pluggy

from madqa import hookspecs
from madqa.contract import Corpus, Host
from madqa.errors import PluginError
from madqa.options import Option, declared_options
from madqa.protocols import AgentTool, Backend, PageReader, QueryStrategy, Reranker, Retriever
from madqa.settings import Settings

_REPO_ROOT = Path(__file__).resolve().parent.parent
KINDS = ("retriever", "reranker", "query_strategy", "backend", "page_reader", "embedder", "tool")
CORPUS_KINDS = ("retriever", "reranker", "query_strategy", "tool")  # made for a corpus: create(kind, name, corpus, options)
_HOOK_OF_KIND = {
    "retriever": "register_retrievers",
    "reranker": "register_rerankers",
    "query_strategy": "register_query_strategies",
    "backend": "register_backends",
    "page_reader": "register_page_readers",
    "embedder": "register_embedders",
    "tool": "register_tools",
}
BUILTIN_PLUGINS = (
    "madqa_plugins.whoosh.whoosh_bm25",
    "madqa_plugins.tantivy.tantivy_bm25",
    "madqa_plugins.dense.dense",
    "madqa_plugins.dense.minilm",
    "madqa_plugins.dense.hybrid",
    "madqa_plugins.milvus.milvus",
    "madqa_plugins.dense.embedding_reranker",
    "madqa_plugins.readers.text_layer",
    "madqa_plugins.readers.tesseract_ocr",
    "madqa_plugins.strategies.passthrough",
    "madqa_plugins.strategies.drift_strategy",
    "madqa_plugins.strategies.llm_rewrite",
    "madqa_plugins.scripted",
    "madqa_plugins.offline.offline_backend",
    "madqa_plugins.litellm.litellm_backend",
    "madqa_plugins.tools.paper_tools",
    "madqa_plugins.tools.navigation",
    "madqa_plugins.tools.outline_tool",
)


@dataclass(frozen=True)
class Component:
    """One registered component: its kind, name, factory and the plugin that provides it."""

    kind: str
    name: str
    factory: Callable[..., Any]
    plugin: str
    description: str = ""
    unavailable: str | None = None  # the reason, when a required module is missing
    shadows: tuple[str, ...] = ()  # plugins whose component of the same name this one hides
    options: tuple[Option, ...] = ()  # what its factory's ``options`` dict may hold (madqa.options)
    # True: ``factory(host, options)`` (a madqa.Host); False: the deprecated forms (factory(corpus, options),
    # factory(model, options), factory(options), with host keys in a backend's options)
    takes_host: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "plugin": self.plugin,
            "description": self.description,
            "available": self.unavailable is None,
            "unavailable": self.unavailable,
            "shadows": list(self.shadows),
            "options": [o.to_dict() for o in self.options],
            "takes_host": self.takes_host,
        }


@dataclass
class Registry:
    """Components by kind and name; the first registration of a name wins, later ones are noted."""

    components: dict[tuple[str, str], Component] = field(default_factory=dict)
    # handed to a factory (or an ``update_index``) with a ``settings`` parameter: read once, at start-up
    settings: Settings = field(default_factory=Settings)

    def get(self, kind: str, name: str) -> Component:
        """The available component, or PluginError naming what exists or why it is unavailable."""
        comp = self.components.get((kind, name))
        if comp is None:
            known = ", ".join(sorted(n for k, n in self.components if k == kind)) or "none"
            raise PluginError(f"unknown {kind.replace('_', ' ')} {name!r} (installed: {known})")
        if comp.unavailable:
            raise PluginError(f"{kind.replace('_', ' ')} {name!r} is unavailable: {comp.unavailable}")
        return comp

    @overload
    def create(self, kind: Literal["retriever"], name: str, *args: Any, corpus: Corpus | None = None,
               api_key: str | None = None, api_base: str | None = None) -> Retriever: ...
    @overload
    def create(self, kind: Literal["reranker"], name: str, *args: Any, corpus: Corpus | None = None,
               api_key: str | None = None, api_base: str | None = None) -> Reranker: ...
    @overload
    def create(self, kind: Literal["query_strategy"], name: str, *args: Any, corpus: Corpus | None = None,
               api_key: str | None = None, api_base: str | None = None) -> QueryStrategy: ...
    @overload
    def create(self, kind: Literal["backend"], name: str, *args: Any, corpus: Corpus | None = None,
               api_key: str | None = None, api_base: str | None = None) -> Backend: ...
    @overload
    def create(self, kind: Literal["page_reader"], name: str, *args: Any, corpus: Corpus | None = None,
               api_key: str | None = None, api_base: str | None = None) -> PageReader: ...
    @overload
    def create(self, kind: Literal["tool"], name: str, *args: Any, corpus: Corpus | None = None,
               api_key: str | None = None, api_base: str | None = None) -> AgentTool: ...
    @overload
    def create(self, kind: str, name: str, *args: Any, corpus: Corpus | None = None,
               api_key: str | None = None, api_base: str | None = None) -> object: ...

    def create(self, kind: str, name: str, *args: Any, corpus: Corpus | None = None,
               api_key: str | None = None, api_base: str | None = None) -> object:
        """Build the component ``name`` of ``kind`` by calling its factory.

        ``args`` are what madqa has always passed: ``(corpus, options)`` for a retriever, reranker, query
        strategy or tool, ``(model, options)`` for a backend (its corpus as ``corpus=``), ``(options)`` for a
        page reader or an embedder; ``api_key`` and ``api_base``: what the caller was given for this run.
        A factory registered with ``takes_host=True`` gets ``factory(host, options)``: a ``madqa.Host``
        holding all of it, this registry (a component made of others, ``hybrid``, builds its parts from the
        same plugins) and the process's settings (``MADQA_*``, read at start-up). Any other factory is
        called the deprecated way (``_call_old_form``)."""
        component = self.get(kind, name)
        *made_for, options = args if args else ({},)
        if kind in CORPUS_KINDS and made_for:
            corpus = made_for[0]
        host = Host(corpus=corpus, settings=self.settings, registry=self,
                    model=made_for[0] if kind == "backend" and made_for else None, api_key=api_key, api_base=api_base)
        if component.takes_host:
            made: object = component.factory(host, dict(options or {}))
            return made
        return self._call_old_form(component, args, host)

    def _call_old_form(self, component: Component, args: tuple[Any, ...], host: Host) -> object:
        """A factory written before ``madqa.Host`` (deprecated, warned about at registration): its positional
        arguments as they were, ``registry=`` / ``settings=`` when its signature names them, and a backend's
        host keys (``corpus``, ``api_key``, ``api_base``) put back into its options, as they used to come."""
        factory, kwargs = component.factory, dict[str, Any]()
        if takes(factory, "registry"):
            kwargs["registry"] = self
        if takes(factory, "settings"):
            kwargs["settings"] = self.settings
        if component.kind == "backend" and len(args) == 2:
            # as the loop used to build them: the corpus first, the options, then the caller's key and api_base
            given = {k: v for k, v in (("api_key", host.api_key), ("api_base", host.api_base)) if v is not None}
            corpus = {"corpus": host.corpus} if host.corpus is not None else {}
            args = (args[0], {**corpus, **dict(args[1] or {}), **given})
        made: object = factory(*args, **kwargs)
        return made

    def names(self, kind: str, available_only: bool = True) -> list[str]:
        return sorted(
            n for (k, n), c in self.components.items() if k == kind and not (available_only and c.unavailable)
        )

    def list(self) -> list[Component]:
        return sorted(self.components.values(), key=lambda c: (KINDS.index(c.kind), c.name))


def takes(factory: Callable[..., Any], parameter: str) -> bool:
    """Whether ``factory`` has a parameter named ``parameter``: read of the deprecated factory forms only
    (``registry``, ``settings``, ``progress``, ``language``), never of one registered with ``takes_host``."""
    try:
        return parameter in inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False


OLD_FORMS = {kind: "factory(options)" if kind in ("page_reader", "embedder") else
             "factory(model, options)" if kind == "backend" else "factory(corpus, options)" for kind in KINDS}


def _missing_module(requires: tuple[str, ...]) -> str | None:
    for module in requires:
        if importlib.util.find_spec(module) is None:
            return f"needs the Python package providing {module!r} (see requirements-optional.txt)"
    return None


def collect(pm: pluggy.PluginManager, settings: Settings | None = None) -> Registry:
    """Call every registration hook and gather the components into a Registry that hands ``settings``
    (default: ``Settings()``, no environment read) to the factories taking them."""
    registry = Registry(settings=settings or Settings())
    for kind, hook_name in _HOOK_OF_KIND.items():
        hook = getattr(pm.hook, hook_name)
        for impl in hook.get_hookimpls()[::-1]:  # pluggy's call order: last registered first
            plugin_name = pm.get_name(impl.plugin) or repr(impl.plugin)

            def register(
                name: str,
                factory: Callable[..., Any],
                description: str = "",
                requires: tuple[str, ...] | list[str] = (),
                options: Any = (),
                *,
                takes_host: bool = False,
                _kind: str = kind,
                _plugin: str = plugin_name,
            ) -> None:
                if not isinstance(name, str) or not name:
                    raise PluginError(f"plugin {_plugin} registered a {_kind} without a name")
                if not callable(factory):
                    raise PluginError(f"plugin {_plugin} registered {_kind} {name!r} with no factory")
                key = (_kind, name)
                if key in registry.components:
                    first = registry.components[key]
                    registry.components[key] = Component(**{**first.__dict__, "shadows": (*first.shadows, _plugin)})
                    return
                try:
                    declared = declared_options(options)
                except (TypeError, AttributeError) as exc:
                    raise PluginError(f"plugin {_plugin} registered {_kind} {name!r} with options that are not "
                                      f"madqa.Option declarations: {exc}") from None
                if not all(isinstance(o, Option) for o in declared):
                    raise PluginError(f"plugin {_plugin} registered {_kind} {name!r} with options that are not "
                                      "madqa.Option declarations")
                if not takes_host:
                    warnings.warn(f"plugin {_plugin} registers {_kind.replace('_', ' ')} {name!r} with a factory of "
                                  f"the old form ({OLD_FORMS[_kind]}): register it with takes_host=True and write "
                                  "factory(host: madqa.Host, options) (docs/plugins.md); the old form will go",
                                  DeprecationWarning, stacklevel=2)
                registry.components[key] = Component(
                    _kind, name, factory, _plugin, description, _missing_module(tuple(requires)), options=declared,
                    takes_host=bool(takes_host),
                )

            impl.function(register=register)
    return registry


def _load_dir(pm: pluggy.PluginManager, folder: Path) -> None:
    if not folder.is_dir():
        raise PluginError(f"MADQA_PLUGINS_DIR {str(folder)!r} is not a folder")
    for path in sorted(folder.glob("*.py")):
        name = f"madqa_dir_plugin_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise PluginError(f"cannot load plugin file {path}")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # a broken third-party file: say which, don't die obscurely
            raise PluginError(f"plugin file {path} failed to import: {exc}") from exc
        sys.modules[name] = module
        pm.register(module, name=f"{path.name} (MADQA_PLUGINS_DIR)")


def get_plugin_manager(plugins_dir: str | Path | None = None, entry_points: bool = True) -> pluggy.PluginManager:
    """A fresh plugin manager with built-ins, entry-point plugins and a plugins folder loaded.

    Raises PluginError when a hook implementation names no known hook (a misspelling).
    """
    pm = pluggy.PluginManager("madqa")
    pm.add_hookspecs(hookspecs)
    if importlib.util.find_spec("madqa_plugins") is None and str(_REPO_ROOT) not in sys.path:
        sys.path.append(str(_REPO_ROOT))  # run from a checkout, outside its root folder
    for module_name in BUILTIN_PLUGINS:
        pm.register(importlib.import_module(module_name), name=module_name)
    if entry_points:
        pm.load_setuptools_entrypoints("madqa")
    if plugins_dir:
        _load_dir(pm, Path(plugins_dir))
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"a plugin implements an unknown hook: {exc}") from exc
    return pm
