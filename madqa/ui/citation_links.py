"""Citations that stay clickable in the chat's history.

The Chatbot draws a message's ``options`` (the citation chips) under the latest message only, so an
earlier answer would lose its way to its pages. Each answer therefore also names its cited pages as
links in its own text (``#madqa-cite=<value>``); a click on one (or Enter on it: links take the
keyboard focus) is caught in the browser and handed to the chat's hidden pick box
(``<chat id>-cite-pick``), whose event opens the page as a chip would, quote highlighted.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote, unquote

PREFIX = "#madqa-cite="
PICK_SUFFIX = "-cite-pick"  # the pick box of the chat with elem_id X is X-cite-pick

CITE_CSS = f"""
[id$="{PICK_SUFFIX}"] {{ display: none !important; }}
a.cite-link, a[href^="{PREFIX}"] {{ white-space: nowrap; }}
"""

# Part of the app's ``js``: one listener, in the capture phase, before the chat's own link handling.
CITE_JS = f"""
  document.addEventListener('click', (e) => {{
    const link = e.target && e.target.closest ? e.target.closest('a[href^="{PREFIX}"]') : null;
    if (!link) return;
    e.preventDefault();
    e.stopPropagation();
    const chat = link.closest('[id$="-chat"]');
    const box = chat && document.querySelector(`#${{chat.id}}{PICK_SUFFIX} textarea, #${{chat.id}}{PICK_SUFFIX} input`);
    if (!box) return;
    // a click number in the value: the same citation clicked twice is still a change
    const value = JSON.parse(decodeURIComponent(link.getAttribute('href').slice({len(PREFIX)})));
    window.madqaCiteClicks = (window.madqaCiteClicks || 0) + 1;
    box.value = JSON.stringify({{...value, click: window.madqaCiteClicks}});
    box.dispatchEvent(new Event('input', {{bubbles: true}}));
  }}, true);
"""


def cite_link(label: str, value: str, escape: Callable[[str], str]) -> str:
    """A Markdown link to a cited page: ``label`` shown (``escape``d: messages' ``md_escape``), the citation
    ``value`` in its address."""
    return f"[{escape(label)}]({PREFIX}{quote(value, safe='')})"


def link_value(href: str) -> str:
    """The citation value of a link's address (what the browser hands to the pick box)."""
    return unquote(href[len(PREFIX):]) if href.startswith(PREFIX) else ""
