"""Settings from ``MADQA_*`` environment variables, and named pipeline configs (presets).

Every field says what it is for. Paths always come from here, never from the current folder.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from madqa.errors import CorpusError, SettingsError
from madqa.languages import language_named

PRESETS_DIR = Path(__file__).parent / "presets"


def _default_home() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "madqa"


DEFAULT_IMAGE_BUDGET_PX = 1_200_000  # pixels per page image when nothing else says
MAX_CONFIG_KB = 256  # a config file (TOML) on disk, checked before it is parsed
MAX_OPTION_CHARS = 10_000  # one PART.KEY=VALUE option's value, before it is parsed as TOML


def check_image_budget(px: int, source: str = "image budget") -> None:
    """SettingsError unless ``px`` is a sane image budget (pixels per page image); ``source`` names where
    the number came from (``--image-budget``, ``MADQA_IMAGE_BUDGET``), so the message says what it is."""
    if isinstance(px, bool) or not isinstance(px, int) or not 10_000 <= px <= 50_000_000:
        raise SettingsError(f"{source} {px!r} is outside 10,000..50,000,000: an image budget is pixels per "
                            "page image (e.g. 1200000 for 1.2 megapixels)")


def image_budget_px(settings: Settings, config: PipelineConfig | None = None, chosen: int | None = None) -> int:
    """The most pixels of a page image sent to a model or shown, decided here and nowhere else.

    In order: ``chosen`` (the CLI's ``--image-budget`` or the web app's slider), the config's own
    ``image_budget_px`` (a preset, a TOML file, ``--set``), ``MADQA_IMAGE_BUDGET`` (``settings``), then
    ``DEFAULT_IMAGE_BUDGET_PX`` (the setting's default)."""
    if chosen is not None:
        return chosen
    if config is not None and config.image_budget_px is not None:
        return config.image_budget_px
    return settings.image_budget_px


@dataclass(frozen=True)
class Settings:
    """Process-wide settings; build with ``Settings.from_env()``."""

    home: Path = field(default_factory=_default_home, metadata={"env": "MADQA_HOME",
        "help": "folder for corpus indexes, manifests and the page-image cache"})
    plugins_dir: str | None = field(default=None, metadata={"env": "MADQA_PLUGINS_DIR",
        "help": "folder of single-file plugins to load"})
    ocr: str = field(default="auto", metadata={"env": "MADQA_OCR",
        "help": "auto (OCR pages with no text layer), always, or never"})
    ocr_language: str = field(default="eng", metadata={"env": "MADQA_OCR_LANGUAGE",
        "help": "Tesseract language(s), e.g. eng or eng+deu; left at eng, a corpus's language chooses it"})
    language: str = field(default="", metadata={"env": "MADQA_LANGUAGE",
        "help": "the language new corpora are analysed and OCR'd in (en, de, fr, ...; see docs/search.md); "
                "empty: detected from the pages' text, and a corpus keeps the language it has"})
    ocr_dpi: int = field(default=300, metadata={"env": "MADQA_OCR_DPI", "help": "resolution pages are OCR'd at"})
    index_retrievers: str = field(default="", metadata={"env": "MADQA_INDEX_RETRIEVERS",
        "help": "retrievers whose indexes ingest writes, comma-separated (default: the BM25 ones; "
                "add dense to embed at ingest for hybrid)"})
    image_budget_px: int = field(default=DEFAULT_IMAGE_BUDGET_PX, metadata={"env": "MADQA_IMAGE_BUDGET",
        "help": "most pixels (width x height) of a page image sent to a model, unless a config, the CLI's "
                "--image-budget or the web app's slider says otherwise"})
    image_format: str = field(default="png", metadata={"env": "MADQA_IMAGE_FORMAT",
        "help": "png, jpeg or webp"})
    cache_size_mb: int = field(default=2048, metadata={"env": "MADQA_CACHE_MB",
        "help": "size limit of the page-image cache"})
    pdf_memory_mb: int = field(default=768, metadata={"env": "MADQA_PDF_MEMORY_MB",
        "help": "most memory (address space) the process reading one PDF may use; past it the file fails"})
    pdf_timeout_s: float = field(default=30.0, metadata={"env": "MADQA_PDF_TIMEOUT_S",
        "help": "most CPU seconds opening a PDF or reading one of its pages may take; past it the file fails"})
    render_timeout_s: float = field(default=10.0, metadata={"env": "MADQA_RENDER_TIMEOUT_S",
        "help": "most CPU seconds drawing one page image (or its highlight boxes) may take; past it the page "
                "shows as not drawable (the drawer's memory is capped by MADQA_PDF_MEMORY_MB)"})
    render_max_image_mp: float = field(default=250.0, metadata={"env": "MADQA_RENDER_MAX_IMAGE_MP",
        "help": "most megapixels the images of one page may declare; a page past it is not drawn"})
    max_page_chars: int = field(default=100_000, metadata={"env": "MADQA_MAX_PAGE_CHARS",
        "help": "characters of text kept per page (the rest is cut, with a warning)"})
    max_file_chars: int = field(default=20_000_000, metadata={"env": "MADQA_MAX_FILE_CHARS",
        "help": "characters of text kept per file (later pages get none, with a warning)"})
    config: str = field(default="offline", metadata={"env": "MADQA_CONFIG",
        "help": "the default pipeline config: a preset's name, a name from MADQA_CONFIG_DIR, or a .toml file's path"})
    config_dir: str = field(default="", metadata={"env": "MADQA_CONFIG_DIR",
        "help": "a folder of the operator's own config files (*.toml), offered beside the presets (each by its "
                "file name, unless it sets name = ...)"})
    collections: str = field(default="", metadata={"env": "MADQA_COLLECTIONS",
        "help": "folders of PDFs the web app serves to every visitor, ';'-separated, each DIR, NAME=DIR, "
                "NAME=DIR:LANG or NAME=DIR#QUESTIONS (also app.py --corpus; madqa/collections.py)"})
    demo: bool = field(default=True, metadata={"env": "MADQA_DEMO",
        "help": "offer the bundled demo corpus in the web app (0: only the collections and uploads; also "
                "app.py --no-demo)"})
    host: str = field(default="127.0.0.1", metadata={"env": "MADQA_HOST", "help": "address the web app binds"})
    port: int = field(default=7860, metadata={"env": "MADQA_PORT", "help": "port the web app listens on"})
    # --- the public web app's limits (madqa/ui/policy.py applies them; docs/reliability.md) -----------------
    web_backends: str = field(default="offline,litellm", metadata={"env": "MADQA_WEB_BACKENDS",
        "help": "backends a web visitor may pick (comma-separated); test-only backends are never offered"})
    web_providers: str = field(default=("openai,anthropic,gemini,mistral,groq,deepseek,xai,openrouter,together_ai,"
                                        "fireworks_ai,cohere,cohere_chat"),
        metadata={"env": "MADQA_WEB_PROVIDERS", "help": "litellm providers a web visitor may use without an "
                  "api_base, with the server's key for that provider's own endpoint"})
    allowed_api_bases: str = field(default="", repr=False, metadata={"env": "MADQA_ALLOWED_API_BASES", "private": True,
        "help": "operator endpoints (comma-separated URL prefixes) a visitor may type even when private; "
                "the server's key may be sent there"})
    fast_exit: bool = field(default=True, metadata={"env": "MADQA_FAST_EXIT",
        "help": "let a command that used litellm end without the interpreter's last garbage collection (~1 s)"})
    allow_private_api_base: bool = field(default=False, metadata={"env": "MADQA_ALLOW_PRIVATE_API_BASE",
        "help": "let a visitor's api_base resolve to loopback, private or link-local addresses (never with the "
                "server's key)"})
    web_provider_timeout_s: float = field(default=30.0, metadata={"env": "MADQA_WEB_PROVIDER_TIMEOUT",
        "help": "seconds a model call from the web app may take (2 attempts)"})
    web_question_timeout_s: float = field(default=300.0, metadata={"env": "MADQA_WEB_QUESTION_TIMEOUT",
        "help": "seconds one question from the web app may run before it is stopped"})
    web_jobs_per_session: int = field(default=2, metadata={"env": "MADQA_WEB_JOBS_PER_SESSION",
        "help": "questions and evaluations one browser session may run at once"})
    web_jobs_per_client: int = field(default=4, metadata={"env": "MADQA_WEB_JOBS_PER_CLIENT",
        "help": "questions and evaluations one client address may run at once"})
    web_requests_per_minute: int = field(default=60, metadata={"env": "MADQA_WEB_REQUESTS_PER_MINUTE",
        "help": "queued requests (and uploads) one client address may start per minute"})
    web_calls_budget: int = field(default=100, metadata={"env": "MADQA_WEB_CALLS_BUDGET",
        "help": "model calls on the server's keys per session and per client address in a day (0: no limit)"})
    web_tokens_budget: int = field(default=1_000_000, metadata={"env": "MADQA_WEB_TOKENS_BUDGET",
        "help": "tokens on the server's keys per session and per client address in a day (0: no limit)"})
    web_cost_budget_usd: float = field(default=1.0, metadata={"env": "MADQA_WEB_COST_BUDGET",
        "help": "US dollars on the server's keys per session and per client address in a day (0: no limit; a model "
                "litellm has no price for is charged an estimated $15 per million tokens)"})
    upload_quota_mb: int = field(default=4096, metadata={"env": "MADQA_UPLOAD_QUOTA_MB",
        "help": "all visitors' uploads together with their indexes and page stores (Gradio's upload folder "
                "and MADQA_HOME/uploads)"})
    upload_max_pages_per_file: int = field(default=1000, metadata={"env": "MADQA_UPLOAD_MAX_PAGES_PER_FILE",
        "help": "pages one uploaded PDF may have; counted when the file is opened, before any page is read"})
    upload_max_pages: int = field(default=3000, metadata={"env": "MADQA_UPLOAD_MAX_PAGES",
        "help": "pages one browser session's uploads may have together"})
    upload_index_timeout_s: float = field(default=600.0, metadata={"env": "MADQA_UPLOAD_INDEX_TIMEOUT",
        "help": "seconds indexing one upload may take; past it the upload is refused and nothing of it kept"})
    web_dense_max_pages: int = field(default=500, metadata={"env": "MADQA_WEB_DENSE_MAX_PAGES",
        "help": "most pages of a session's uploads the dense and hybrid retrievers embed (about 0.35 CPU-s a "
                "page); a larger upload is searched with BM25 instead, and the page says so"})
    min_free_mb: int = field(default=1024, metadata={"env": "MADQA_MIN_FREE_MB",
        "help": "uploads are refused when the disk has less free space than this"})
    upload_mb_per_hour: int = field(default=400, metadata={"env": "MADQA_UPLOAD_MB_PER_HOUR",
        "help": "megabytes one client address may upload in an hour"})
    session_ttl_s: int = field(default=6 * 3600, metadata={"env": "MADQA_SESSION_TTL",
        "help": "seconds a browser session (and its uploads) lives after its last upload or corpus switch"})
    sweep_interval_s: int = field(default=600, metadata={"env": "MADQA_SWEEP_INTERVAL",
        "help": "seconds between sweeps of expired sessions' upload folders (at least one per session lifetime)"})
    proxy_hops: int = field(default=0, metadata={"env": "MADQA_PROXY_HOPS",
        "help": "reverse proxies in front of the app (a client's address is taken from X-Forwarded-For)"})
    # --- read by built-in plugins, handed to them by the registry (a factory taking ``settings``) ---------
    search_timeout_s: float = field(default=5.0, metadata={"env": "MADQA_SEARCH_TIMEOUT_S",
        "help": "seconds one BM25 search may take before it returns what it found, with a \"partial\" note"})
    embed_threads: int = field(default=0, metadata={"env": "MADQA_EMBED_THREADS",
        "help": "threads that embed pages for dense/hybrid, each on one BLAS thread (0: the CPUs this process "
                "may use, at most 4)"})
    milvus_uri: str = field(default="", metadata={"env": "MADQA_MILVUS_URI",
        "help": "a Milvus server every ingest writes the milvus retriever's index to (empty: Milvus Lite, on "
                "first use)"})
    milvus_token: str = field(default="", repr=False, metadata={"env": "MADQA_MILVUS_TOKEN", "private": True,
        "help": "the token for a Milvus server when retriever.token is not given"})

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from the environment (or ``env``), then ``overrides``; bad values raise SettingsError."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(f.metadata["env"])
            if raw is None or raw == "":
                continue
            values[f.name] = _convert(f"{f.metadata['env']} ({f.name})", f.type, raw)
        if "port" not in values and env.get("GRADIO_SERVER_PORT"):
            values["port"] = _convert("GRADIO_SERVER_PORT (port)", "int", env["GRADIO_SERVER_PORT"])
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)
        settings.validate()
        return settings

    def validate(self) -> None:
        if self.language:
            try:
                language_named(self.language)
            except CorpusError as exc:
                raise SettingsError(f"MADQA_LANGUAGE: {exc}") from None
        if self.ocr not in ("auto", "always", "never"):
            raise SettingsError(f"ocr must be auto, always or never, not {self.ocr!r}")
        if self.image_format not in ("png", "jpeg", "webp"):
            raise SettingsError(f"image format must be png, jpeg or webp, not {self.image_format!r}")
        check_image_budget(self.image_budget_px, "MADQA_IMAGE_BUDGET")
        if not 128 <= self.pdf_memory_mb <= 1_000_000:
            raise SettingsError(f"MADQA_PDF_MEMORY_MB must be between 128 and 1,000,000, not {self.pdf_memory_mb}")
        if not 0.1 <= self.pdf_timeout_s <= 86_400:
            raise SettingsError(f"MADQA_PDF_TIMEOUT_S must be between 0.1 and 86,400 seconds, not {self.pdf_timeout_s}")
        if not 0.1 <= self.render_timeout_s <= 86_400:
            raise SettingsError(f"MADQA_RENDER_TIMEOUT_S must be between 0.1 and 86,400 seconds, not "
                                f"{self.render_timeout_s}")
        if not self.render_max_image_mp >= 1:
            raise SettingsError(f"MADQA_RENDER_MAX_IMAGE_MP must be at least 1, not {self.render_max_image_mp}")
        if self.max_page_chars < 1 or self.max_file_chars < 1:
            raise SettingsError("MADQA_MAX_PAGE_CHARS and MADQA_MAX_FILE_CHARS must be at least 1")
        if not 0.05 <= self.search_timeout_s <= 600:
            raise SettingsError(f"MADQA_SEARCH_TIMEOUT_S must be between 0.05 and 600 seconds, not "
                                f"{self.search_timeout_s}")
        if not 0 <= self.embed_threads <= 256:
            raise SettingsError(f"MADQA_EMBED_THREADS must be between 0 (the CPUs) and 256, not {self.embed_threads}")
        if not 1 <= self.port <= 65535:
            raise SettingsError(f"port {self.port} is not a TCP port")
        for name in POSITIVE_SETTINGS:
            if not getattr(self, name) > 0:
                raise SettingsError(f"setting {name} must be above 0, not {getattr(self, name)}")
        for name in NON_NEGATIVE_SETTINGS:
            if getattr(self, name) < 0:
                raise SettingsError(f"setting {name} cannot be negative, not {getattr(self, name)}")

    @property
    def cache_dir(self) -> Path:
        return Path(self.home) / "cache"

    @property
    def corpora_dir(self) -> Path:
        return Path(self.home) / "corpora"


