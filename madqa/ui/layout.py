"""How the tabs fit the screen: the answer and its page side by side on a desktop, readable on a phone.

On a wide screen Ask's side column (the page viewer first, then the page galleries) stays in view
(sticky) while the chat and the settings scroll, so a citation opens its page beside the answer
that cited it, the whole page in view, and never scrolls the answer away. On a phone (``PHONE_PX``)
tables scroll sideways with whole words in their cells (the numbers of a short table in view), plots
keep their size, You search's form stacks, and the chat's first screen opens at its top (the intro
and the first example question), not scrolled to its bottom as Gradio leaves it. Galleries with no
page yet are not drawn as empty frames.
"""

from __future__ import annotations

from madqa.ui.modal import PHONE_PX

TABLE_PX = 900  # the width a phone's tables are laid out for (they scroll sideways)
SIDE_ID = "ask-side"  # Ask's side column: viewer, pages found, cited pages

LAYOUT_CSS = f"""
@media (min-width: {PHONE_PX + 1}px) {{
  #{SIDE_ID} {{ position: sticky !important; top: 8px; align-self: flex-start !important;
    max-height: calc(100vh - 16px); overflow-y: auto; overscroll-behavior: contain; }}
  /* the whole page in view under its caption, whatever the screen's height */
  #ask-page {{ height: clamp(320px, calc(100vh - 370px), 680px) !important; }}
}}
/* the chat's intro starts under its "Agent" label, not behind it */
#ask-chat .placeholder-content {{ padding-top: 28px; }}
/* a gallery with no page yet (a question just started, an answer with no citation): no empty frame, no title */
#ask-seen:not(:has(.thumbnail-item)), #ask-cited:not(:has(.thumbnail-item)) {{ display: none !important; }}
#{SIDE_ID}:not(:has(#ask-seen .thumbnail-item)) #ask-seen-title,
#{SIDE_ID}:not(:has(#ask-cited .thumbnail-item)) #ask-cited-title {{ display: none !important; }}
@media (max-width: {PHONE_PX}px) {{
  /* a column at most half the screen wide (the numbers beside their names in view); a table of many columns is
     laid out for a tablet's width and scrolls sideways inside its frame: Gradio sizes its columns from that
     width, so they keep whole words, never one letter per line, and headers stay over their cells */
  .table-wrap {{ --df-max-col-width: 45vw !important; }}
  .table-wrap:has(th:nth-child(5)) > .upload-container {{ min-width: {TABLE_PX}px !important; }}
  /* a plot a little taller: its legend goes under it on a phone, and the plot itself keeps ~200 px */
  .block:has(.vega-embed) {{ height: 340px !important; }}
  /* Compare's summary: laid out for 560 px (its row names 18%, cut to letters on a phone), B a swipe away */
  #compare-summary .table-wrap > .upload-container {{ min-width: 560px !important; }}
  /* Corpus's upload results and pages found (four columns, a long last one): the same, or their "page" and "score"
     headers went a letter a line and a refused file's reason was squeezed beside them */
  #corpus-results .table-wrap > .upload-container {{ min-width: 560px !important; }}
  #corpus-hits .table-wrap > .upload-container {{ min-width: 680px !important; }}  /* "score" in its 10% */
  /* You search: the answer box and the pages to cite one under the other, each page's name whole (wrapped) */
  .form:has(> #human-cites) {{ flex-wrap: wrap !important; }}
  .form:has(> #human-cites) > * {{ flex: 1 1 100% !important; min-width: 100% !important; }}
  #human-cites label {{ max-width: 100% !important; overflow-wrap: anywhere; white-space: normal !important; }}
  /* You search's pages: two a row, as tall as they need, names whole under them (five a row left 60 px each) */
  #human-pages {{ height: auto !important; }}
  #human-pages .grid-wrap {{ height: auto !important; max-height: 75vh; overflow-y: auto; padding-top: 30px; }}
  #human-pages .grid-container {{ grid-template-columns: repeat(2, minmax(0, 1fr)) !important; }}
  #human-pages .thumbnail-item {{ aspect-ratio: auto !important; height: auto !important; display: flex;
    flex-direction: column; }}
  #human-pages .thumbnail-item img {{ height: 190px !important; object-fit: contain; }}
  #human-pages .caption-label {{ position: static !important; max-width: 100% !important; white-space: normal !important;
    overflow: visible !important; text-overflow: clip !important; overflow-wrap: anywhere; font-size: .85em; }}
  /* a citation link may wrap in a narrow bubble instead of running past its edge */
  a[href^="#madqa-cite="] {{ white-space: normal !important; overflow-wrap: anywhere; }}
}}
"""

# Part of the app's ``js``: the phone's chat opens at its top while it holds no message yet.
LAYOUT_JS = f"""
  const chatTop = () => {{
    if (window.innerWidth > {PHONE_PX}) return;
    document.querySelectorAll('[id$="-chat"]').forEach((chat) => {{
      if (chat.querySelector('.message')) {{ delete chat.dataset.madqaTop; return; }}
      if (chat.dataset.madqaTop) return;
      const box = [...chat.querySelectorAll('*')].find((e) => e.scrollHeight > e.clientHeight + 1
        && /(auto|scroll)/.test(getComputedStyle(e).overflowY));
      if (!box) return;
      chat.dataset.madqaTop = '1';  // once per empty chat: a visitor's own scrolling is left alone
      box.scrollTop = 0;
      setTimeout(() => {{ box.scrollTop = 0; }}, 300);  // after Gradio's own scroll to the bottom
    }});
  }};
  // a page viewer's caption is read out when a citation opens its page beside the chat (the focus stays put)
  const liveCaptions = () => document.querySelectorAll('[id$="-page-caption"]:not([aria-live])')
    .forEach((c) => c.setAttribute('aria-live', 'polite'));
  // Gradio's overflow: hidden makes its container a scroll box that never scrolls, so nothing inside could stick
  // to the screen; clip cuts the same and leaves the page the scroller (set here: the app's CSS is scoped inside it)
  document.querySelectorAll('.gradio-container').forEach((c) => {{ c.style.overflow = 'clip'; }});
  new MutationObserver(() => {{ chatTop(); liveCaptions(); }}).observe(document.body, {{childList: true, subtree: true}});
  chatTop();
  liveCaptions();
"""
