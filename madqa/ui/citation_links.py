"""Citations that stay clickable in the chat's history.

The Chatbot draws a message's ``options`` (the citation chips) under the latest message only, so an
earlier answer would lose its way to its pages. Each answer therefore also names its cited pages as
links in its own text (``#madqa-cite=<value>``); a click on one (or Enter on it: links take the
keyboard focus) is caught in the browser and handed to the chat's hidden pick box
(``<chat id>-cite-pick``), whose event opens the page as a chip would, quote highlighted.

A keyboard user reaches them from the question box in one Tab: a skip link right after the box
("Go to the cited pages of the latest answer", shown when focused, there only while the latest answer
cites a page) moves the focus to that answer's first citation link; Enter then opens it.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote, unquote

PREFIX = "#madqa-cite="
PICK_SUFFIX = "-cite-pick"  # the pick box of the chat with elem_id X is X-cite-pick
SKIP_SUFFIX = "-cite-skip"  # the skip link of the chat X-chat, put after the question box of its row X-input-row
SKIP_TEXT = "Go to the cited pages of the latest answer"

CITE_CSS = f"""
[id$="{PICK_SUFFIX}"] {{ display: none !important; }}
a.cite-link, a[href^="{PREFIX}"] {{ white-space: nowrap; }}
[id$="-input-row"] {{ position: relative; }}
a.cite-skip {{ position: absolute; left: 8px; top: 4px; z-index: 5; padding: 6px 14px; border-radius: 999px;
  background: var(--background-fill-primary); border: 2px solid #2563eb; color: #1d4ed8; font-weight: 600;
  text-decoration: none; white-space: nowrap; }}
a.cite-skip:not(:focus) {{ clip-path: inset(50%); width: 1px; height: 1px; overflow: hidden; padding: 0; border: 0; }}
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
  // the latest answer's first citation link: in the messages after the last question, or none
  const latestCitation = (chat) => {{
    const messages = [...chat.querySelectorAll('.message')];
    const asked = messages.map((m) => m.classList.contains('user')).lastIndexOf(true);
    for (const m of messages.slice(asked + 1)) {{
      const link = m.querySelector('a[href^="{PREFIX}"]');
      if (link) return link;
    }}
    return null;
  }};
  const placeSkips = () => document.querySelectorAll('[id$="-input-row"]').forEach((row) => {{
    const chat = document.getElementById(row.id.replace(/-input-row$/, '-chat'));
    const box = row.querySelector('textarea');
    if (!chat || !box) return;
    const id = chat.id + '{SKIP_SUFFIX}';
    let skip = document.getElementById(id);
    if (!skip) {{
      skip = document.createElement('a');
      skip.id = id;
      skip.href = '#' + chat.id;
      skip.className = 'cite-skip';
      skip.textContent = {SKIP_TEXT!r};
      skip.addEventListener('click', (e) => {{
        e.preventDefault();
        const link = latestCitation(chat);
        if (link) link.focus();
      }});
    }}
    const holder = [...row.children].find((c) => c.contains(box));
    if (holder && skip.previousElementSibling !== holder) holder.after(skip);  // right after the box in Tab order
    const none = !latestCitation(chat);
    if (skip.hidden !== none) skip.hidden = none;
  }});
  new MutationObserver(placeSkips).observe(document.body, {{childList: true, subtree: true}});
  placeSkips();
"""


def cite_link(label: str, value: str, escape: Callable[[str], str]) -> str:
    """A Markdown link to a cited page: ``label`` shown (``escape``d: messages' ``md_escape``), the citation
    ``value`` in its address."""
    return f"[{escape(label)}]({PREFIX}{quote(value, safe='')})"


def link_value(href: str) -> str:
    """The citation value of a link's address (what the browser hands to the pick box)."""
    return unquote(href[len(PREFIX):]) if href.startswith(PREFIX) else ""
