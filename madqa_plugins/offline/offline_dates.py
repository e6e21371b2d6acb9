"""Answer type dates, years and times for the offline reader: the spans that look like them."""

from __future__ import annotations

import re

MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
          r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
MONTHS = frozenset("January February March April May June July August September October November December".split())
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"  # a day or a month written with digits: "7.99.23" is a version, not a date
DATE_RE = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH},?\s+\d{{4}}|{MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    rf"|\d{{4}}-\d{{2}}-\d{{2}}|{_DAY}[/.]{_DAY}[/.](?:\d{{4}}|\d{{2}})|{MONTH}\s+\d{{4}})(?![\w/.-]\d)")
YEAR_RE = re.compile(r"(?<![\w,.\-/])(?:1[89]|20)\d\d(?![\w,%/-]|\.\d)")
# a time: 10:30 (pm), or 10.30 with am / pm ("0.25" or "1.00" alone is a decimal, not a time)
_CLOCK = r"\d{1,2}(?::\d{2}(?![.:]?\d)\s?(?:[ap]\.?m\.?)?|\.\d{2}\s?[ap]\.?m\.?)"
TIME_RE = re.compile(rf"(?:between\s+)?(?<![\d:.])\b{_CLOCK}(?:\s*(?:and|to|-|–)\s*{_CLOCK})?(?!\d)", re.I)