POSITIVE_SETTINGS = ("web_provider_timeout_s", "web_question_timeout_s", "web_jobs_per_session", "web_jobs_per_client",
                     "web_requests_per_minute", "upload_quota_mb", "session_ttl_s", "sweep_interval_s",
                     "upload_max_pages_per_file", "upload_max_pages", "upload_index_timeout_s", "web_dense_max_pages")
NON_NEGATIVE_SETTINGS = ("web_calls_budget", "web_tokens_budget", "web_cost_budget_usd", "min_free_mb",
                         "upload_mb_per_hour", "proxy_hops")


def _convert(name: str, type_name: Any, raw: str) -> Any:
    type_name = str(type_name)
    if type_name == "bool":
        lowered = raw.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise SettingsError(f"{name} expects true or false, got {raw!r}")
    if type_name == "float":
        try:
            return float(raw)
        except ValueError:
            raise SettingsError(f"{name} expects a number, got {raw!r}") from None
    try:
        if type_name.startswith("int"):
            return int(raw.replace("_", ""))
        if type_name.startswith("float"):
            return float(raw.replace("_", ""))
        if "Path" in type_name:
            return Path(raw).expanduser()
    except ValueError:
        kind = "a number" if str(type_name).startswith("float") else "a whole number"
        raise SettingsError(f"{name} expects {kind}, got {raw!r}") from None
    return raw


