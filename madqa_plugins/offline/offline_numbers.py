"""Answer type numbers for the offline reader: money, percentages, plain numbers and quantities with
units, and which units measure an asked attribute ("capacity" -> kWh, Ah, GB, ...)."""

from __future__ import annotations

import re

UNIT_OF = {  # an asked quantity -> the units that measure it
    "capacity": r"k?Wh|m?Ah|l|ml|GB|TB|MB", "voltage": r"[mk]?V", "weight": r"k?g|t|tonnes?|lbs?", "heavy": r"k?g|t|lbs?",
    "length": r"[mck]?m|in|ft", "height": r"[mc]?m|in|ft", "width": r"[mc]?m|in|ft", "depth": r"[mc]?m|ft",
    "distance": r"k?m|mi|miles", "temperature": r"°?[CF]", "power": r"[kM]?W", "speed": r"km/h|mph|m/s",
    "memory": r"[MGT]B", "storage": r"[MGT]B", "pressure": r"bar|psi|k?Pa", "frequency": r"[kMG]?Hz",
    "life": r"hours?|days?|weeks?|months?|years?", "duration": r"minutes?|hours?|days?|weeks?|months?|years?",
    "long": r"minutes?|hours?|days?|weeks?|months?|years?|[mck]?m", "warranty": r"months?|years?",
    "guarantee": r"months?|years?", "term": r"months?|years?", "period": r"days?|weeks?|months?|years?",
    "old": r"years?", "often": r"seconds?|minutes?|hours?|days?|weeks?|months?",
}

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALE = r"(?:\s?(?:million|billion|thousand|bn|mn|m|k)\b)?"
_MONEY1 = rf"(?:[$€£¥]\s?|\b(?:USD|EUR|GBP|CHF|JPY|CAD|AUD|SEK|NOK|DKK|PLN)\s?)-?(?:{_NUM}){_SCALE}"
_MONEY2 = rf"(?<![\w.,])(?:{_NUM}){_SCALE}\s?(?:USD|EUR|GBP|CHF|dollars|euros|pounds)\b"
MONEY_RE = re.compile(rf"(?:between\s+)?(?:{_MONEY1}|{_MONEY2})(?:\s*(?:and|to|-|–)\s*(?:{_MONEY1}|{_MONEY2}))?", re.I)
PERCENT_RE = re.compile(rf"(?<![\w.,])[-+−]?(?:{_NUM})\s?(?:%|percent\b|per cent\b)", re.I)
NUMBER_RE = re.compile(rf"(?<![\w.,/:-])[-−]?(?:{_NUM})(?![\w%/:]|[.,]\d|-\d)")
UNITS = (r"seconds?|minutes?|hours?|days?|weeks?|months?|years?|mm|cm|km|m|kg|g|t|tonnes?|l|ml|V|mV|A|mA|Ah|mAh|W|"
         r"kW|kWh|MW|MWh|Hz|kHz|MHz|GHz|°C|°F|bar|psi|Pa|kPa|dB|MB|GB|TB|Mbit/s|km/h|mph|m²|sq ft|pages?|units?|"
         r"pieces?|pcs|people|persons|employees|sites|rooms|beds|seats|points?|pt|bp|px|pixels?|dpi|em|inches|lines?")
QUANTITY_RE = re.compile(rf"(?<![\w.,])(?:{_NUM}|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b)"
                         rf"\s?(?:{UNITS})(?![\w²])", re.I)
# an ordinal with the noun it counts, and a year in brackets after it: "9th century", "13th CGPM (1967)"
ORDINAL_NOUN_RE = re.compile(r"(?<![\w.])\d+(?:st|nd|rd|th)\s+(?:[A-Z][\w-]*|[a-z]{3,}\b)(?:\s+\((?:1[5-9]|20)\d\d\))?")
# a whole bracketed tuple of numbers: "(0.0,0.0)", "(1, 2, 3)"
TUPLE_RE = re.compile(r"\(\s*-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?)+\s*\)")
# a speed-up or size factor: "3x", "2.5 ×", "10 times", "a factor of 4"
FACTOR_RE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:[x×](?!\w)|times\b|-?fold\b)|(?<=factor of )\d+(?:\.\d+)?", re.I)
# a TCP/UDP port: a whole number 1..65535 standing alone or after a host's colon ("localhost:8080"), never
# a piece of a URL's path, a version or a date
PORT_RE = re.compile(r"(?:(?<=[a-z0-9\]]:)|(?<![\w.:/\-]))\d{1,5}(?![\w.:/\-]|\.\d)", re.I)


def port_number(value: str) -> bool:
    """Whether ``value`` can be a port (1..65535)."""
    return value.isdigit() and 0 < int(value) < 65536
