"""Agent steps as chat messages: plain functions from typed steps to Gradio message dicts.

No Gradio import and no I/O, so the UI's wording is unit-tested without a server. A search or a
model note becomes a collapsible "thought" (``metadata.title``); the answer is a plain message
whose citations are clickable ``options`` (the Chatbot's ``option_select`` event shows the page).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from madqa.text import plural as text_plural
from madqa.types import AnswerStep, ErrorStep, ModelStep, PageRef, SearchStep, SteerStep, Step, ToolCall, ToolStep
from madqa.ui.answer_marks import answer_badge
from madqa.ui.citation_links import cite_link

Message = dict[str, Any]
TITLE_CHARS = 90
RESULT_CHARS = 1500  # of a tool's text result shown in its step
SNIPPET_CHARS = 160
WRAP_NAMES_OVER = 20  # characters of a file name past which it gets places to wrap
_WRAP_AFTER = re.compile(r"\\[_.\-]|/")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$])")
_INERT_SPECIAL = re.compile(r"[\\`*_{}\[\]()#+\-.!|<>~$&\"']|:(?=/)")
# a path on the server: "/" (or "~/", "./") not inside a word, a URL or a fraction, then folders
_SERVER_PATH = re.compile(r"""(?<![\w/.:~-])(?:~|\.{1,2})?/(?:[^/\s'"()<>\[\]{},;|`]+/)+""")


# --- text helpers ------------------------------------------------------------------------


def md_escape(text: str) -> str:
    """``text`` with Markdown and HTML specials backslash-escaped, on one line."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def inert(text: str, keep_lines: bool = False) -> str:
    """``text`` with every Markdown and HTML special as a numeric character reference (``<`` -> ``&#60;``).

    It shows as itself whether the browser renders it as Markdown or as HTML (chat titles and user
    messages are rendered as HTML too): no tag, link, image or autolink can come out of it."""
    lines = str(text).splitlines() if keep_lines else [str(text)]
    escaped = [_INERT_SPECIAL.sub(lambda m: f"&#{ord(m.group())};", " ".join(line.split())) for line in lines]
    return "  \n".join(line for line in escaped if line)


def md_escape_lines(text: str) -> str:
    """Like ``md_escape`` but keeping line breaks (model notes): nothing in it renders as a link or image."""
    lines = [md_escape(line) for line in str(text).strip().splitlines()]
    return "  \n".join(line for line in lines if line)


def md_code(text: str) -> str:
    """``text`` as inline code, with a backtick fence longer than any run inside it."""
    flat = " ".join(str(text).split())
    longest = max((len(m) for m in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def shorten(text: str, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret (e.g. an API key echoed in a provider error) replaced by ***."""
    for secret in secrets:
        if secret and len(secret) >= 6:
            text = text.replace(secret, "***")
    return text


def hide_paths(text: str) -> str:
    """``text`` with the folders of every path in it cut (``/srv/home/uploads/TOKEN/docs/a.pdf`` -> ``…/a.pdf``):
    error texts from libraries quote server paths, which tell a visitor the server's layout and may hold
    a session's token. URLs and fractions are left alone."""
    return _SERVER_PATH.sub("…/", str(text))


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 page``, ``2 pages``, ``1 search``, ``2 searches`` (``madqa.text.plural``, the one place)."""
    return text_plural(n, word, many)


def page_label(ref: PageRef | Mapping[str, Any]) -> str:
    file, page = (ref.file, ref.page) if isinstance(ref, PageRef) else (ref.get("file"), ref.get("page"))
    return f"{file} p.{page}"


def md_page_label(ref: PageRef | Mapping[str, Any]) -> str:
    """``page_label`` escaped for the chat, a long file name given places to wrap after ``/ _ . -`` (``<wbr>``,
    never copied with the text): in a narrow pane (Compare's) it broke mid-word ("annual_report_2024.p df")."""
    escaped = md_escape(page_label(ref))
    file = ref.file if isinstance(ref, PageRef) else str(ref.get("file"))
    if len(file) <= WRAP_NAMES_OVER:
        return escaped
    name = md_escape(file)
    return _WRAP_AFTER.sub(lambda m: m.group() + "<wbr>", name) + escaped[len(name):]


# --- citations as option values --------------------------------------------------------------


QUOTE_FOUND = "✓ quote found on the page"  # the quote's claim; the answer's own mark is answer_badge's
MARK_CHARS = 400  # the most characters of one text to highlight that a client may send back


def citation_value(corpus_key: str, ref: PageRef, quote: str | None = None, answers: Sequence[str] = (),
                   lines: Sequence[str] = ()) -> str:
    """The value of a clickable citation: which corpus of the session, which file and page, and the
    quote (or a closest passage's matching ``lines``) and answer words to highlight on it."""
    data: dict[str, Any] = {"corpus": corpus_key, "file": ref.file, "page": ref.page}
    if quote:
        data["quote"] = quote[:MARK_CHARS]
    if lines:
        data["lines"] = [ln[:MARK_CHARS] for ln in lines[:10]]
    if answers:
        data["answer"] = [a[:MARK_CHARS] for a in answers[:10]]
    return json.dumps(data, ensure_ascii=False)


def citation_marks(value: Any) -> tuple[list[str], list[str]]:
    """(quotes, answer words) to highlight from a citation value; empty for anything malformed."""
    try:
        data = value if isinstance(value, Mapping) else json.loads(str(value))
    except ValueError:
        return [], []
    if not isinstance(data, Mapping):
        return [], []
    quote, answers, lines = data.get("quote"), data.get("answer"), data.get("lines")
    quotes = [quote[:MARK_CHARS]] if isinstance(quote, str) and quote.strip() else []
    if isinstance(lines, list):
        quotes += [ln[:MARK_CHARS] for ln in lines[:10] if isinstance(ln, str) and ln.strip()]
    words = [a[:MARK_CHARS] for a in answers[:10] if isinstance(a, str) and a.strip()] \
        if isinstance(answers, list) else []
    return quotes, words


def passage_value(value: Any) -> bool:
    """Whether a citation value opens a refusal's closest passage (its lines to mark) rather than a citation."""
    try:
        data = value if isinstance(value, Mapping) else json.loads(str(value))
    except ValueError:
        return False
    return isinstance(data, Mapping) and isinstance(data.get("lines"), list) and not data.get("quote")


def parse_citation_value(value: Any) -> tuple[str, PageRef] | None:
    """The (corpus key, page) of a citation value; None for anything malformed (it comes from a client)."""
    if isinstance(value, Mapping):
        data: Any = value
    else:
        try:
            data = json.loads(str(value))
        except ValueError:
            return None
    if not isinstance(data, Mapping):
        return None
    corpus, file, page = data.get("corpus"), data.get("file"), data.get("page")
    if not isinstance(corpus, str) or not isinstance(file, str) or not file:
        return None
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        return None
    return corpus, PageRef(file, page)


# --- messages ----------------------------------------------------------------------------


def user_message(question: str) -> Message:
    """The visitor's question as typed, shown as text (never as HTML or Markdown)."""
    return {"role": "user", "content": inert(question, keep_lines=True)}


def pending_message(title: str = "Working…", detail: str = "") -> Message:
    """A thought with a spinner, shown while the next step is on its way (``detail``: Markdown, escaped by the caller)."""
    return {"role": "assistant", "content": detail, "metadata": {"title": inert(title), "status": "pending"}}


def notice_message(text: str) -> Message:
    """A plain assistant message for something the person should read (an error, a warning)."""
    return {"role": "assistant", "content": text}


STOPPED = "⏹ **Stopped** before an answer: nothing was answered for this question."


def stopped_chat(history: Sequence[Message] | None) -> list[Message]:
    """The chat once *Stop* cancelled a question: its trace no longer says "Working…" and its pending step (a search
    on its way, the wait for a collection) is closed, with a line that no answer came. Unchanged when nothing was
    running (Stop pressed as the answer came in)."""
    shown = list(history or [])
    running = [m for m in shown if isinstance(m, dict) and (m.get("metadata") or {}).get("status") == "pending"]
    if not running:
        return shown
    out: list[Message] = []
    for message in shown:
        meta = message.get("metadata") or {} if isinstance(message, dict) else {}
        if meta.get("status") != "pending":
            out.append(message)
            continue
        title = str(meta.get("title") or "")
        if meta.get("id"):  # the question's trace summary
            title = "Stopped · " + title.removeprefix("Working… ")
        else:  # the step that was on its way
            title = f"{title} (stopped)"
        out.append({**message, "metadata": {**meta, "title": title, "status": "done"}})
    return [*out, notice_message(STOPPED)]

def search_message(step: SearchStep, secrets: Sequence[str] = ()) -> Message:
    query = step.query or "(no query)"
    lines = [f"**Query as written:** {md_code(step.query)}" if step.query else "**Query as written:** (none)"]
    if step.executed_query and step.executed_query != step.query:
        lines.append(f"**Run as:** {md_code(step.executed_query)}")
    if step.strategy_note:
        lines.append(f"**Query strategy:** {md_escape(step.strategy_note)}")
    if step.retriever_note:
        lines.append(f"**Retriever:** {md_escape(step.retriever_note)}")
    if step.error:
        lines.append(f"**Error:** {md_escape(hide_paths(redact(step.error, secrets)))}")
    new = set(step.new_pages)
    if step.hits:
        lines.append(f"\nFound {plural(len(step.hits), 'page')}, {len(step.new_pages)} new (shown to the model):")
        for rank, hit in enumerate(step.hits, 1):
            mark = "new: " if hit.ref in new else ""
            seen = "" if hit.ref in new else " · seen before"
            snippet = f" — {md_escape(shorten(hit.snippet, SNIPPET_CHARS))}" if hit.snippet else ""
            lines.append(f"{rank}. {mark}**{md_page_label(hit.ref)}** · score {hit.score:.2f}{seen}{snippet}")
    else:
        lines.append("\nNo pages found.")
    log = f"{len(step.hits)} hits · {len(step.new_pages)} new"
    return {
        "role": "assistant",
        "content": "  \n".join(lines),
        "metadata": {"title": inert(shorten(f"Search {step.iteration}: {query}", TITLE_CHARS)), "log": log,
                     "duration": round(step.elapsed_s, 3), "status": "done"},
    }


def model_message(step: ModelStep, secrets: Sequence[str] = ()) -> Message:
    parts = [md_escape_lines(redact(step.text, secrets)) if step.text and step.text.strip() else "_(no text)_"]
    for call in step.tool_calls:
        if call.name == "search_documents":
            parts.append(f"→ search_documents {md_code(str(call.arguments.get('query', '')))}")
        elif call.name == "submit_answer":
            parts.append("→ submit_answer")
        else:
            parts.append(f"→ {md_escape(call.name)}")
    title = inert(f"Model · step {step.iteration}" + (" · must answer now" if step.forced_answer else ""))
    log = []
    if step.usage.total_tokens:
        log.append(f"{step.usage.total_tokens:,} tokens")
    if step.cost_usd:
        log.append(f"${step.cost_usd:.4f}")
    metadata: dict[str, Any] = {"title": title, "duration": round(step.elapsed_s, 3), "status": "done"}
    if log:
        metadata["log"] = " · ".join(log)
    return {"role": "assistant", "content": "  \n".join(parts), "metadata": metadata}


def error_message(step: ErrorStep, secrets: Sequence[str] = ()) -> Message:
    return {
        "role": "assistant",
        "content": md_escape(hide_paths(redact(step.message, secrets))),
        "metadata": {"title": inert(f"⚠ Problem in {step.where} · step {step.iteration}"), "status": "done"},
    }


def answer_message(step: AnswerStep, corpus_key: str = "demo", secrets: Sequence[str] = ()) -> Message:
    """The answer with its cited pages as clickable options."""
    if step.failure:  # not a refusal: the model or a plugin failed, or no answer could be read
        text = "**Failed.** " + md_escape(hide_paths(redact(step.failure, secrets)))
    elif step.answer:
        text = "**Answer:** " + " | ".join(md_escape(a) for a in step.answer)
    elif step.closest_passages:
        text = ("**No answer.** Nothing on the pages read was sure enough to answer; these are the closest "
                "passages, the lines that came nearest (not an answer, not checked).")
    else:
        text = "**No answer.** The agent did not find an answer in the documents."
    if badge := answer_badge(step, md_escape):  # on the answer's line: the mark belongs to it
        text += f" · {badge}"
    if step.citations:
        text += "  \n**Cited pages:** " + ", ".join(md_page_label(c) for c in step.citations)
        for n, c in enumerate(step.citations):
            quote = step.quote_of(n)
            if quote:
                found = step.quotes_found[n] if n < len(step.quotes_found) else None
                mark = {True: QUOTE_FOUND, False: "✗ quote not found on the page", None: ""}[found]
                text += f"  \nQuote, {md_page_label(c)}: “{md_escape(shorten(quote, 200))}” {mark}".rstrip()
        links = " · ".join(cite_link(chip_label(c), citation_value(corpus_key, c, step.quote_of(n), step.answer),
                                     md_escape) for n, c in enumerate(step.citations))
        text += f"  \nOpen a cited page (the quote highlighted): {links}"
    elif step.answer:
        text += "  \n**Cited pages:** none"
    for p in step.closest_passages:
        text += f"  \nClosest passage, {md_page_label(p.ref)}: " + " · ".join(
            f"“{md_escape(shorten(ln, 160))}”" for ln in p.lines)
    if step.closest_passages:
        links = " · ".join(cite_link(chip_label(p.ref), citation_value(corpus_key, p.ref, lines=p.lines), md_escape)
                           for p in step.closest_passages)
        text += f"  \nOpen a closest page (its matching lines highlighted): {links}"
    for flag in step.flags:
        if flag != step.failure:
            text += f"  \n⚑ {md_escape(redact(flag, secrets))}"
    message: Message = {"role": "assistant", "content": text}
    if step.citations:
        message["options"] = [{"label": chip_label(c),
                               "value": citation_value(corpus_key, c, step.quote_of(n), step.answer)}
                              for n, c in enumerate(step.citations)]
    elif step.closest_passages:
        message["options"] = [{"label": chip_label(p.ref), "value": citation_value(corpus_key, p.ref, lines=p.lines)}
                              for p in step.closest_passages]
    return message


def call_text(call: ToolCall) -> str:
    """A call as one line: ``open_page {"file": "a.pdf", "page": 3}``."""
    return f"{call.name} {json.dumps(call.arguments, ensure_ascii=False)}" if call.arguments else call.name


def tool_message(step: ToolStep, secrets: Sequence[str] = ()) -> Message:
    lines = [f"**Call:** {md_code(call_text(ToolCall(step.name, step.arguments)))}"
             + (" · changed by the person steering" if step.by == "person" else "")]
    if step.pages:
        lines.append(f"**Showed:** {', '.join(md_page_label(p) for p in step.pages)} "
                     f"({len(step.new_pages)} new)")
    lines.append(md_escape_lines(shorten(hide_paths(redact(step.text, secrets)), RESULT_CHARS)))
    log = plural(len(step.new_pages), "new page") + (" · error" if step.error else "")
    metadata: dict[str, Any] = {"title": inert(shorten(f"Tool {step.iteration}: {call_text(ToolCall(step.name, step.arguments))}",
                                                        TITLE_CHARS)),
                                "log": log, "duration": round(step.elapsed_s, 3), "status": "done"}
    return {"role": "assistant", "content": "  \n".join(lines), "metadata": metadata}


def steer_message(step: SteerStep) -> Message:
    said = {"approve": "approved the model's call", "edit": "edited the model's call",
            "replace": "replaced the model's call", "answer": "answered in the model's place"}[step.action]
    lines = [f"**Proposed:** {', '.join(md_code(call_text(c)) for c in step.proposed) or '(nothing)'}"]
    if step.action != "approve":
        lines.append(f"**Ran instead:** {', '.join(md_code(call_text(c)) for c in step.calls)}")
    return {"role": "assistant", "content": "  \n".join(lines),
            "metadata": {"title": inert(f"Person · step {step.iteration}: {said}"), "status": "done"}}


def step_message(step: Step, corpus_key: str = "demo", secrets: Sequence[str] = (),
                 parent: str | None = None) -> Message:
    """The chat message for any agent step; ``parent`` nests a thought under the trace summary."""
    if isinstance(step, SearchStep):
        message = search_message(step, secrets)
    elif isinstance(step, ModelStep):
        message = model_message(step, secrets)
    elif isinstance(step, ErrorStep):
        message = error_message(step, secrets)
    elif isinstance(step, AnswerStep):
        return answer_message(step, corpus_key, secrets)
    elif isinstance(step, ToolStep):  # a tool other than a search
        message = tool_message(step, secrets)
    elif isinstance(step, SteerStep):  # a person steering the agent (madqa.ui.steer)
        message = steer_message(step)
    else:
        raise TypeError(f"not an agent step: {type(step).__name__}")
    if parent is not None:
        message["metadata"]["parent_id"] = parent
    return message


def says_nothing(step: Step) -> bool:
    """A model step with no text whose only act is a search (the search step shows it): folded away."""
    return (isinstance(step, ModelStep) and not (step.text or "").strip() and not step.forced_answer
            and all(c.name == "search_documents" for c in step.tool_calls))


def next_pending(step: Step) -> Message | None:
    """The spinner shown after ``step`` until the next one arrives (None after the answer)."""
    if isinstance(step, AnswerStep):
        return None
    if isinstance(step, ModelStep):
        searches = [c for c in step.tool_calls if c.name == "search_documents"]
        if searches:
            return pending_message("Searching", md_escape(str(searches[0].arguments.get("query", ""))))
        return pending_message("Answering" if step.forced_answer else "Thinking")
    if isinstance(step, SearchStep):
        return pending_message("Reading the pages", f"{plural(len(step.new_pages), 'new page')} shown to the model")
    return pending_message("Thinking")


def backend_problem_message(model: str, backend: str, failed: ErrorStep, secrets: Sequence[str]) -> Message:
    """The answer slot when the model itself failed: what the provider said and what to do, up front."""
    reason = md_escape(shorten(hide_paths(redact(failed.message, secrets)), 500))
    return notice_message(f"⚠ **{md_escape(model)} could not answer** (backend {md_escape(backend)}): "
                          f"{reason}  \nWhat to do: check the key under Settings → API key (your own stays in this "
                          "browser session), try again in a minute if the provider is busy, or pick the offline "
                          "config, which needs no model.")


@dataclass
class StepChat:
    """One question's steps as chat messages, the same in Ask and in each pane of Compare: thoughts folded
    under the trace line ``trace_id``, then after it the answer with its backend badge, or the model's
    failure, or a problem the person should read."""

    trace_id: str
    corpus_key: str
    backend: str
    model: str
    secrets: Sequence[str] = ()
    hint: bool = True  # the badge's hint to pick a real model (Ask; Compare's panes show their configs)
    label: str = ""  # who answers, in words (``ui.model_bar.answerer``): the badge names it as the bar does
    scope_note: str = ""  # the documents searched when not all (``ui.scope_picker.scope_line``), under the answer
    steps: list[Step] = field(default_factory=list)
    thoughts: list[Message] = field(default_factory=list)
    after: list[Message] = field(default_factory=list)

    def add(self, step: Step) -> Message | None:
        """File ``step``'s message where it belongs; returns the spinner until the next step (None after the answer)."""
        self.steps.append(step)
        if isinstance(step, AnswerStep):
            failed = next((s for s in self.steps if isinstance(s, ErrorStep) and s.where == "backend"), None)
            if failed is not None:
                self.after.append(backend_problem_message(self.model, self.backend, failed, self.secrets))
            else:
                message = step_message(step, self.corpus_key, self.secrets)
                if any(isinstance(s, SteerStep) and s.action == "answer" for s in self.steps):
                    message["content"] += "  \n" + PERSON_BADGE  # the person wrote it, not the model
                else:
                    message["content"] += "  \n" + backend_badge(self.backend, self.model, hint=self.hint,
                                                                 label=self.label)
                if self.scope_note:
                    message["content"] += "  \n" + self.scope_note
                self.after.append(message)
        elif not says_nothing(step):
            self.thoughts.append(step_message(step, self.corpus_key, self.secrets, parent=self.trace_id))
        return next_pending(step)

    def problem(self, text: str) -> None:
        """A failure to show after the trace: secrets and server paths hidden, at most 500 characters."""
        self.after.append(notice_message(f"⚠ {md_escape(shorten(hide_paths(redact(text, self.secrets)), 500))}"))

    def unreachable(self, problem: str) -> None:
        """The model cannot be reached (no key, say): said up front, not as "did not find an answer"."""
        self.after.append(notice_message(f"⚠ **The model cannot be reached.** {md_escape(problem)}"))


def trace_summary(steps: Sequence[Step], elapsed_s: float) -> str:
    """``Searched 4× · 9 pages · 0.4 s``: what the agent did, in one line (the trace's title)."""
    searches = [s for s in steps if isinstance(s, SearchStep)]
    pages = len({ref for s in searches for ref in s.new_pages})
    did = f"Searched {len(searches)}×" if searches else "No search"
    problems = sum(1 for s in steps if isinstance(s, ErrorStep))
    tail = f" · ⚠ {plural(problems, 'problem')}" if problems else ""
    return f"{did} · {plural(pages, 'page')} read · {elapsed_s:.1f} s{tail}"


def trace_message(trace_id: str, steps: Sequence[Step], elapsed_s: float, done: bool) -> Message:
    """The collapsible one-line summary that holds the steps (nested thoughts) of one question."""
    title = trace_summary(steps, elapsed_s)
    return {"role": "assistant", "content": "" if steps else "_(no steps)_",
            "metadata": {"id": trace_id, "title": title if done else f"Working… {title}",
                         "status": "done" if done else "pending"}}


OFFLINE_CAVEAT = "it copies a span from the pages it found and can be confidently wrong"
OFFLINE_BADGE = f"the offline extractive baseline — no language model: {OFFLINE_CAVEAT}"  # when no label is given
PERSON_BADGE = "🏷 _Answered by the person beside the agent (Steer), not by the model._"
REAL_MODEL_HINT = "For a real model, paste an API key under Settings and pick a config such as gpt-4.1-mini."


def backend_badge(backend: str, model: str, hint: bool = True, label: str = "") -> str:
    """Which backend answered, on every answer, so a baseline's guess never passes for a model's.

    ``label``: the offline backend's own name for itself (``ui.model_bar.answerer``), the one the Ask bar shows."""
    if backend == "offline":
        named = label or OFFLINE_BADGE  # the backend's own label says what it is and its measured precision
        return f"🏷 _Answered by {md_escape(named)}._" + (f" _{REAL_MODEL_HINT}_" if hint else "")
    return f"🏷 _Answered by {md_escape(model)} (backend {md_escape(backend)})._"


def chip_label(ref: PageRef) -> str:
    """A citation chip: ``📄 annual_report_2024.pdf · p.8``."""
    return f"📄 {ref.file} · p.{ref.page}"


def thumbnail_caption(ref: PageRef, step: SearchStep | ToolStep | None = None) -> str:
    """A gallery caption: page first, so a narrow tile still shows it; the file's base name; the search (or
    the tool that showed it)."""
    caption = f"p.{ref.page} · {ref.file.rsplit('/', 1)[-1]}"
    if isinstance(step, ToolStep):
        return caption + f" ({step.name}, step {step.iteration})"
    return caption + (f" (search {step.iteration})" if step is not None else "")