@dataclass(frozen=True)
class PipelineConfig:
    """One named way to answer: backend + model, retriever, reranker, query strategy and limits."""

    name: str = "offline"
    description: str = ""
    backend: str = "offline"
    model: str = "offline"
    retriever: str = "whoosh"
    reranker: str = "none"
    query_strategy: str = "passthrough"
    top_k: int = 5
    max_steps: int = 10
    image_budget_px: int | None = None  # None: MADQA_IMAGE_BUDGET decides (``image_budget_px()``)
    temperature: float | None = None
    # The benchmark's closed world ("the answer is definitely in the documents"); False (the default for
    # people's own PDFs) lets the model answer that the documents do not hold the answer.
    answer_always_present: bool = False
    # The tools the agent is offered (``register_tools``; ``submit_answer`` is always offered too). The
    # default is the MADQA paper's agent: search, plus show_pages to see a page again. Navigation tools:
    # list_documents, document_outline, open_page, next_pages, search_in (docs/plugins.md).
    tools: tuple[str, ...] = ("search_documents", "show_pages")
    # Per-part options, handed to the part's factory: {"retriever": {...}, "reranker": {...},
    # "query_strategy": {...}, "backend": {...}, "context": {...} (the context policy, madqa/context.py)}.
    # In TOML: an ``[options.retriever]`` table; on the command line: ``--set retriever.analyzer=stemming``,
    # ``--set backend.timeout=30``, ``--set context.images_kept=1``.
    options: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.tools, (list, tuple)):  # a TOML array arrives as a list
            object.__setattr__(self, "tools", tuple(self.tools))

    def validate(self) -> PipelineConfig:
        if not isinstance(self.tools, tuple) or not all(isinstance(t, str) and t for t in self.tools) \
                or len(set(self.tools)) != len(self.tools):
            raise SettingsError(f"tools must be a list of distinct tool names, not {self.tools!r}")
        unknown = set(self.options) - set(OPTION_PARTS)
        if unknown or not all(isinstance(v, dict) for v in self.options.values()):
            raise SettingsError(f"options are tables named after a part ({', '.join(OPTION_PARTS)}), "
                                f"not {sorted(unknown) or self.options}")
        for part, table in self.options.items():
            secret = sorted(k for k in table if k.lower() in SECRET_KEYS)
            if secret:
                raise SettingsError(f"{part}.{secret[0]} cannot be an option: options are written into config "
                                    "names and prediction rows; set the provider's variable (OPENAI_API_KEY, ...) "
                                    f"or name another one with {part}.api_key_env=NAME")
        if not 1 <= self.top_k <= 50:
            raise SettingsError(f"top_k must be between 1 and 50, not {self.top_k}")
        if not 1 <= self.max_steps <= 100:
            raise SettingsError(f"max_steps must be between 1 and 100, not {self.max_steps}")
        if self.image_budget_px is not None:
            check_image_budget(self.image_budget_px, "the config's image_budget_px")
        if not isinstance(self.answer_always_present, bool):
            raise SettingsError(f"answer_always_present must be true or false, not {self.answer_always_present!r}")
        return self

    def part_options(self, part: str) -> dict[str, Any]:
        """The options table of one part (``retriever``, ``reranker``, ``query_strategy``, ``backend``)."""
        return dict(self.options.get(part, {}))

    def with_overrides(self, **overrides: Any) -> PipelineConfig:
        """A copy with the non-None overrides applied and validated.

        ``options`` given here is merged into the config's tables, key by key."""
        extra = overrides.pop("options", None) or {}
        changed = {k: v for k, v in overrides.items() if v is not None and getattr(self, k) != v}
        label = dict(changed)
        if extra:
            merged = {part: dict(table) for part, table in self.options.items()}
            for part, table in extra.items():
                for key, value in table.items():
                    if merged.get(part, {}).get(key) != value:
                        merged.setdefault(part, {})[key] = value
                        label[f"{part}.{key}"] = value
            if merged != self.options:
                changed["options"] = merged
        if not changed:
            return self
        if "name" not in changed:  # a config with other parts is another config: say so in its name
            base = self.name
            if "backend" in changed:  # another backend: named by what answers, not by the config it left
                base = f"{changed['backend']}:{changed.get('model', self.model)}"
                label = {k: v for k, v in label.items() if k not in ("backend", "model")}
            changed["name"] = base + ("[" + ",".join(f"{k}={_label(v)}" for k, v in sorted(label.items())) + "]"
                                      if label else "")
        return replace(self, **changed).validate()

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["tools"] = list(self.tools)
        d["options"] = {part: dict(table) for part, table in self.options.items()}
        return d


