"""On a phone the page viewer opens as a modal: a citation (or a thumbnail) shows its page over the chat.

Wide screens keep the viewer beside the chat (sticky there: ``ui.layout``). On a narrow one (``PHONE_PX``) the viewer's column is
turned into a dialog by the browser alone (no server round trip): full screen, a close button that
takes the focus, Tab kept inside, Escape or the button closes it and the focus goes back to the chip.
"""

from __future__ import annotations

import json

PHONE_PX = 640  # the same break as the phone layout's CSS

MODAL_CSS = f"""
.viewer-close {{ display: none; }}
@media (max-width: {PHONE_PX}px) {{
  .viewer-modal {{ position: fixed !important; inset: 0 !important; z-index: 1000 !important; margin: 0 !important;
    width: 100vw !important; max-width: 100vw !important; height: 100vh !important; overflow-y: auto !important;
    padding: 8px 10px 16px 10px !important; background: var(--background-fill-primary) !important;
    box-shadow: 0 0 0 100vmax rgba(0, 0, 0, .45); }}
  .viewer-modal .viewer-close {{ display: block; position: sticky; top: 0; z-index: 2; margin-left: auto;
    padding: 8px 16px; border-radius: 999px; border: 1px solid var(--border-color-primary);
    background: var(--button-secondary-background-fill); color: var(--body-text-color); font-weight: 600; }}
}}
"""

# Defined once when the page loads (part of the app's ``js``); the chip's event calls it.
MODAL_JS = f"""
  window.madqaViewer = (id) => {{
    const box = document.getElementById(id);
    if (!box) return;
    if (window.innerWidth > {PHONE_PX}) {{
      // once the new page is laid out; a viewer showing only its top edge counts as out of view
      setTimeout(() => {{
        // in a side column that scrolls on its own (sticky beside the chat): the viewer to its top, the page alone
        for (let a = box.parentElement; a && a !== document.body; a = a.parentElement) {{
          if (/(auto|scroll)/.test(getComputedStyle(a).overflowY) && a.scrollHeight > a.clientHeight + 1) {{
            a.scrollTop += box.getBoundingClientRect().top - a.getBoundingClientRect().top;
            break;
          }}
        }}
        const r = box.getBoundingClientRect();
        if (r.top < 0 || r.top > window.innerHeight / 2) box.scrollIntoView({{block: 'start'}});
      }}, 300);
      return;
    }}
    if (box.classList.contains('viewer-modal')) return;
    const opener = document.activeElement;
    let close = box.querySelector(':scope > .viewer-close');
    if (!close) {{
      close = document.createElement('button');
      close.type = 'button';
      close.className = 'viewer-close';
      close.textContent = '✕ Close';
      close.setAttribute('aria-label', 'Close the page');
      box.prepend(close);
    }}
    const focusable = () => [...box.querySelectorAll('button, [href], input, textarea, select, [tabindex]:not([tabindex="-1"])')]
      .filter((el) => !el.disabled && el.offsetParent !== null);
    const onKey = (e) => {{
      if (e.key === 'Escape') {{ e.preventDefault(); shut(); return; }}
      if (e.key !== 'Tab') return;
      const items = focusable();
      if (!items.length) return;
      const first = items[0], last = items[items.length - 1];
      if (!box.contains(document.activeElement)) {{ e.preventDefault(); first.focus(); }}
      else if (e.shiftKey && document.activeElement === first) {{ e.preventDefault(); last.focus(); }}
      else if (!e.shiftKey && document.activeElement === last) {{ e.preventDefault(); first.focus(); }}
    }};
    const shut = () => {{
      box.classList.remove('viewer-modal');
      box.removeAttribute('role'); box.removeAttribute('aria-modal'); box.removeAttribute('aria-label');
      document.removeEventListener('keydown', onKey, true);
      document.body.style.overflow = '';
      if (opener && document.contains(opener)) opener.focus();
    }};
    close.onclick = shut;
    box.classList.add('viewer-modal');
    box.setAttribute('role', 'dialog'); box.setAttribute('aria-modal', 'true');
    box.setAttribute('aria-label', 'Cited page');
    document.body.style.overflow = 'hidden';
    document.addEventListener('keydown', onKey, true);
    box.scrollTop = 0;
    close.focus();
  }};
"""


def open_viewer_js(container_id: str) -> str:
    """The ``js`` of an event that has just filled the viewer ``container_id``: a modal on a phone, else
    a scroll to it unless its top is already in the upper half of the screen."""
    return f"() => {{ if (window.madqaViewer) window.madqaViewer({json.dumps(container_id)}); }}"