def _label(value: Any) -> str:
    """A changed value as the config's name shows it (a list of tools as ``a+b``)."""
    return "+".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)


OPTION_PARTS = ("retriever", "reranker", "query_strategy", "backend", "context", "budget")
SECRET_KEYS = frozenset({"api_key", "key", "password", "token"})  # never an option: they would be stored


def parse_options(texts: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Several ``PART.KEY=VALUE`` texts merged into option tables (a later key wins)."""
    merged: dict[str, dict[str, Any]] = {}
    for text in texts:
        for part, table in parse_option(text).items():
            merged.setdefault(part, {}).update(table)
    return merged


def parse_option(text: str) -> dict[str, dict[str, Any]]:
    """``"retriever.analyzer=stemming"`` -> ``{"retriever": {"analyzer": "stemming"}}``.

    The value is read as a TOML value when it is one (``3``, ``0.5``, ``true``, ``"a b"``),
    else kept as text."""
    key, sep, raw = text.partition("=")
    part, dot, name = key.strip().partition(".")
    if not sep or not dot or not name or part not in OPTION_PARTS:
        raise SettingsError(f"option {text!r} should look like PART.KEY=VALUE with PART one of "
                            f"{', '.join(OPTION_PARTS)}")
    if len(raw) > MAX_OPTION_CHARS:
        raise SettingsError(f"option {key.strip()!r}: its value has {len(raw):,} characters; at most "
                            f"{MAX_OPTION_CHARS:,}")
    try:
        value: Any = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    except RecursionError:
        raise SettingsError(f"option {key.strip()!r}: its value is nested too deeply") from None
    return {part: {name.strip(): value}}


def list_configs() -> dict[str, PipelineConfig]:
    """Every named config shipped in ``madqa/presets/*.toml``, by name."""
    return {p.stem: load_config(p.stem) for p in sorted(PRESETS_DIR.glob("*.toml"))}


def operator_configs(config_dir: str, config: str = "") -> tuple[dict[str, PipelineConfig], list[str]]:
    """The operator's own configs: every ``*.toml`` in ``config_dir`` and ``config`` when it is a ``.toml`` path,
    by name, and one line per problem (a file that cannot be read or is not a valid config, a name given twice
    or taken by a preset). A config with a problem is left out; the caller decides whether that stops it."""
    found: dict[str, PipelineConfig] = {}
    problems: list[str] = []
    paths: list[Path] = []
    if config_dir.strip():
        folder = Path(config_dir.strip()).expanduser()
        if not folder.is_dir():
            problems.append(f"MADQA_CONFIG_DIR {config_dir!r} is not a folder")
        else:
            paths = sorted(folder.glob("*.toml"))
            if not paths:
                problems.append(f"MADQA_CONFIG_DIR {config_dir!r} holds no *.toml config file")
    if Path(config).suffix == ".toml":
        path = Path(config).expanduser()
        if not path.is_file():
            problems.append(f"MADQA_CONFIG {config!r}: no such file")
        elif all(path.resolve() != p.resolve() for p in paths):
            paths.append(path)
    presets = {p.stem for p in PRESETS_DIR.glob("*.toml")}
    for path in paths:
        try:
            loaded = load_config(str(path))
        except SettingsError as exc:
            problems.append(f"{path}: {exc}")
            continue
        if loaded.name in presets:
            problems.append(f"{path}: its name {loaded.name!r} is a preset's; give it another (name = \"...\")")
        elif loaded.name in found:
            problems.append(f"{path}: its name {loaded.name!r} is another file's too")
        else:
            found[loaded.name] = loaded
    return found, problems


def config_name(config: str) -> str:
    """The name ``MADQA_CONFIG`` picks: a ``.toml`` file's config's own name, else the text as given."""
    if Path(config).suffix == ".toml" and Path(config).expanduser().is_file():
        try:
            return load_config(str(Path(config).expanduser())).name
        except SettingsError:
            return config  # operator_configs says what is wrong with it
    return config


def config_keys(name_or_path: str | None) -> set[str]:
    """The keys a named preset or TOML file sets itself (the rest are defaults); empty for None."""
    return set(_config_data(name_or_path)[1]) if name_or_path else set()


def load_config(name_or_path: str) -> PipelineConfig:
    """A named preset, or a TOML file given by path; unknown keys or names raise SettingsError."""
    path, data = _config_data(name_or_path)
    allowed = {f.name for f in fields(PipelineConfig)}
    unknown = set(data) - allowed
    if unknown:
        raise SettingsError(f"config {path.name}: unknown keys {sorted(unknown)}")
    data.setdefault("name", path.stem)
    try:
        return PipelineConfig(**data).validate()
    except TypeError as exc:
        raise SettingsError(f"config {path.name}: {exc}") from exc


def _config_data(name_or_path: str) -> tuple[Path, dict[str, Any]]:
    path = Path(name_or_path)
    if not (path.suffix == ".toml" and path.is_file()):
        path = PRESETS_DIR / f"{name_or_path}.toml"
        if not path.is_file():
            known = ", ".join(p.stem for p in sorted(PRESETS_DIR.glob("*.toml")))
            if Path(name_or_path).suffix == ".toml":  # a file named, not a preset: say the file is not there
                raise SettingsError(f"config file {name_or_path!r} does not exist (or name a config: {known})")
            raise SettingsError(f"unknown config {name_or_path!r} (known: {known})")
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_KB * 1024:  # checked before a byte is parsed (issue 39)
            raise SettingsError(f"config {path} is {size / 1024:,.0f} KB; a config file may be at most "
                                f"{MAX_CONFIG_KB} KB")
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"config {path} cannot be read: {exc}") from exc
    except RecursionError:
        raise SettingsError(f"config {path} cannot be read: nested too deeply") from None
    return path, data
