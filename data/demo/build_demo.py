#!/usr/bin/env python3
"""Build the bundled madqa demo corpus: PDFs under ``docs/`` and ``questions.jsonl``.

Usage::

    python data/demo/build_demo.py            # regenerate data/demo/ in place
    python data/demo/build_demo.py OUT_DIR    # write OUT_DIR/docs/... and OUT_DIR/questions.jsonl

The output is deterministic: fixed metadata and dates, no PDF /ID, Base-14 fonts only (nothing
embedded), and a seeded random generator for the scan noise. Running the script twice gives
byte-identical files. All companies, people, addresses and numbers are fictional.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pymupdf

HERE = Path(__file__).resolve().parent

# --------------------------------------------------------------------------------------------
# Layout primitives
# --------------------------------------------------------------------------------------------

A4_W, A4_H = 595, 842
SLIDE_W, SLIDE_H = 960, 540

BLACK = (0, 0, 0)
DARK = (0.15, 0.15, 0.18)
GREY = (0.42, 0.42, 0.45)
GRID = (0.82, 0.83, 0.86)
LIGHT = (0.94, 0.95, 0.97)
NAVY = (0.09, 0.20, 0.38)
TEAL = (0.0, 0.50, 0.55)
ORANGE = (0.91, 0.49, 0.13)
SKY = (0.55, 0.70, 0.85)
WHITE = (1, 1, 1)

REGULAR, BOLD, ITALIC = "helv", "hebo", "heit"
SERIF, SERIF_BOLD = "tiro", "tibo"
MONO, MONO_BOLD = "cour", "cobo"


def text_width(text: str, font: str = REGULAR, size: float = 10) -> float:
    return pymupdf.get_text_length(text, fontname=font, fontsize=size)


def wrap(text: str, width: float, font: str = REGULAR, size: float = 10) -> list[str]:
    """Greedy word wrap; explicit newlines start new lines."""
    lines: list[str] = []
    for para in text.split("\n"):
        words = para.split()
        if not words:
            lines.append("")
            continue
        cur = words[0]
        for word in words[1:]:
            trial = f"{cur} {word}"
            if text_width(trial, font, size) <= width:
                cur = trial
            else:
                lines.append(cur)
                cur = word
        lines.append(cur)
    for line in lines:
        if text_width(line, font, size) > width + 0.01:
            raise ValueError(f"word too long for width {width}: {line!r}")
    return lines


def put(page: pymupdf.Page, x: float, y: float, text: str, size: float = 10, font: str = REGULAR,
        color: Sequence[float] = BLACK, align: str = "l") -> None:
    """Write one line of text with its baseline at ``y``; align l/r/c relative to ``x``."""
    if align == "r":
        x -= text_width(text, font, size)
    elif align == "c":
        x -= text_width(text, font, size) / 2
    page.insert_text((x, y), text, fontname=font, fontsize=size, color=color)


class Builder:
    """Flows text, fields and tables down the pages of one document."""

    def __init__(self, width: float = A4_W, height: float = A4_H, margins: tuple = (60, 70, 60, 70),
                 decorate: Callable[[Builder, pymupdf.Page], None] | None = None,
                 footer: Callable[[pymupdf.Page, int, int], None] | None = None) -> None:
        self.doc = pymupdf.open()
        self.w, self.h = width, height
        self.left, self.top, self.right_margin, self.bottom_margin = margins
        self.right = width - self.right_margin
        self.bottom = height - self.bottom_margin
        self.decorate = decorate
        self.footer = footer
        self.page: pymupdf.Page | None = None
        self.y = self.top

    @property
    def width(self) -> float:
        return self.right - self.left

    def add_page(self, decorate: bool = True) -> pymupdf.Page:
        self.page = self.doc.new_page(width=self.w, height=self.h)
        self.y = self.top
        if decorate and self.decorate:
            self.decorate(self, self.page)
        return self.page

    def _need(self, height: float) -> None:
        if self.y + height > self.bottom + 0.01:
            raise RuntimeError(f"content overflows page {self.page.number + 1} (y={self.y:.0f}, need {height:.0f})")

    def space(self, dy: float) -> None:
        self.y += dy

    def para(self, text: str, size: float = 10, font: str = REGULAR, color: Sequence[float] = BLACK,
             indent: float = 0, width: float | None = None, leading: float = 1.38, gap: float = 7) -> None:
        width = width if width is not None else self.width - indent
        lines = wrap(text, width, font, size)
        step = size * leading
        self._need(step * len(lines))
        for line in lines:
            self.y += step
            if line:
                put(self.page, self.left + indent, self.y - size * 0.3, line, size, font, color)
        self.y += gap

    def heading(self, text: str, size: float = 14, color: Sequence[float] = NAVY, before: float = 6,
                after: float = 4, rule: bool = False) -> None:
        self.y += before
        self._need(size * 1.4 + after + 30)
        self.y += size * 1.2
        put(self.page, self.left, self.y, text, size, BOLD, color)
        if rule:
            self.page.draw_line((self.left, self.y + 5), (self.right, self.y + 5), color=color, width=0.8)
            self.y += 5
        self.y += after + 4

    def bullets(self, items: Sequence[str], size: float = 10, bullet: str = "-", gap: float = 3,
                indent: float = 14) -> None:
        for item in items:
            lines = wrap(item, self.width - indent, REGULAR, size)
            step = size * 1.38
            self._need(step * len(lines))
            put(self.page, self.left + 3, self.y + step - size * 0.3, bullet, size, BOLD)
            for line in lines:
                self.y += step
                put(self.page, self.left + indent, self.y - size * 0.3, line, size)
            self.y += gap
        self.y += 4

    def fields(self, pairs: Sequence[tuple[str, str]], label_w: float = 140, size: float = 10,
               x: float | None = None, step: float = 16) -> None:
        x = self.left if x is None else x
        self._need(step * len(pairs))
        for label, value in pairs:
            self.y += step
            put(self.page, x, self.y - 4, f"{label}:", size, BOLD)
            put(self.page, x + label_w, self.y - 4, value, size)
        self.y += 6

    def table(self, header: Sequence[str] | None, rows: Sequence[Sequence[str]], widths: Sequence[float],
              aligns: str | None = None, size: float = 9, x: float | None = None, bold_rows: Sequence[int] = (),
              header_fill: Sequence[float] = NAVY, zebra: bool = True, pad: float = 4, gap: float = 10) -> None:
        """Draw a table; cells wrap. ``aligns`` is one letter per column (l/r/c)."""
        x0 = self.left if x is None else x
        aligns = aligns or "l" + "r" * (len(widths) - 1)
        total_w = sum(widths)
        leading = size * 1.3

        def draw_row(cells: Sequence[str], font: str, color: Sequence[float], fill: Sequence[float] | None,
                     rule: bool) -> None:
            wrapped = [wrap(c, w - 2 * pad, font, size) for c, w in zip(cells, widths, strict=True)]
            n = max(len(lines) for lines in wrapped)
            row_h = n * leading + 2 * pad + 1
            self._need(row_h)
            if fill is not None:
                self.page.draw_rect(pymupdf.Rect(x0, self.y, x0 + total_w, self.y + row_h), color=None, fill=fill)
            cx = x0
            for lines, w, a in zip(wrapped, widths, aligns, strict=True):
                for k, line in enumerate(lines):
                    by = self.y + pad + (k + 1) * leading - size * 0.28
                    if a == "r":
                        put(self.page, cx + w - pad, by, line, size, font, color, "r")
                    elif a == "c":
                        put(self.page, cx + w / 2, by, line, size, font, color, "c")
                    else:
                        put(self.page, cx + pad, by, line, size, font, color)
                cx += w
            self.y += row_h
            if rule:
                self.page.draw_line((x0, self.y), (x0 + total_w, self.y), color=GRID, width=0.5)

        if header:
            draw_row(header, BOLD, WHITE, header_fill, False)
        for i, row in enumerate(rows):
            fill = LIGHT if zebra and i % 2 == 1 else None
            draw_row(row, BOLD if i in bold_rows else REGULAR, BLACK, fill, True)
        self.y += gap

    def finish(self, meta: dict[str, str], toc: list | None = None) -> bytes:
        n = len(self.doc)
        if self.footer:
            for page in self.doc:
                self.footer(page, page.number + 1, n)
        if toc:
            self.doc.set_toc(toc)
        return save(self.doc, meta)


def save(doc: pymupdf.Document, meta: dict[str, str]) -> bytes:
    """Serialise with fixed metadata, no /ID and full garbage collection: byte-reproducible."""
    stamp = meta.pop("date")
    doc.set_metadata({
        "title": meta.get("title", ""),
        "author": meta.get("author", ""),
        "subject": meta.get("subject", ""),
        "keywords": meta.get("keywords", ""),
        "creator": meta.get("creator", "Kestrel Dynamics document services"),
        "producer": "madqa demo corpus builder (PyMuPDF)",
        "creationDate": stamp,
        "modDate": stamp,
    })
    data = doc.tobytes(garbage=4, deflate=True, no_new_id=True)
    doc.close()
    return data


def bar_chart(page: pymupdf.Page, rect: pymupdf.Rect, categories: Sequence[str],
              series: Sequence[tuple[str, Sequence[float], Sequence[float]]], ymax: float, ystep: float,
              title: str, fmt: str = "{:.1f}", label_size: float = 8, cat_size: float = 8,
              title_size: float = 10) -> None:
    """Vertical (grouped) bar chart with gridlines, value labels and an optional legend."""
    put(page, rect.x0, rect.y0 + title_size, title, title_size, BOLD, DARK)
    top = rect.y0 + title_size + 8
    if len(series) > 1:
        lx = rect.x0
        for name, _, color in series:
            page.draw_rect(pymupdf.Rect(lx, top + 1, lx + 8, top + 9), color=None, fill=color)
            put(page, lx + 11, top + 8, name, cat_size, REGULAR, DARK)
            lx += 22 + text_width(name, REGULAR, cat_size)
        top += 16
    plot = pymupdf.Rect(rect.x0 + 30, top + 12, rect.x1 - 4, rect.y1 - cat_size - 8)
    steps = round(ymax / ystep)
    for k in range(steps + 1):
        v = k * ystep
        y = plot.y1 - v / ymax * plot.height
        page.draw_line((plot.x0, y), (plot.x1, y), color=GRID, width=0.5)
        put(page, plot.x0 - 4, y + 2.5, f"{v:g}", 7, REGULAR, GREY, "r")
    page.draw_line((plot.x0, plot.y1), (plot.x1, plot.y1), color=DARK, width=0.8)
    group_w = plot.width / len(categories)
    bar_w = group_w * 0.72 / len(series)
    for i, cat in enumerate(categories):
        gx = plot.x0 + i * group_w + group_w * 0.14
        for j, (_, values, color) in enumerate(series):
            val = values[i]
            bx = gx + j * bar_w
            h = val / ymax * plot.height
            page.draw_rect(pymupdf.Rect(bx + 1, plot.y1 - h, bx + bar_w - 1, plot.y1), color=None, fill=color)
            put(page, bx + bar_w / 2, plot.y1 - h - 3, fmt.format(val), label_size, REGULAR, DARK, "c")
        put(page, plot.x0 + (i + 0.5) * group_w, plot.y1 + cat_size + 3, cat, cat_size, REGULAR, DARK, "c")


def line_chart(page: pymupdf.Page, rect: pymupdf.Rect, categories: Sequence[str], values: Sequence[float],
               ymin: float, ymax: float, ystep: float, title: str, labels: Sequence[str],
               color: Sequence[float] = ORANGE, label_size: float = 8, cat_size: float = 8,
               title_size: float = 10, axis_fmt: str = "{:g}") -> None:
    """Line chart with markers and a printed label on every point."""
    put(page, rect.x0, rect.y0 + title_size, title, title_size, BOLD, DARK)
    plot = pymupdf.Rect(rect.x0 + 34, rect.y0 + title_size + 22, rect.x1 - 14, rect.y1 - cat_size - 8)
    steps = round((ymax - ymin) / ystep)
    for k in range(steps + 1):
        v = ymin + k * ystep
        y = plot.y1 - (v - ymin) / (ymax - ymin) * plot.height
        page.draw_line((plot.x0, y), (plot.x1, y), color=GRID, width=0.5)
        put(page, plot.x0 - 4, y + 2.5, axis_fmt.format(v), 7, REGULAR, GREY, "r")
    page.draw_line((plot.x0, plot.y1), (plot.x1, plot.y1), color=DARK, width=0.8)
    step_x = plot.width / len(categories)
    pts = []
    for i, (cat, val) in enumerate(zip(categories, values, strict=True)):
        x = plot.x0 + (i + 0.5) * step_x
        y = plot.y1 - (val - ymin) / (ymax - ymin) * plot.height
        pts.append(pymupdf.Point(x, y))
        put(page, x, plot.y1 + cat_size + 3, cat, cat_size, REGULAR, DARK, "c")
    page.draw_polyline(pts, color=color, width=2)
    for p, lab in zip(pts, labels, strict=True):
        page.draw_circle(p, 3, color=color, fill=WHITE, width=1.5)
        put(page, p.x, p.y - 7, lab, label_size, BOLD, DARK, "c")


# --------------------------------------------------------------------------------------------
# (1) Annual report -- finance/annual_report_2024.pdf, 12 pages
# --------------------------------------------------------------------------------------------

def annual_report() -> bytes:
    def decorate(b: Builder, page: pymupdf.Page) -> None:
        page.draw_rect(pymupdf.Rect(0, 0, b.w, 8), color=None, fill=NAVY)
        put(page, b.left, 36, "Kestrel Dynamics AG", 8, BOLD, NAVY)
        put(page, b.right, 36, "Annual Report 2024", 8, REGULAR, GREY, "r")
        page.draw_line((b.left, 42), (b.right, 42), color=GRID, width=0.5)

    def footer(page: pymupdf.Page, n: int, total: int) -> None:
        if n == 1:
            return
        page.draw_line((60, A4_H - 48), (A4_W - 60, A4_H - 48), color=GRID, width=0.5)
        put(page, 60, A4_H - 36, "Kestrel Dynamics AG | Annual Report 2024", 7.5, REGULAR, GREY)
        put(page, A4_W - 60, A4_H - 36, str(n), 7.5, BOLD, GREY, "r")

    b = Builder(decorate=decorate, footer=footer)

    # p1 cover
    page = b.add_page(decorate=False)
    page.draw_rect(pymupdf.Rect(0, 0, A4_W, 520), color=None, fill=NAVY)
    for i in range(6):
        page.draw_line((70 + i * 90, 510), (200 + i * 90, 380), color=(0.18, 0.32, 0.52), width=14)
    put(page, 60, 110, "KESTREL DYNAMICS AG", 14, BOLD, WHITE)
    put(page, 60, 210, "Annual Report 2024", 38, BOLD, WHITE)
    put(page, 60, 245, "Measuring what matters", 16, ITALIC, SKY)
    tiles = [("Revenue", "EUR 148.6 million"), ("Employees", "1,184"), ("Dividend proposal", "EUR 0.85")]
    for i, (label, value) in enumerate(tiles):
        x = 60 + i * 165
        page.draw_rect(pymupdf.Rect(x, 580, x + 150, 650), color=NAVY, width=1)
        put(page, x + 10, 600, label, 9, REGULAR, GREY)
        put(page, x + 10, 632, value, 15, BOLD, NAVY)
    put(page, 60, 760, "Kestrel Dynamics AG | Hafenstrasse 18 | 28217 Bremen | Germany", 9, REGULAR, GREY)
    put(page, 60, 774, "www.kestrel-dynamics.example", 9, REGULAR, GREY)

    # p2 contents and key figures
    b.add_page()
    b.heading("Contents", 18)
    contents = [
        ("Letter from the Chief Executive Officer", "3"), ("Report of the Supervisory Board", "4"),
        ("Business and segment overview", "5"), ("Financial review: income statement", "6"),
        ("Balance sheet and cash flow", "7"), ("Five-year overview", "8"), ("Our people", "9"),
        ("Sustainability", "10"), ("Risks and outlook", "11"), ("Financial calendar and contacts", "12"),
    ]
    for title, num in contents:
        b.y += 17
        put(b.page, b.left, b.y, title, 10.5)
        put(b.page, b.right, b.y, num, 10.5, BOLD, NAVY, "r")
        b.page.draw_line((b.left + text_width(title, REGULAR, 10.5) + 6, b.y),
                         (b.right - 16, b.y), color=GRID, width=0.5, dashes="[1 2] 0")
    b.space(20)
    b.heading("Key figures at a glance", 14)
    b.para("EUR million unless stated otherwise; financial year = calendar year.", 8.5, ITALIC, GREY, gap=4)
    b.table(["", "2024", "2023", "Change"], [
        ["Revenue", "148.6", "131.2", "+13.3%"],
        ["Operating income (EBIT)", "19.2", "15.0", "+28.1%"],
        ["EBIT margin", "12.9%", "11.4%", "+1.5 pp"],
        ["Net income", "13.4", "10.0", "+34.2%"],
        ["Earnings per share (EUR)", "1.08", "0.80", "+35.0%"],
        ["Free cash flow", "13.5", "10.4", "+29.1%"],
        ["Order backlog at 31 December", "58.3", "49.6", "+17.5%"],
        ["Employees at 31 December", "1,184", "1,047", "+13.1%"],
    ], [235, 80, 80, 80], size=9.5)

    # p3 CEO letter
    b.add_page()
    b.heading("Letter from the Chief Executive Officer", 16, rule=True)
    b.para("Dear shareholders, customers and colleagues,", 10.5, SERIF)
    for text in [
        "2024 was the strongest year in the history of Kestrel Dynamics. Revenue rose by 13.3% to EUR 148.6 "
        "million, and for the first time our operating income exceeded EUR 19 million. All three segments "
        "grew, and Software & Services was once again the fastest-growing part of our business with an "
        "increase of 30.2%.",
        "Demand for networked environmental monitoring remained strong throughout the year. Municipal "
        "utilities, port operators and industrial customers are investing in continuous air and water "
        "quality measurement, and our KX-200 data logger has become the backbone of many of these networks. "
        "We closed the year with an order backlog of EUR 58.3 million, which gives us good visibility for "
        "the months ahead.",
        "To keep pace with demand, we will open a second assembly plant in Porto, Portugal. The Supervisory "
        "Board approved the investment in November, and production is scheduled to start in the third "
        "quarter of 2025. At the same time we are bringing our field service organisation together: the "
        "Hamburg service team will move to our headquarters in Bremen during the first half of 2025.",
        "None of this would be possible without the people of Kestrel. Our workforce grew by 137 colleagues "
        "during the year, and I would like to thank every one of them for their commitment, their ideas and "
        "their care for our customers.",
        "We want our shareholders to share in this success. Together with the Supervisory Board we propose "
        "a higher dividend for 2024. For 2025 we expect further profitable growth; the details can be found "
        "in the outlook section of this report.",
    ]:
        b.para(text, 10.5, SERIF, leading=1.45, gap=9)
    b.para("Sincerely,", 10.5, SERIF)
    b.space(14)
    b.para("Dr. Miriam Hollenbeck\nChief Executive Officer\nBremen, 12 March 2025", 10.5, SERIF_BOLD, gap=4)

    # p4 supervisory board report
    b.add_page()
    b.heading("Report of the Supervisory Board", 16, rule=True)
    for text in [
        "In the 2024 financial year the Supervisory Board performed the duties incumbent upon it under the "
        "law and the Articles of Association. It advised the Management Board on the management of the "
        "company and monitored its activities on a continuous basis.",
        "The Supervisory Board held six ordinary meetings and one extraordinary meeting in 2024. The "
        "attendance rate was 96%. Between meetings, the Chair was in regular contact with the Chief "
        "Executive Officer and was informed without delay about events of material significance.",
    ]:
        b.para(text, 10, gap=8)
    b.heading("Focus topics in 2024", 12)
    b.bullets([
        "Strategy 2028 and the capacity expansion programme, including the new assembly plant in Porto, "
        "Portugal, which the Supervisory Board approved at its meeting on 19 November 2024.",
        "Pricing and margin development of the KX-200 product line.",
        "The merger of the Hamburg and Bremen field service teams.",
        "Cybersecurity of the Kestrel Cloud platform and the results of the external penetration test.",
    ])
    b.heading("Composition of the Supervisory Board", 12)
    b.table(["Member", "Function", "Member since"], [
        ["Henrik Aalto", "Chair", "2019"],
        ["Dr. Beatrice Lohmann", "Deputy Chair, Chair of the Audit Committee", "2020"],
        ["Marcus Feld", "Member", "2022"],
        ["Jana Lindqvist", "Employee representative", "2021"],
    ], [150, 230, 95], "llc")
    b.heading("Audit and dividend", 12)
    b.para("The annual financial statements for 2024 were audited by Nordlicht Audit GmbH, Hamburg, which "
           "issued an unqualified audit opinion. The Supervisory Board endorses the proposal of the Management "
           "Board to pay a dividend of EUR 0.85 per share for the 2024 financial year (2023: EUR 0.70). Based on "
           "12,400,000 shares entitled to dividend, this corresponds to a total distribution of EUR 10.54 million.",
           10, gap=16)
    b.para("Bremen, 18 March 2025\nFor the Supervisory Board\nHenrik Aalto, Chair", 10, BOLD)

    # p5 segments
    b.add_page()
    b.heading("Business and segment overview", 16, rule=True)
    b.para("Kestrel Dynamics develops, manufactures and services instruments for environmental and industrial "
           "monitoring. The group reports three segments.", 10)
    for name, text in [
        ("Environmental Instruments", "Data loggers, weather and air quality stations, led by the KX-200 "
         "Environmental Data Logger. Revenue grew by 8.1%, driven by municipal utilities in Germany and "
         "Scandinavia."),
        ("Industrial Sensing", "Gas, particle and vibration sensors for process industries, including the "
         "AirSense sensor family. The segment benefited from two large retrofit projects in the chemical "
         "industry."),
        ("Software & Services", "The Kestrel Cloud data platform, installation, calibration and maintenance "
         "contracts. Recurring subscription revenue rose to EUR 14.2 million (2023: EUR 10.8 million)."),
    ]:
        b.para(name, 10.5, BOLD, NAVY, gap=1)
        b.para(text, 10)
    b.heading("Revenue by segment", 12)
    b.para("EUR thousand", 8.5, ITALIC, GREY, gap=3)
    b.table(["Segment", "2024", "2023", "Change", "Share 2024"], [
        ["Environmental Instruments", "71,340", "66,015", "+8.1%", "48.0%"],
        ["Industrial Sensing", "52,118", "45,870", "+13.6%", "35.1%"],
        ["Software & Services", "25,154", "19,319", "+30.2%", "16.9%"],
        ["Group", "148,612", "131,204", "+13.3%", "100.0%"],
    ], [175, 75, 75, 70, 80], bold_rows=[3])
    b.heading("Revenue by region", 12)
    b.para("EUR million", 8.5, ITALIC, GREY, gap=3)
    b.table(["Region", "2024", "2023"], [
        ["Germany", "58.9", "54.2"], ["Rest of Europe", "47.3", "41.0"],
        ["North America", "27.6", "24.1"], ["Asia-Pacific", "14.8", "11.9"],
    ], [175, 75, 75])

    # p6 income statement
    b.add_page()
    b.heading("Financial review: income statement", 16, rule=True)
    b.para("Revenue increased by 13.3% to EUR 148.6 million. Cost of sales rose more slowly than revenue, "
           "lifting the gross margin to 43.0% (2023: 42.0%). Research and development expenses increased to "
           "EUR 17.8 million, which corresponds to 12.0% of revenue (2023: 11.5%). Operating income (EBIT) "
           "grew by 28.1%, and the EBIT margin improved to 12.9%.", 10)
    b.heading("Consolidated income statement", 12)
    b.para("EUR thousand, for the year ended 31 December", 8.5, ITALIC, GREY, gap=3)
    b.table(["", "2024", "2023"], [
        ["Revenue", "148,612", "131,204"],
        ["Cost of sales", "(84,710)", "(76,098)"],
        ["Gross profit", "63,902", "55,106"],
        ["Research and development expenses", "(17,834)", "(15,089)"],
        ["Selling expenses", "(18,207)", "(16,533)"],
        ["General and administrative expenses", "(9,911)", "(9,184)"],
        ["Other operating income and expenses, net", "1,268", "705"],
        ["Operating income (EBIT)", "19,218", "15,005"],
        ["Financial result", "(612)", "(948)"],
        ["Income before taxes", "18,606", "14,057"],
        ["Income taxes", "(5,210)", "(4,076)"],
        ["Net income", "13,396", "9,981"],
        ["Earnings per share (EUR, basic and diluted)", "1.08", "0.80"],
    ], [275, 100, 100], bold_rows=[2, 7, 11])
    b.para("The effective tax rate was 28.0% (2023: 29.0%). The financial result improved because financial "
           "liabilities were reduced by EUR 3.5 million during the year.", 10)

    # p7 balance sheet and cash flow
    b.add_page()
    b.heading("Balance sheet and cash flow", 16, rule=True)
    b.heading("Condensed balance sheet", 12)
    b.para("EUR thousand, at 31 December", 8.5, ITALIC, GREY, gap=3)
    b.table(["", "2024", "2023"], [
        ["Non-current assets", "88,930", "84,105"],
        ["Current assets", "83,550", "74,830"],
        ["of which cash and cash equivalents", "31,775", "26,410"],
        ["Total assets", "172,480", "158,935"],
        ["Equity", "98,214", "89,046"],
        ["Non-current liabilities", "29,866", "33,412"],
        ["Current liabilities", "44,400", "36,477"],
        ["Total equity and liabilities", "172,480", "158,935"],
        ["Equity ratio", "56.9%", "56.0%"],
        ["Financial liabilities", "12,300", "15,800"],
        ["Net cash", "19,475", "10,610"],
    ], [275, 100, 100], bold_rows=[3, 7])
    b.heading("Cash flow", 12)
    b.para("EUR thousand", 8.5, ITALIC, GREY, gap=3)
    b.table(["", "2024", "2023"], [
        ["Cash flow from operating activities", "24,861", "19,337"],
        ["Capital expenditure", "(11,402)", "(8,915)"],
        ["Free cash flow", "13,459", "10,422"],
        ["Dividends paid", "(8,680)", "(7,440)"],
    ], [275, 100, 100], bold_rows=[2])
    b.para("Capital expenditure focused on test benches for the KX-200 line, the extension of the Bremen "
           "warehouse and the first advance payments for the Porto plant.", 10)

    # p8 five-year overview with charts
    b.add_page()
    b.heading("Five-year overview", 16, rule=True)
    years = ["2020", "2021", "2022", "2023", "2024"]
    bar_chart(b.page, pymupdf.Rect(60, b.y + 4, 300, b.y + 224), years,
              [("Revenue", [96.4, 104.9, 118.7, 131.2, 148.6], NAVY)], 160, 40,
              "Revenue (EUR million)")
    line_chart(b.page, pymupdf.Rect(315, b.y + 4, 535, b.y + 224), years, [842, 903, 968, 1047, 1184],
               800, 1200, 100, "Employees at year-end", ["842", "903", "968", "1,047", "1,184"], TEAL)
    b.y += 244
    b.table(["", "2020", "2021", "2022", "2023", "2024"], [
        ["Revenue (EUR million)", "96.4", "104.9", "118.7", "131.2", "148.6"],
        ["EBIT (EUR million)", "8.1", "10.6", "12.9", "15.0", "19.2"],
        ["EBIT margin", "8.4%", "10.1%", "10.9%", "11.4%", "12.9%"],
        ["Dividend per share (EUR)", "0.40", "0.50", "0.60", "0.70", "0.85"],
        ["Employees at 31 December", "842", "903", "968", "1,047", "1,184"],
    ], [175, 60, 60, 60, 60, 60], size=9)
    b.para("Revenue has grown at a compound annual rate of 11.4% since 2020. The 2024 dividend is a proposal "
           "to the Annual General Meeting.", 9, ITALIC, GREY)

    # p9 people
    b.add_page()
    b.heading("Our people", 16, rule=True)
    b.para("At 31 December 2024 Kestrel Dynamics employed 1,184 people worldwide, 137 more than a year "
           "earlier. Measured in full-time equivalents, the average workforce for the year was 1,121.4. "
           "Personnel expenses rose to EUR 86.3 million (2023: EUR 75.9 million). Most new positions were "
           "created in research and development and in our service organisation.", 10)
    b.heading("Headcount by region", 12, before=2)
    b.table(["Region", "31 Dec 2024", "31 Dec 2023"], [
        ["Germany", "712", "664"], ["Rest of Europe", "268", "221"],
        ["North America", "131", "108"], ["Asia-Pacific", "73", "54"], ["Total", "1,184", "1,047"],
    ], [175, 100, 100], bold_rows=[4])
    b.heading("Headcount by function", 12, before=2)
    b.table(["Function", "31 Dec 2024", "31 Dec 2023"], [
        ["Production and logistics", "455", "421"], ["Research and development", "318", "271"],
        ["Sales and marketing", "236", "205"], ["Administration", "175", "150"], ["Total", "1,184", "1,047"],
    ], [175, 100, 100], bold_rows=[4])
    b.heading("Workforce indicators", 12, before=2)
    b.table(["Indicator", "2024", "2023"], [
        ["Employee turnover rate", "6.8%", "8.1%"],
        ["Training hours per employee", "31.5", "27.0"],
        ["Women in leadership positions", "34%", "31%"],
        ["Apprentices and dual students", "46", "39"],
    ], [175, 100, 100])

    # p10 sustainability
    b.add_page()
    b.heading("Sustainability", 16, rule=True)
    b.para("Our products help customers measure emissions and water quality; we apply the same discipline to "
           "our own operations. In 2024 we reduced combined Scope 1 and Scope 2 greenhouse gas emissions by "
           "22.4%. The share of electricity from renewable sources reached 78% (2023: 61%), mainly because "
           "the Bremen plant switched to a green power purchase agreement in April.", 10)
    b.heading("Environmental indicators", 12)
    b.table(["Indicator", "Unit", "2024", "2023"], [
        ["Scope 1 emissions", "t CO2e", "1,912", "2,240"],
        ["Scope 2 emissions (market-based)", "t CO2e", "1,386", "2,011"],
        ["Total Scope 1 and 2", "t CO2e", "3,298", "4,251"],
        ["Renewable electricity share", "%", "78", "61"],
        ["Water withdrawal", "m3", "18,400", "19,950"],
        ["Waste recycling rate", "%", "71", "66"],
    ], [215, 70, 80, 80], "lcrr", bold_rows=[2])
    b.para("Target: by 2030 we aim to cut combined Scope 1 and 2 emissions by 60% compared with the base year "
           "2021 and to source 100% renewable electricity at all production sites, including the new plant "
           "in Porto.", 10)
    b.para("Product stewardship: 92% of KX-200 loggers returned at end of life in 2024 were refurbished or "
           "recycled through our take-back programme.", 10)

    # p11 risks and outlook
    b.add_page()
    b.heading("Risks and outlook", 16, rule=True)
    b.heading("Principal risks", 12)
    b.table(["Risk", "Probability", "Impact", "Mitigation"], [
        ["Shortage of semiconductors and sensor elements", "Medium", "High",
         "Dual sourcing, safety stock of 6 months for critical parts"],
        ["US dollar exchange rate", "Medium", "Medium", "Hedging of 70% of expected USD cash flows"],
        ["Cyber attack on Kestrel Cloud", "Low", "High", "ISO 27001 certification, annual penetration tests"],
        ["Ramp-up delays at the Porto plant", "Medium", "Medium", "Phased ramp-up, experienced Bremen team on site"],
    ], [150, 65, 55, 205], "lccl", size=8.5)
    b.heading("Outlook 2025", 12)
    b.para("The order backlog of EUR 58.3 million and a well-filled project pipeline support our planning. For "
           "the 2025 financial year the Management Board expects revenue between EUR 160 million and EUR 168 "
           "million and an EBIT margin of 12% to 13%. Capital expenditure is planned at approximately EUR 18 "
           "million, of which the largest part relates to the Porto plant. We expect the number of employees "
           "to increase by around 90.", 10)
    b.para("This outlook assumes no significant deterioration of the economic environment in Europe and stable "
           "exchange rates. Forward-looking statements are subject to risks and uncertainties.", 9, ITALIC, GREY)

    # p12 calendar and contacts
    b.add_page()
    b.heading("Financial calendar and contacts", 16, rule=True)
    b.heading("Financial calendar 2025", 12)
    b.table(["Date", "Event"], [
        ["8 May 2025", "Quarterly statement Q1 2025"],
        ["14 May 2025", "Annual General Meeting, Bremen"],
        ["7 August 2025", "Half-year report 2025"],
        ["6 November 2025", "Quarterly statement Q3 2025"],
    ], [130, 300], "ll")
    b.heading("The share", 12)
    b.fields([("Number of shares", "12,400,000"), ("ISIN", "DE000KD20245"), ("Ticker symbol", "KDY"),
              ("Market segment", "Regulated market, Prime Standard")], 150)
    b.heading("Investor relations", 12)
    b.fields([("Contact", "Clara Jensen, Head of Investor Relations"), ("Email", "ir@kestrel-dynamics.example"),
              ("Phone", "+49 421 555 0100")], 150)
    b.heading("Imprint", 12)
    b.para("Published by Kestrel Dynamics AG, Hafenstrasse 18, 28217 Bremen, Germany. Registered at the local "
           "court of Bremen, HRB 30211. Auditor: Nordlicht Audit GmbH, Hamburg. This report is also available "
           "in German. In case of doubt, the German version prevails.", 9)

    toc = [[1, t, int(p)] for t, p in contents]
    return b.finish({"title": "Kestrel Dynamics AG - Annual Report 2024", "author": "Kestrel Dynamics AG",
                     "subject": "Annual report for the financial year 2024",
                     "keywords": "annual report, 2024, revenue, EBIT, employees",
                     "date": "D:20250318100000+01'00'"}, toc)


# --------------------------------------------------------------------------------------------
# (2a) Supplier invoice -- finance/invoice_wf_2024_0817.pdf, 1 page
# --------------------------------------------------------------------------------------------

def supplier_invoice() -> bytes:
    b = Builder(margins=(55, 50, 55, 60))
    page = b.add_page()
    page.draw_rect(pymupdf.Rect(55, 45, 95, 85), color=None, fill=(0.55, 0.12, 0.12))
    put(page, 75, 72, "WF", 16, BOLD, WHITE, "c")
    put(page, 105, 62, "Weser Feinmechanik GmbH", 15, BOLD, (0.55, 0.12, 0.12))
    put(page, 105, 78, "Precision machining | Sheet metal | Assemblies", 8.5, REGULAR, GREY)
    put(page, 540, 58, "Am Holzhafen 7", 8.5, REGULAR, GREY, "r")
    put(page, 540, 70, "28217 Bremen, Germany", 8.5, REGULAR, GREY, "r")
    put(page, 540, 82, "Tel. +49 421 555 3790", 8.5, REGULAR, GREY, "r")
    put(page, 55, 128, "Weser Feinmechanik GmbH - Am Holzhafen 7 - 28217 Bremen", 6.5, REGULAR, GREY)
    for i, line in enumerate(["Kestrel Dynamics AG", "Purchasing Department", "Attn. Mr. Lars Petersen",
                              "Hafenstrasse 18", "28217 Bremen"]):
        put(page, 55, 146 + i * 14, line, 10)
    b.y = 135
    b.fields([("Invoice number", "WF-2024-0817"), ("Invoice date", "12 September 2024"),
              ("Customer number", "K-30418"), ("Your order", "PO-45120"),
              ("Delivery date", "10 September 2024"), ("Due date", "12 October 2024")], 100, 9, x=330, step=14)
    b.y = 250
    put(page, 55, b.y, "INVOICE", 20, BOLD)
    b.y += 22
    b.para("Thank you for your order. We invoice the following deliveries according to your purchase order "
           "PO-45120 and our delivery note LS-24-5512:", 9.5)
    b.table(["Pos.", "Description", "Qty", "Unit price (EUR)", "Amount (EUR)"], [
        ["1", "Stainless steel sensor housing SH-40, brushed finish", "400", "18.50", "7,400.00"],
        ["2", "Gasket set GS-12 (pack of 50)", "60", "22.40", "1,344.00"],
        ["3", "PCB mounting bracket MB-7, aluminium", "1,200", "1.85", "2,220.00"],
        ["4", "Machining set-up fee (one-off)", "1", "350.00", "350.00"],
    ], [35, 235, 50, 90, 75], "clrrr", size=9)
    tx, vx = 395, 540
    for label, value, font in [("Subtotal (net)", "11,314.00", REGULAR), ("VAT 19%", "2,149.66", REGULAR),
                               ("Total amount (EUR)", "13,463.66", BOLD)]:
        b.y += 16
        put(page, tx, b.y, label, 10, font)
        put(page, vx, b.y, value, 10, font, align="r")
    page.draw_line((tx, b.y + 5), (vx, b.y + 5), color=BLACK, width=0.8)
    page.draw_line((tx, b.y + 7), (vx, b.y + 7), color=BLACK, width=0.8)
    b.y += 28
    b.para("Payment terms: payable within 30 days of the invoice date without deduction. A 2% early-payment "
           "discount applies if payment is received by 22 September 2024. Please quote the invoice number "
           "with your payment.", 9.5)
    b.para("Goods remain our property until paid in full. Complaints must be reported within 8 days of "
           "delivery.", 9.5)
    page.draw_line((55, 742), (540, 742), color=GRID, width=0.5)
    for i, (a, c) in enumerate([
        ("Weser Feinmechanik GmbH | Managing Director: Ulrike Brandes", "Sparkasse Bremen"),
        ("Commercial register: Bremen HRB 24117", "IBAN: DE44 2905 0101 0082 4417 05"),
        ("VAT ID: DE 298 765 432", "BIC: SBREDE22XXX"),
    ]):
        put(page, 55, 756 + i * 11, a, 7.5, REGULAR, GREY)
        put(page, 330, 756 + i * 11, c, 7.5, REGULAR, GREY)
    return b.finish({"title": "Invoice WF-2024-0817", "author": "Weser Feinmechanik GmbH",
                     "subject": "Invoice to Kestrel Dynamics AG", "creator": "WF Faktura 7.2",
                     "date": "D:20240912143000+02'00'"})


# --------------------------------------------------------------------------------------------
# (2b) Customer invoice -- finance/invoice_kd_inv_24_1193.pdf, 2 pages
# --------------------------------------------------------------------------------------------

def customer_invoice() -> bytes:
    def decorate(b: Builder, page: pymupdf.Page) -> None:
        page.draw_rect(pymupdf.Rect(55, 40, 83, 68), color=None, fill=NAVY)
        page.draw_polyline([(58, 62), (69, 46), (80, 62)], color=WHITE, width=2)
        put(page, 92, 60, "Kestrel Dynamics AG", 14, BOLD, NAVY)
        put(page, 540, 50, "Hafenstrasse 18, 28217 Bremen, Germany", 8, REGULAR, GREY, "r")
        put(page, 540, 61, "billing@kestrel-dynamics.example", 8, REGULAR, GREY, "r")
        page.draw_line((55, 76), (540, 76), color=NAVY, width=1)

    def footer(page: pymupdf.Page, n: int, total: int) -> None:
        page.draw_line((55, 770), (540, 770), color=GRID, width=0.5)
        put(page, 55, 782, "Kestrel Dynamics AG | Bremen HRB 30211 | VAT ID DE 814 552 907 | "
            "Commerzbank Bremen, IBAN DE71 2904 0090 0123 4567 00, BIC COBADEFFXXX", 6.8, REGULAR, GREY)
        put(page, 540, 796, f"Page {n} of {total}", 7.5, BOLD, GREY, "r")

    b = Builder(margins=(55, 90, 55, 80), decorate=decorate, footer=footer)
    widths = [30, 215, 40, 55, 75, 70]
    header = ["Pos.", "Description", "Qty", "Unit", "Unit price", "Amount"]
    items = [
        ["1", "KX-200 Environmental Data Logger, LTE-M", "24", "pcs", "1,890.00", "45,360.00"],
        ["2", "AirSense PM2.5 Sensor Module AS-25", "48", "pcs", "265.00", "12,720.00"],
        ["3", "AirSense NO2 Sensor Module AS-N2", "24", "pcs", "340.00", "8,160.00"],
        ["4", "Solar Power Kit SP-60 (60 W panel, charge controller)", "24", "pcs", "412.00", "9,888.00"],
        ["5", "Mounting Pole Adapter MPA-3", "24", "pcs", "38.50", "924.00"],
        ["6", "LTE-M modem licence upgrade LM-1", "24", "pcs", "79.00", "1,896.00"],
        ["7", "Kestrel Cloud subscription Professional, 12 months", "24", "lic", "228.00", "5,472.00"],
        ["8", "On-site installation and commissioning", "6", "days", "980.00", "5,880.00"],
        ["9", "Operator training workshop (half day)", "1", "flat", "650.00", "650.00"],
        ["10", "Factory calibration certificate per logger", "24", "pcs", "45.00", "1,080.00"],
    ]

    page = b.add_page()
    for i, line in enumerate(["Stadtwerke Lindenau GmbH", "Accounts Payable", "Parkallee 5", "26122 Oldenburg",
                              "Germany"]):
        put(page, 55, 112 + i * 14, line, 10)
    b.y = 95
    b.fields([("Invoice number", "KD-INV-24-1193"), ("Invoice date", "28 November 2024"),
              ("Customer number", "C-20931"), ("Order reference", "SWL-2024-311"),
              ("Delivery date", "25 November 2024"), ("Due date", "28 December 2024")], 95, 9, x=330, step=14)
    b.y = 215
    put(page, 55, b.y, "INVOICE", 20, BOLD, NAVY)
    b.y += 20
    b.para("Project: Air quality monitoring network Oldenburg, phase 1. Dear Sir or Madam, for the goods and "
           "services delivered under your order SWL-2024-311 we charge the following amounts (all prices in "
           "EUR):", 9.5)
    b.fields([("Delivery address", "Pumping Station Nord, Am Wasserwerk 3, 26125 Oldenburg"),
              ("Your contact", "Martin Hartmann"), ("Our contact", "Daniel Osei, Sales")], 95, 9, step=14)
    b.table(header, items, widths, "cllcrr", size=9)
    b.y += 4
    put(page, 390, b.y, "Carried forward:", 10, BOLD)
    put(page, 540, b.y, "EUR 92,030.00", 10, BOLD, align="r")
    b.y += 30
    b.para("Continued on page 2. Prices are net prices; the discount, VAT and the total amount due are shown on "
           "the last page.", 8.5, ITALIC, GREY)

    page = b.add_page()
    put(page, 55, b.y + 4, "Invoice KD-INV-24-1193 (continued)", 11, BOLD, NAVY)
    b.y += 20
    put(page, 390, b.y, "Brought forward:", 10, BOLD)
    put(page, 540, b.y, "EUR 92,030.00", 10, BOLD, align="r")
    b.y += 10
    b.table(header, [
        ["11", "Spare filter set FS-10", "48", "pcs", "12.80", "614.40"],
        ["12", "Shipping, packaging and insurance", "1", "flat", "420.00", "420.00"],
    ], widths, "cllcrr", size=9)
    tx, vx = 330, 540
    for label, value, font in [("Subtotal", "93,064.40", REGULAR),
                               ("Less project discount 2.5%", "-2,326.61", REGULAR),
                               ("Net amount", "90,737.79", REGULAR), ("VAT 19%", "17,240.18", REGULAR),
                               ("Total amount due (EUR)", "107,977.97", BOLD)]:
        b.y += 16
        put(page, tx, b.y, label, 10, font)
        put(page, vx, b.y, value, 10, font, align="r")
    page.draw_line((tx, b.y + 5), (vx, b.y + 5), color=BLACK, width=0.8)
    b.y += 30
    b.para("Payment terms: 30 days net from the invoice date. Please transfer the total amount due by 28 "
           "December 2024 to the account below, quoting invoice number KD-INV-24-1193.", 9.5)
    b.para("Installation was carried out by our field service team between 25 and 27 November 2024; the "
           "service report FSR-24-1127 was countersigned on site. The remaining stations will be installed in "
           "week 50 and invoiced separately under the same order.", 9.5)
    b.para("Warranty: 36 months on hardware from the date of delivery in accordance with our general terms and "
           "conditions (version 2024-01).", 9.5)
    b.space(10)
    b.para("Kestrel Dynamics AG - Accounts Receivable\nContact: Nadine Kraus, +49 421 555 0142", 9.5, BOLD)
    return b.finish({"title": "Invoice KD-INV-24-1193", "author": "Kestrel Dynamics AG",
                     "subject": "Invoice to Stadtwerke Lindenau GmbH", "creator": "Kestrel ERP billing",
                     "date": "D:20241128091500+01'00'"})


# --------------------------------------------------------------------------------------------
# (2c) Form -- hr/travel_expense_claim_tec_2024_0342.pdf, 1 page
# --------------------------------------------------------------------------------------------

def expense_claim() -> bytes:
    b = Builder(margins=(50, 50, 50, 50))
    page = b.add_page()
    page.draw_rect(pymupdf.Rect(50, 40, 545, 80), color=None, fill=NAVY)
    put(page, 62, 66, "TRAVEL EXPENSE CLAIM", 16, BOLD, WHITE)
    put(page, 533, 58, "Kestrel Dynamics AG", 9, BOLD, WHITE, "r")
    put(page, 533, 71, "Form HR-07, version 2023-05", 7.5, REGULAR, SKY, "r")

    def box(title: str, y: float, h: float) -> None:
        page.draw_rect(pymupdf.Rect(50, y, 545, y + h), color=GRID, width=0.8)
        page.draw_rect(pymupdf.Rect(50, y, 545, y + 16), color=None, fill=LIGHT)
        put(page, 56, y + 12, title, 8.5, BOLD, NAVY)

    box("1. Employee", 92, 78)
    b.y = 108
    b.fields([("Claim number", "TEC-2024-0342"), ("Employee name", "Jonas Weber"), ("Employee ID", "10457")],
             95, 9, x=58, step=15)
    b.y = 108
    b.fields([("Department", "Field Service"), ("Cost centre", "CC-4410"), ("Line manager", "Lukas Brandt")],
             85, 9, x=305, step=15)
    box("2. Trip", 180, 80)
    b.y = 196
    b.fields([("Purpose of trip", "Installation of KX-200 loggers for Stadtwerke Lindenau (order SWL-2024-311)"),
              ("Destination", "Oldenburg, Germany"),
              ("Departure", "25 November 2024, 07:10"), ("Return", "27 November 2024, 18:45")],
             95, 9, x=58, step=15)
    box("3. Expenses", 270, 200)
    b.y = 292
    b.table(["Date", "Category", "Description", "Receipt", "Amount (EUR)"], [
        ["25.11.2024", "Rail", "Train Bremen - Oldenburg and return, 2nd class", "R1", "38.60"],
        ["25.11.2024", "Hotel", "Hotel am Schlossgarten, 2 nights incl. breakfast", "R2", "236.00"],
        ["25-27.11.2024", "Meals", "Per diem allowance, 3 days (reduced for breakfast)", "-", "84.00"],
        ["26.11.2024", "Taxi", "Hotel to Pumping Station Nord and back", "R3", "27.50"],
    ], [72, 60, 220, 48, 85], "lllcr", size=8.5, x=55)
    tx, vx = 330, 535
    for label, value, font in [("Total claimed", "EUR 386.10", BOLD), ("Less advance received", "EUR 150.00", REGULAR),
                               ("Amount payable to employee", "EUR 236.10", BOLD)]:
        b.y += 15
        put(page, tx, b.y, label + ":", 9, font)
        put(page, vx, b.y, value, 9, font, align="r")
    box("4. Declaration and approval", 480, 150)
    b.y = 498
    b.para("I confirm that the expenses listed above were incurred exclusively for business purposes and "
           "that no costs have been claimed twice. Original receipts are attached.", 8.5, indent=8,
           width=470)
    b.fields([("Receipts attached", "Yes (3)"), ("Employee signature", "J. Weber, 28 November 2024"),
              ("Approved by", "Lukas Brandt, Head of Field Service"), ("Approval date", "2 December 2024"),
              ("Payment run", "December 2024 payroll")], 115, 9, x=58, step=15)
    page.draw_bezier((400, 572), (420, 552), (440, 587), (470, 564), color=(0.1, 0.2, 0.6), width=1)
    page.draw_bezier((420, 602), (440, 584), (465, 614), (500, 597), color=(0.1, 0.2, 0.6), width=1)
    put(page, 50, 660, "For HR / Accounting use only", 8, BOLD, GREY)
    page.draw_rect(pymupdf.Rect(50, 666, 545, 720), color=GRID, width=0.8, dashes="[3 2] 0")
    b.y = 672
    b.fields([("Booked on", "4 December 2024"), ("Booking reference", "FI-2024-118734")], 110, 8.5, x=58, step=14)
    put(page, 297, 800, "Please submit claims within 4 weeks of the end of the trip. Per diem rates follow "
        "the German Federal Travel Expenses Act.", 7, REGULAR, GREY, "c")
    return b.finish({"title": "Travel expense claim TEC-2024-0342", "author": "Jonas Weber",
                     "subject": "Travel expense claim", "creator": "Kestrel HR portal",
                     "date": "D:20241202111000+01'00'"})


# --------------------------------------------------------------------------------------------
# (3a) Memo -- hr/memo_mobile_work_2024_12.pdf, 2 pages
# --------------------------------------------------------------------------------------------

def memo() -> bytes:
    def footer(page: pymupdf.Page, n: int, total: int) -> None:
        put(page, 297, 800, f"Internal - {n}/{total}", 8, REGULAR, GREY, "c")

    b = Builder(margins=(70, 70, 70, 70), footer=footer)
    page = b.add_page()
    put(page, 70, 80, "Kestrel Dynamics AG", 10, BOLD, NAVY)
    put(page, 70, 120, "MEMORANDUM", 24, BOLD)
    page.draw_line((70, 132), (525, 132), color=BLACK, width=1.5)
    b.y = 136
    b.fields([("To", "All employees, Bremen and Hamburg sites"), ("From", "Katrin Vogel, Chief People Officer"),
              ("CC", "Management Board; Works Council"), ("Date", "3 December 2024"),
              ("Subject", "New mobile work policy and relocation of the Hamburg service team")], 70, 10.5, step=18)
    page.draw_line((70, b.y), (525, b.y), color=BLACK, width=0.8)
    b.y += 10
    b.para("Dear colleagues,", 10.5, SERIF)
    b.para("Following the Management Board meeting on 26 November 2024, I would like to inform you about two "
           "decisions that affect many of you. The Works Council was consulted on both measures and gave its "
           "agreement on 28 November 2024.", 10.5, SERIF, leading=1.45)
    b.para("1. Mobile work policy", 11, BOLD, NAVY, gap=2)
    b.para("From 1 March 2025, employees whose role allows it may work remotely for up to three days per week. "
           "The new policy replaces the interim arrangement introduced in 2021, which allowed two days per "
           "week. Roles in production, the warehouse and the laboratories are excluded, because this work "
           "requires presence on site. Details of the policy are set out on the next page.", 10.5, SERIF,
           leading=1.45)
    b.para("2. Relocation of the Hamburg service team", 11, BOLD, NAVY, gap=2)
    b.para("Our field service office in Hamburg (Billstrasse 112) will close. Its 22 employees will move to the "
           "headquarters in Bremen by 30 June 2025, where the entire service organisation will work together "
           "on the new service floor in building C. Each affected colleague will receive a one-off relocation "
           "allowance of EUR 2,500 gross. During the transition period, travel time between Hamburg and "
           "Bremen counts as working time. The lease of the Hamburg office ends on 31 July 2025.", 10.5, SERIF,
           leading=1.45)
    b.para("Colleagues who cannot relocate will be offered individual solutions, including mobile work "
           "arrangements for field technicians who live close to their customers. Your HR business partner, "
           "Svenja Kohl, will contact each member of the Hamburg team personally before 20 December 2024.",
           10.5, SERIF, leading=1.45)

    page = b.add_page()
    b.para("Details of the mobile work policy", 12, BOLD, NAVY, gap=6)
    b.bullets([
        "Core hours: every employee must be reachable between 10:00 and 15:00 on working days, wherever they "
        "work.",
        "Mobile work days are agreed with the line manager and recorded in the HR portal at least one week in "
        "advance.",
        "Each employee who works remotely receives a one-time equipment allowance of EUR 400 for a monitor, a "
        "headset or an office chair.",
        "Only company-managed laptops and the company VPN may be used. Printing confidential documents at "
        "home is not permitted.",
        "Team days: each team meets in the office at least once a week on a fixed day chosen by the team.",
        "Working from another EU country is possible for up to 20 working days per year after approval by HR.",
    ], 10.5)
    b.para("Information sessions", 12, BOLD, NAVY, gap=6)
    b.table(["Date", "Time", "Location"], [
        ["10 December 2024", "14:00", "Bremen, canteen (also streamed online)"],
        ["12 December 2024", "09:30", "Hamburg, Billstrasse office"],
    ], [130, 60, 265], "lcl", size=10)
    b.para("Questions can also be sent to hr-policy@kestrel-dynamics.example. A full version of the policy will "
           "be published on the intranet by 15 January 2025.", 10.5, SERIF, leading=1.45)
    b.space(8)
    b.para("Kind regards,", 10.5, SERIF)
    page.draw_bezier((b.left, b.y + 18), (b.left + 30, b.y - 4), (b.left + 50, b.y + 30), (b.left + 95, b.y + 8),
                     color=(0.1, 0.2, 0.6), width=1.2)
    b.space(30)
    b.para("Katrin Vogel\nChief People Officer", 10.5, SERIF_BOLD)
    return b.finish({"title": "Memo: mobile work policy and Hamburg relocation", "author": "Katrin Vogel",
                     "subject": "HR memorandum", "date": "D:20241203080000+01'00'"})


# --------------------------------------------------------------------------------------------
# (3b) Board minutes -- governance/board_minutes_2024_11_19.pdf, 3 pages
# --------------------------------------------------------------------------------------------

def board_minutes() -> bytes:
    def decorate(b: Builder, page: pymupdf.Page) -> None:
        put(page, b.left, 45, "Kestrel Dynamics AG - Supervisory Board", 8, REGULAR, GREY)
        put(page, b.right, 45, "CONFIDENTIAL", 8, BOLD, (0.6, 0.1, 0.1), "r")

    def footer(page: pymupdf.Page, n: int, total: int) -> None:
        put(page, 297, 800, f"Minutes of 19 November 2024 - page {n} of {total}", 8, REGULAR, GREY, "c")

    b = Builder(margins=(65, 60, 65, 70), decorate=decorate, footer=footer)
    b.add_page()
    b.para("Minutes of the Meeting of the Supervisory Board", 16, BOLD, NAVY, gap=4)
    b.fields([("Date", "19 November 2024"), ("Time", "10:00 - 14:30"),
              ("Location", "Headquarters, Hafenstrasse 18, Bremen, conference room Weser"),
              ("Present", "Henrik Aalto (Chair), Dr. Beatrice Lohmann, Marcus Feld, Jana Lindqvist"),
              ("Guests", "Dr. Miriam Hollenbeck (CEO), Tobias Reinholt (CFO), Sofia Marchetti (COO)"),
              ("Minutes", "Peter Okafor, Company Secretary")], 75, 9.5, step=15)
    b.para("Agenda", 11, BOLD, gap=2)
    b.bullets(["1. Opening and approval of the minutes of 17 September 2024",
               "2. Business performance January to September 2024", "3. Assembly plant in Porto, Portugal",
               "4. Price adjustment for the KX-200 product line", "5. Dividend policy",
               "6. Personnel matters of the Management Board", "7. Any other business"], 10, bullet="", indent=8,
              gap=0)
    b.para("1. Opening", 11, BOLD, NAVY, gap=2)
    b.para("The Chair, Henrik Aalto, opened the meeting at 10:00 and established that the meeting had been "
           "duly convened and that all four members were present; the Board therefore had a quorum. The "
           "minutes of the meeting of 17 September 2024 were approved without changes.", 10)
    b.para("2. Business performance January to September 2024", 11, BOLD, NAVY, gap=2)
    b.para("The CFO, Tobias Reinholt, reported revenue of EUR 107.9 million for the first nine months of 2024 "
           "(prior year: EUR 95.5 million) and EBIT of EUR 13.6 million. Order intake in the third quarter was "
           "particularly strong in the Industrial Sensing segment. The order backlog stood at EUR 61.0 million "
           "at the end of September. For the full year the Management Board expects revenue of EUR 147 "
           "million to EUR 150 million. The Board discussed the development of working capital and asked for "
           "a more detailed analysis of inventories at the next meeting.", 10)

    b.add_page()
    b.para("3. Assembly plant in Porto, Portugal", 11, BOLD, NAVY, gap=2)
    b.para("The COO, Sofia Marchetti, presented the business case for a second assembly plant in Porto. The "
           "plant will assemble KX-200 loggers and AirSense modules for the European market, with a capacity "
           "of 12,000 loggers per year. The plan foresees 85 new jobs by the end of 2026 and the start of "
           "production in the third quarter of 2025. The leased building offers an option to purchase after "
           "five years. Risks discussed included the ramp-up of quality processes and the recruitment of "
           "qualified technicians.", 10)
    b.para("Resolution: The Supervisory Board approves the investment of EUR 14.5 million for the new assembly "
           "plant in Porto, Portugal, as presented. Vote: 4 in favour, 0 against, 0 abstentions.", 10, BOLD)
    b.para("4. Price adjustment for the KX-200 product line", 11, BOLD, NAVY, gap=2)
    b.para("The Management Board informed the Supervisory Board of its decision to raise the list prices of "
           "the KX-200 product line by 4.5% effective 1 February 2025, to compensate for higher component and "
           "personnel costs. Existing framework agreements remain unaffected until their expiry. The Board "
           "took note of the decision.", 10)
    b.para("5. Dividend policy", 11, BOLD, NAVY, gap=2)
    b.para("The CFO proposed to increase the dividend for 2024 to EUR 0.85 per share (2023: EUR 0.70), in line "
           "with the policy of distributing 70% to 80% of net income. The Supervisory Board agreed in "
           "principle; the final resolution on the proposal to the Annual General Meeting will be taken in "
           "March 2025 after the audit.", 10)

    b.add_page()
    b.para("6. Personnel matters of the Management Board", 11, BOLD, NAVY, gap=2)
    b.para("The members of the Management Board left the meeting for this item. The Supervisory Board resolved "
           "unanimously to extend the appointment of Sofia Marchetti as Chief Operating Officer until 31 "
           "December 2029.", 10)
    b.para("7. Any other business", 11, BOLD, NAVY, gap=2)
    b.para("The CEO informed the Board that the Hamburg field service office will be merged into the Bremen "
           "headquarters in 2025; the Chief People Officer will inform employees in writing in early December. "
           "Jana Lindqvist asked that the Works Council be involved at an early stage; the CEO confirmed this.",
           10)
    b.para("Action items", 11, BOLD, NAVY, gap=4)
    b.table(["No.", "Action", "Owner", "Due"], [
        ["1", "Sign the lease agreement for the Porto building", "S. Marchetti", "15 December 2024"],
        ["2", "Submit the 2025 budget for approval", "T. Reinholt", "10 January 2025"],
        ["3", "Inform distributors about the KX-200 price adjustment", "D. Osei", "6 January 2025"],
        ["4", "Analysis of inventories and working capital", "T. Reinholt", "11 February 2025"],
        ["5", "Draft agenda of the Annual General Meeting", "P. Okafor", "28 February 2025"],
    ], [30, 230, 85, 120], "clll", size=9)
    b.para("Next meeting: 11 February 2025, 10:00, Bremen headquarters.", 10, BOLD)
    b.para("The Chair closed the meeting at 14:30.", 10)
    b.space(30)
    y = b.y
    for x, name, role in [(65, "Henrik Aalto", "Chair of the Supervisory Board"),
                          (320, "Peter Okafor", "Minute-taker")]:
        b.page.draw_line((x, y), (x + 190, y), color=DARK, width=0.6)
        put(b.page, x, y + 14, name, 10, BOLD)
        put(b.page, x, y + 27, role, 9, REGULAR, GREY)
    return b.finish({"title": "Minutes of the Supervisory Board meeting, 19 November 2024",
                     "author": "Peter Okafor", "subject": "Supervisory Board minutes",
                     "date": "D:20241122160000+01'00'"})


# --------------------------------------------------------------------------------------------
# (4) Slide deck -- sales/q4_2024_sales_review.pdf, 7 landscape pages
# --------------------------------------------------------------------------------------------

def slide_deck() -> bytes:
    def footer(page: pymupdf.Page, n: int, total: int) -> None:
        if n == 1:
            return
        put(page, 40, SLIDE_H - 18, "Kestrel Dynamics | Q4 2024 Sales Review | Internal", 9, REGULAR, GREY)
        put(page, SLIDE_W - 40, SLIDE_H - 18, str(n), 9, BOLD, GREY, "r")

    b = Builder(SLIDE_W, SLIDE_H, margins=(50, 110, 50, 40), footer=footer)

    def slide(title: str) -> pymupdf.Page:
        page = b.add_page()
        page.draw_rect(pymupdf.Rect(0, 0, SLIDE_W, 78), color=None, fill=NAVY)
        page.draw_rect(pymupdf.Rect(0, 78, SLIDE_W, 83), color=None, fill=ORANGE)
        put(page, 40, 52, title, 26, BOLD, WHITE)
        return page

    # s1 title
    page = b.add_page()
    page.draw_rect(pymupdf.Rect(0, 0, SLIDE_W, SLIDE_H), color=None, fill=NAVY)
    page.draw_rect(pymupdf.Rect(0, 330, SLIDE_W, 338), color=None, fill=ORANGE)
    put(page, 60, 200, "Q4 2024 Sales Review", 44, BOLD, WHITE)
    put(page, 60, 245, "Order intake, revenue and pipeline", 20, REGULAR, SKY)
    put(page, 60, 390, "Daniel Osei, Vice President Sales", 16, BOLD, WHITE)
    put(page, 60, 414, "Management meeting, 14 January 2025", 14, REGULAR, SKY)

    # s2 KPIs
    page = slide("Q4 2024 at a glance")
    tiles = [("Order intake", "EUR 46.2 million", "+18% vs. Q4 2023"), ("Revenue", "EUR 40.7 million",
             "+14% vs. Q4 2023"), ("Book-to-bill ratio", "1.14", "Q4 2023: 1.09"),
             ("New customers", "37", "of which 9 outside Europe")]
    for i, (label, value, sub) in enumerate(tiles):
        x = 50 + i * 220
        page.draw_rect(pymupdf.Rect(x, 110, x + 200, 230), color=SKY, fill=LIGHT, width=1)
        put(page, x + 14, 138, label, 13, REGULAR, GREY)
        put(page, x + 14, 180, value, 22, BOLD, NAVY)
        put(page, x + 14, 210, sub, 11, REGULAR, TEAL)
    b.y = 255
    b.bullets([
        "Strongest quarter in company history: all regions above plan, DACH +16%.",
        "Municipal utility bundle launched: KX-200 + AirSense + Kestrel Cloud; first order from Stadtwerke "
        "Lindenau (24 stations).",
        "Average discount held at 6.1% despite year-end pressure (Q4 2023: 7.4%).",
        "Distributor channel: 3 new partners signed in Poland, Czechia and Norway.",
    ], 15, gap=6)

    # s3 revenue by quarter chart
    page = slide("Revenue by quarter 2024 vs. 2023")
    bar_chart(page, pymupdf.Rect(60, 100, 640, 490), ["Q1", "Q2", "Q3", "Q4"],
              [("2023", [30.2, 31.9, 33.4, 35.7], SKY), ("2024", [33.1, 35.8, 39.0, 40.7], NAVY)],
              50, 10, "Revenue, EUR million", label_size=12, cat_size=13, title_size=14)
    b.y = 120
    b.para("Key messages", 16, BOLD, NAVY, indent=630, width=280)
    b.para("Every quarter of 2024 beat the same quarter of 2023.", 13, indent=630, width=280)
    b.para("Full year 2024: EUR 148.6 million (2023: EUR 131.2 million), +13.3%.", 13, indent=630, width=280)
    b.para("Q4 is seasonally the strongest quarter because of municipal budget cycles.", 13, indent=630,
           width=280)

    # s4 region
    page = slide("Q4 2024 revenue by region")
    put(page, 60, 125, "Revenue Q4 2024, EUR million (share of total)", 14, BOLD, DARK)
    regions = [("DACH", 18.9, "46%"), ("Rest of Europe", 11.2, "28%"), ("North America", 6.8, "17%"),
               ("Asia-Pacific", 3.8, "9%")]
    for i, (name, val, share) in enumerate(regions):
        y = 160 + i * 75
        put(page, 200, y + 32, name, 15, REGULAR, DARK, "r")
        w = val / 20 * 480
        page.draw_rect(pymupdf.Rect(215, y + 10, 215 + w, y + 45), color=None, fill=[NAVY, TEAL, ORANGE, SKY][i])
        put(page, 225 + w, y + 33, f"{val:.1f} ({share})", 15, BOLD, DARK)
    page.draw_line((215, 160), (215, 460), color=DARK, width=1)
    put(page, 60, 490, "DACH = Germany, Austria and Switzerland. Total Q4 2024: EUR 40.7 million.", 12, ITALIC, GREY)

    # s5 key wins
    slide("Key wins in Q4 2024")
    b.y = 105
    b.table(["Customer", "Country", "Solution", "Order value"], [
        ["Great Lakes Monitoring Consortium", "USA", "KX-200 network, 140 stations, Kestrel Cloud", "EUR 2.3 million"],
        ["Havnegade Port Authority", "Denmark", "AirSense harbour air quality network", "EUR 1.9 million"],
        ["Kessler Chemie AG", "Germany", "Industrial Sensing retrofit, 2 sites", "EUR 1.4 million"],
        ["Tammerkoski Water Ltd", "Finland", "Water quality loggers and service contract", "EUR 1.1 million"],
        ["Selangor Air Quality Board", "Malaysia", "AirSense PM2.5 sensors, phase 2", "EUR 0.8 million"],
    ], [280, 110, 340, 130], "lllr", size=14, x=50)
    b.para("The five largest orders account for EUR 7.5 million, or 16% of Q4 order intake. Win rate against "
           "the main competitor: 6 of 9 tenders.", 14, color=GREY)

    # s6 win rate and targets
    page = slide("Win rate and 2025 targets")
    line_chart(page, pymupdf.Rect(50, 100, 520, 480), ["Q1 2024", "Q2 2024", "Q3 2024", "Q4 2024"],
               [27, 29, 30, 34], 20, 40, 5, "Win rate of qualified opportunities (%)",
               ["27%", "29%", "30%", "34%"], ORANGE, label_size=13, cat_size=12, title_size=14,
               axis_fmt="{:g}%")
    put(page, 570, 130, "Targets 2025", 18, BOLD, NAVY)
    for i, (label, value) in enumerate([("Order intake target", "EUR 175 million"),
                                        ("Weighted pipeline (31 Dec 2024)", "EUR 71 million"),
                                        ("Unweighted pipeline", "EUR 212 million"),
                                        ("New sales hires planned", "14")]):
        y = 175 + i * 70
        page.draw_line((570, y - 22), (910, y - 22), color=GRID, width=0.8)
        put(page, 570, y, label, 13, REGULAR, GREY)
        put(page, 570, y + 24, value, 18, BOLD, DARK)

    # s7 next steps
    slide("Next steps")
    b.y = 110
    b.bullets([
        "KX-200 list prices rise by 4.5% from 1 February 2025: inform all distributors by 6 January 2025.",
        "Launch of AirSense Gen 3 at Hannover Messe, 31 March to 4 April 2025.",
        "Roll out the municipal utility bundle in Austria and the Netherlands in Q2 2025.",
        "Hire 14 sales engineers, 6 of them for North America.",
        "Deliver the remaining 18 stations for Stadtwerke Lindenau in week 50.",
    ], 17, gap=10)
    b.space(20)
    b.para("Questions? Daniel Osei, daniel.osei@kestrel-dynamics.example", 15, BOLD, NAVY)
    return b.finish({"title": "Q4 2024 Sales Review", "author": "Daniel Osei", "subject": "Sales review slides",
                     "creator": "Presentation software", "date": "D:20250113170000+01'00'"})


# --------------------------------------------------------------------------------------------
# (5) Technical manual -- manuals/kx200_user_manual.pdf, 14 pages
# --------------------------------------------------------------------------------------------

def manual() -> bytes:
    def decorate(b: Builder, page: pymupdf.Page) -> None:
        put(page, b.left, 40, "KX-200 Environmental Data Logger - User Manual", 8, REGULAR, GREY)
        put(page, b.right, 40, "KD-MAN-200-EN Rev. 3.1", 8, REGULAR, GREY, "r")
        page.draw_line((b.left, 46), (b.right, 46), color=TEAL, width=0.8)

    def footer(page: pymupdf.Page, n: int, total: int) -> None:
        if n == 1:
            return
        put(page, 297, 805, f"Page {n} of {total}", 8, REGULAR, GREY, "c")
        put(page, 60, 805, "(c) 2024 Kestrel Dynamics AG", 7, REGULAR, GREY)

    b = Builder(margins=(60, 65, 60, 65), decorate=decorate, footer=footer)

    def note(kind: str, text: str) -> None:
        color = (0.75, 0.1, 0.1) if kind == "WARNING" else TEAL
        lines = wrap(text, b.width - 80, REGULAR, 9.5)
        h = len(lines) * 13 + 12
        b._need(h + 8)
        b.page.draw_rect(pymupdf.Rect(b.left, b.y, b.right, b.y + h), color=color, width=1)
        put(b.page, b.left + 8, b.y + 16, kind, 9, BOLD, color)
        for i, line in enumerate(lines):
            put(b.page, b.left + 72, b.y + 16 + i * 13, line, 9.5)
        b.y += h + 10

    # p1 cover
    page = b.add_page(decorate=False)
    page.draw_rect(pymupdf.Rect(0, 0, A4_W, 300), color=None, fill=TEAL)
    put(page, 60, 90, "Kestrel Dynamics", 14, BOLD, WHITE)
    put(page, 60, 190, "KX-200", 48, BOLD, WHITE)
    put(page, 60, 225, "Environmental Data Logger", 22, REGULAR, WHITE)
    put(page, 60, 265, "User Manual", 18, BOLD, (0.85, 0.95, 0.95))
    body = pymupdf.Rect(200, 360, 395, 600)
    page.draw_rect(body, color=DARK, fill=(0.88, 0.89, 0.9), width=1.5, radius=0.06)
    page.draw_rect(pymupdf.Rect(225, 390, 370, 460), color=DARK, fill=(0.2, 0.25, 0.3), width=1)
    put(page, 297, 430, "KX-200", 16, BOLD, (0.6, 0.9, 0.6), "c")
    for i, col in enumerate([(0.1, 0.7, 0.2), (0.95, 0.7, 0.1), (0.8, 0.1, 0.1)]):
        page.draw_circle((240 + i * 25, 490), 6, color=DARK, fill=col)
    for i in range(6):
        page.draw_rect(pymupdf.Rect(215 + i * 28, 600, 230 + i * 28, 625), color=DARK, fill=GREY)
    b.y = 680
    b.fields([("Document number", "KD-MAN-200-EN"), ("Revision", "3.1, October 2024"),
              ("Valid for firmware", "4.7.x and later")], 130, 10)

    # p2 contents
    b.add_page()
    sections = [("1 Safety information", 3), ("2 Product overview", 4), ("3 Technical specifications", 5),
                ("4 Installation", 6), ("5 Initial configuration", 7), ("6 Sensors and measurement channels", 8),
                ("7 Data transmission", 9), ("8 Power management", 10), ("9 Maintenance", 11),
                ("10 Troubleshooting", 12), ("11 Warranty and service", 13), ("Appendix A Abbreviations", 14),
                ("Appendix B Revision history", 14)]
    b.heading("Contents", 18)
    for title, num in sections:
        b.y += 18
        put(b.page, b.left, b.y, title, 11)
        put(b.page, b.right, b.y, str(num), 11, BOLD, TEAL, "r")
    b.space(24)
    b.heading("About this manual", 13)
    b.para("This manual describes the installation, configuration, operation and maintenance of the KX-200 "
           "Environmental Data Logger. It is intended for qualified installers and system administrators. Keep "
           "the manual with the device and pass it on to any subsequent user.", 10)
    b.heading("Conventions", 13)
    note("WARNING", "Indicates a hazard that can lead to injury or damage to the device if not avoided.")
    note("NOTE", "Indicates additional information or a recommended practice.")
    b.para("Menu items and buttons of the configuration software are written in bold. Abbreviations are "
           "explained where they are first used and are listed in Appendix A.", 10)

    # p3 safety
    b.add_page()
    b.heading("1 Safety information", 16, TEAL, rule=True)
    b.para("Read this chapter before installing or opening the device. Installation and maintenance may only be "
           "carried out by trained personnel who wear the required Personal Protective Equipment (PPE) when "
           "working at height or near traffic.", 10)
    note("WARNING", "The KX-200 contains a rechargeable lithium-ion battery. Do not short-circuit, crush or heat "
         "the battery above 60 C. Use only the original battery pack BP-72.")
    note("WARNING", "Electronic components can be destroyed by Electrostatic Discharge (ESD). Touch a grounded "
         "metal surface and use a wrist strap before opening the enclosure.")
    b.para("The enclosure meets the Ingress Protection (IP) class stated in the specifications only when the lid "
           "is closed, all four lid screws are tightened and unused cable glands are fitted with blanking "
           "plugs. After maintenance, check the lid seal for damage and dirt.", 10)
    b.para("Do not install the logger on structures that carry high-voltage lines. Maintain a distance of at "
           "least 3 m from overhead power lines. Lightning protection of the mast is the responsibility of the "
           "operator.", 10)
    note("NOTE", "Dispose of the device and the battery in accordance with local regulations for electronic "
         "waste. Kestrel offers a free take-back programme for end-of-life loggers.")

    # p4 overview
    b.add_page()
    b.heading("2 Product overview", 16, TEAL, rule=True)
    b.para("The KX-200 is a battery-powered data logger for unattended environmental monitoring. It reads up to "
           "twelve sensors, stores the measurements and transmits them over the mobile network to Kestrel "
           "Cloud or to a server of your choice.", 10)
    b.para("The main Printed Circuit Board (PCB) carries the measurement electronics, the modem and a Real-Time "
           "Clock (RTC) that keeps time for up to 10 days without power. Time is synchronised automatically "
           "through the mobile network or the optional satellite receiver. Three Light-Emitting Diode (LED) "
           "indicators on the front panel show power, network and measurement status.", 10)
    b.heading("Scope of delivery", 12)
    b.bullets(["KX-200 logger with battery pack BP-72 (installed, not connected)", "Wall and pole mounting plate",
               "Set of 4 cable glands M16 and 2 blanking plugs", "USB-C service cable, 1.5 m",
               "Quick start guide and calibration certificate"])
    b.heading("Model variants", 12)
    b.table(["Model", "Modem", "Typical use"], [
        ["KX-200-L", "LTE-M / NB-IoT", "Urban and suburban sites with mobile coverage"],
        ["KX-200-S", "Satellite (Iridium SBD)", "Remote sites without mobile coverage"],
        ["KX-200-E", "Ethernet, RS-485", "Industrial sites with a wired network"],
    ], [90, 140, 245], "lll")

    # p5 specifications
    b.add_page()
    b.heading("3 Technical specifications", 16, TEAL, rule=True)
    b.table(["Parameter", "Value"], [
        ["Dimensions (W x H x D)", "220 x 160 x 85 mm"],
        ["Weight", "1.9 kg including battery"],
        ["Enclosure material", "Glass-fibre reinforced polycarbonate, UV stabilised"],
        ["Protection class", "IP67"],
        ["Operating temperature", "-30 C to +60 C"],
        ["Storage temperature", "-40 C to +70 C"],
        ["External supply voltage", "9 V to 30 V DC"],
        ["Battery", "Li-ion, 7.2 Ah, 14.4 V nominal (BP-72)"],
        ["Battery life", "Up to 14 months at 15 min logging interval"],
        ["Data memory", "8 GB flash, approx. 40 million measurements"],
        ["Analog inputs", "8 channels, 4-20 mA or 0-10 V"],
        ["Digital inputs", "4 channels, pulse or status"],
        ["Serial interface", "RS-485, Modbus RTU, SDI-12"],
        ["Measurement accuracy", "+/-0.05% of full scale (analog inputs)"],
        ["Logging interval", "1 s to 24 h, configurable"],
        ["Mobile communication", "LTE-M / NB-IoT, bands 3, 8 and 20"],
        ["Sensor supply output", "12 V DC, max. 500 mA in total"],
        ["Certifications", "CE, UKCA, FCC Part 15"],
    ], [185, 290], "ll", size=9.5)
    note("NOTE", "Battery life depends on the logging interval, the transmission interval, the connected sensors "
         "and the ambient temperature. See chapter 8 for details.")

    # p6 installation
    b.add_page()
    b.heading("4 Installation", 16, TEAL, rule=True)
    b.heading("4.1 Choosing the site", 12)
    b.para("Choose a location with good mobile reception and free air flow around the sensors. The logger must "
           "be mounted at least 1.5 m above ground to protect it from flooding, snow and vandalism. For the "
           "optional Global Navigation Satellite System (GNSS) receiver, the antenna needs a clear view of the "
           "sky.", 10)
    b.heading("4.2 Mounting on a pole", 12)
    b.bullets([
        "Attach the Mounting Pole Adapter MPA-3 to the mounting plate with the four M6 screws supplied.",
        "Fasten the adapter to the pole (diameter 40 mm to 90 mm) with the two hose clamps. Tighten the clamps "
        "to a torque of 6 Nm.",
        "Hang the logger on the mounting plate and secure it with the safety screw at the bottom.",
        "Mount the solar panel (if used) above the logger, facing south in the northern hemisphere, at an "
        "angle of about 45 degrees.",
    ])
    b.heading("4.3 Cable entry and grounding", 12)
    b.para("Route all cables through the cable glands at the bottom of the enclosure and leave a drip loop. "
           "Tighten the glands by hand plus a quarter turn. Connect the grounding terminal to the pole or a "
           "grounding rod with a copper cable of at least 4 mm2.", 10)
    note("WARNING", "Never route cables through the lid. Water entering through the lid voids the warranty.")

    # p7 configuration
    b.add_page()
    b.heading("5 Initial configuration", 16, TEAL, rule=True)
    b.para("The logger is configured with the Kestrel Configuration Utility (KCU), version 4.2 or later, which "
           "runs on Windows and Linux. Connect the logger to your computer with the supplied Universal Serial "
           "Bus (USB) cable, or use the local web interface.", 10)
    b.heading("5.1 Inserting the SIM card", 12)
    b.para("Open the lid and insert the Subscriber Identity Module (SIM) card (nano format) into the slot on the "
           "modem board, contacts facing down. KX-200-L units supplied with a Kestrel data plan already contain "
           "an activated SIM card.", 10)
    b.heading("5.2 Local web interface", 12)
    b.para("Press the SERVICE button for 3 seconds. The logger opens a Wi-Fi access point named KX200-<serial "
           "number> for 30 minutes. Connect to it and open the web interface in a browser at the default IP "
           "address 192.168.50.1. Log in with the user name admin and the initial password printed on the type "
           "label inside the lid. You will be asked to change the password at first login.", 10)
    b.heading("5.3 Basic settings", 12)
    b.table(["Setting", "Default", "Recommendation"], [
        ["Logging interval", "15 min", "1 min to 60 min depending on the measured quantity"],
        ["Transmission interval", "60 min", "Shorter intervals reduce battery life"],
        ["Time zone", "UTC", "Keep UTC; convert in the cloud"],
        ["Access point name (APN)", "kestrel.iot", "Change only for third-party SIM cards"],
    ], [150, 90, 235], "lll")

    # p8 channels
    b.add_page()
    b.heading("6 Sensors and measurement channels", 16, TEAL, rule=True)
    b.para("Each analog input is digitised by a 24-bit Analog-to-Digital Converter (ADC). Channels are "
           "configured individually in the KCU under Channels > Input type.", 10)
    b.table(["Channel", "Type", "Range", "Typical sensor"], [
        ["CH1 - CH4", "Analog", "4-20 mA", "AirSense PM2.5 AS-25, pressure transmitters"],
        ["CH5 - CH8", "Analog", "0-10 V", "AirSense NO2 AS-N2, temperature/humidity"],
        ["D1 - D2", "Digital", "Pulse, max. 100 Hz", "Rain gauge, flow meter"],
        ["D3 - D4", "Digital", "Status", "Door contact, level switch"],
        ["RS-485", "Serial", "Modbus RTU / SDI-12", "Multi-parameter water quality probes"],
    ], [80, 60, 110, 225], "llll")
    b.heading("6.1 Sensor supply", 12)
    b.para("The logger switches the 12 V sensor supply on shortly before each measurement. The warm-up time can "
           "be set from 0 s to 120 s per channel. The total current of all sensors must not exceed 500 mA.", 10)
    b.heading("6.2 Scaling and alarms", 12)
    b.para("Raw values are converted with a linear scaling (offset and factor) or a 10-point table. For each "
           "channel two alarm thresholds can be defined; when a threshold is exceeded, the logger transmits "
           "immediately and switches to the alarm logging interval.", 10)

    # p9 transmission
    b.add_page()
    b.heading("7 Data transmission", 16, TEAL, rule=True)
    b.para("Measurements are sent with the Message Queuing Telemetry Transport (MQTT) protocol. The connection "
           "is encrypted with Transport Layer Security (TLS) version 1.3 and authenticated with a device "
           "certificate.", 10)
    b.table(["Parameter", "Default value"], [
        ["Broker", "mqtt.kestrel-cloud.example"], ["Port", "8883"], ["Topic", "kx200/<serial>/data"],
        ["Quality of service", "QoS 1"], ["Transmission interval", "60 min"],
    ], [185, 290], "ll")
    b.para("If the network is unavailable, the logger buffers all measurements locally for up to 90 days and "
           "sends them when the connection is restored. Buffered values keep their original time stamps.", 10)
    b.heading("7.1 Third-party systems", 12)
    b.para("Kestrel Cloud provides a REST Application Programming Interface (API) and can forward data to "
           "SCADA systems via OPC UA. Alternatively, the logger can publish directly to your own MQTT broker.",
           10)
    note("NOTE", "Each transmission takes about 20 seconds and consumes most of the energy used by the logger. "
         "Doubling the transmission interval extends battery life by roughly 35%.")

    # p10 power
    b.add_page()
    b.heading("8 Power management", 16, TEAL, rule=True)
    b.para("The KX-200 runs from its internal battery pack BP-72, from an external 9 V to 30 V DC supply, or "
           "from the Solar Power Kit SP-60. The KCU displays the battery State of Charge (SoC) in percent.", 10)
    b.table(["Threshold", "Battery voltage", "Logger behaviour"], [
        ["Low-battery warning", "11.2 V", "Warning message sent, LED flashes yellow"],
        ["Power saving", "10.8 V", "Transmission interval doubled"],
        ["Shutdown", "10.5 V", "Logging stops, data is kept"],
    ], [130, 100, 245], "lcl")
    b.heading("Typical battery life without solar charging", 12)
    b.table(["Logging interval", "Transmission interval", "Battery life"], [
        ["1 min", "15 min", "3 months"], ["15 min", "60 min", "14 months"], ["60 min", "6 h", "22 months"],
    ], [130, 130, 100], "ccc")
    b.para("In sleep mode the logger draws 45 uA. With the SP-60 kit, operation is energy-autonomous in Central "
           "Europe at logging intervals of 1 min or longer.", 10)

    # p11 maintenance
    b.add_page()
    b.heading("9 Maintenance", 16, TEAL, rule=True)
    b.table(["Task", "Interval"], [
        ["Visual inspection of enclosure, cables and mounting", "every 3 months"],
        ["Replace dust filter of AirSense modules (spare set FS-10)", "every 6 months"],
        ["Sensor calibration (factory or on site)", "every 12 months"],
        ["Replace desiccant bag in the enclosure", "every 24 months"],
        ["Replace battery pack BP-72", "every 5 years"],
    ], [330, 145], "ll")
    b.heading("9.1 Firmware updates", 12)
    b.para("Firmware updates are distributed Over-the-Air (OTA) through Kestrel Cloud. An update is only started "
           "when the battery voltage is above 12.0 V. The logger keeps the previous firmware and returns to it "
           "automatically if the new version fails to start. The current firmware version is shown in the KCU "
           "under Device > Info.", 10)
    b.heading("9.2 Cleaning", 12)
    b.para("Clean the enclosure with a damp cloth. Do not use a high-pressure cleaner or solvents. Keep the "
           "ventilation openings of the sensor housings free of insects and spider webs.", 10)

    # p12 troubleshooting
    b.add_page()
    b.heading("10 Troubleshooting", 16, TEAL, rule=True)
    b.para("Error codes are shown in the KCU, in Kestrel Cloud and in the status message of each transmission.",
           10)
    b.table(["Code", "Meaning", "Possible cause", "Remedy"], [
        ["E-11", "No network registration", "No coverage, SIM not activated", "Check coverage; activate SIM"],
        ["E-17", "Sensor communication timeout", "Loose connector, sensor defective or not powered",
         "Check cable and connector; reseat plug; check sensor supply"],
        ["E-22", "Memory full", "Ring buffer disabled and memory full", "Transfer data; enable ring buffer"],
        ["E-31", "Clock drift greater than 2 s", "No time synchronisation for more than 7 days",
         "Check network; replace RTC backup cell"],
        ["E-40", "Battery voltage below 10.5 V", "Battery discharged or defective", "Charge or replace BP-72"],
        ["E-52", "Enclosure humidity above 80%", "Lid not closed, desiccant saturated",
         "Dry the enclosure; replace desiccant"],
    ], [45, 125, 140, 165], "llll", size=9)
    b.heading("10.1 Logger does not start", 12)
    b.para("Check that the battery connector is plugged in. If the battery voltage is below 10.5 V, the logger "
           "stays off until an external supply or the solar panel provides power.", 10)

    # p13 troubleshooting continued and warranty
    b.add_page()
    b.heading("10 Troubleshooting (continued)", 16, TEAL, rule=True)
    b.heading("10.2 LED status codes", 12)
    b.table(["LED", "Pattern", "Meaning"], [
        ["Power", "Green, on", "Supply present, battery above 11.2 V"],
        ["Power", "Yellow, flashing", "Low battery"],
        ["Network", "Red, flashes 3 times", "SIM card not detected"],
        ["Network", "Green, flashing", "Transmission in progress"],
        ["Measure", "Red, on", "At least one channel reports an error code"],
    ], [80, 130, 265], "lll")
    b.heading("10.3 Factory reset", 12)
    b.para("Press and hold the RESET button for 10 seconds until all LEDs flash. The configuration is reset; "
           "stored measurements are kept.", 10)
    b.heading("11 Warranty and service", 16, TEAL, rule=True, before=14)
    b.para("Kestrel Dynamics grants a warranty of 36 months from the date of delivery. The warranty does not "
           "cover damage caused by improper installation, lightning or opening of the battery pack.", 10)
    b.para("Before returning a device, request a Return Material Authorization (RMA) number from our service "
           "team. Devices without an RMA number cannot be accepted.", 10)
    b.fields([("Service hotline", "+49 421 555 0199 (Mon-Fri, 8:00-17:00 CET)"),
              ("Email", "service@kestrel-dynamics.example"),
              ("Postal address", "Kestrel Dynamics AG, Service, Hafenstrasse 18, 28217 Bremen")], 110, 10)

    # p14 abbreviations and revision history
    b.add_page()
    b.heading("Appendix A Abbreviations", 16, TEAL, rule=True)
    b.table(["Abbreviation", "Meaning"], [
        ["ADC", "Analog-to-Digital Converter"], ["API", "Application Programming Interface"],
        ["APN", "Access Point Name"], ["ESD", "Electrostatic Discharge"],
        ["GNSS", "Global Navigation Satellite System"], ["IP", "Ingress Protection"],
        ["KCU", "Kestrel Configuration Utility"], ["LED", "Light-Emitting Diode"],
        ["MQTT", "Message Queuing Telemetry Transport"], ["OTA", "Over-the-Air"],
        ["PCB", "Printed Circuit Board"], ["PPE", "Personal Protective Equipment"],
        ["RMA", "Return Material Authorization"], ["RTC", "Real-Time Clock"],
        ["SIM", "Subscriber Identity Module"], ["SoC", "State of Charge"],
        ["TLS", "Transport Layer Security"], ["USB", "Universal Serial Bus"],
    ], [110, 365], "ll", size=9)
    b.heading("Appendix B Revision history", 16, TEAL, rule=True)
    b.table(["Revision", "Date", "Changes"], [
        ["3.0", "March 2024", "New chapter on data transmission; KCU 4.x"],
        ["3.1", "October 2024", "Error codes E-40 and E-52 added; battery life table updated"],
    ], [70, 100, 305], "lll", size=9)

    toc = [[1, t, p] for t, p in sections]
    return b.finish({"title": "KX-200 Environmental Data Logger - User Manual", "author": "Kestrel Dynamics AG",
                     "subject": "User manual KD-MAN-200-EN, revision 3.1",
                     "keywords": "KX-200, data logger, manual, installation, troubleshooting",
                     "date": "D:20241015120000+02'00'"}, toc)


# --------------------------------------------------------------------------------------------
# (6) Scanned document (image only) -- scans/field_service_report_fsr_24_1127.pdf, 2 pages
# --------------------------------------------------------------------------------------------

SCAN_DPI = 200
SCAN_SEED = 20241127


def service_report_paper() -> pymupdf.Document:
    """The paper original of the field service report (typed form, filled in)."""
    b = Builder(margins=(60, 60, 60, 60))

    def paper(page: pymupdf.Page) -> None:
        page.draw_rect(page.rect, color=None, fill=(0.965, 0.962, 0.955))

    b.decorate = lambda _b, page: paper(page)
    page = b.add_page()
    put(page, 60, 70, "KESTREL DYNAMICS AG - FIELD SERVICE", 11, BOLD)
    put(page, 60, 105, "FIELD SERVICE REPORT", 22, BOLD)
    page.draw_line((60, 115), (535, 115), color=BLACK, width=1.5)
    b.y = 122
    b.fields([("Report No.", "FSR-24-1127"), ("Date of visit", "27 November 2024"),
              ("Customer", "Stadtwerke Lindenau GmbH"), ("Site", "Pumping Station Nord, Oldenburg"),
              ("Order reference", "SWL-2024-311"), ("Technician", "Jonas Weber"),
              ("Device type", "KX-200 Environmental Data Logger"), ("Stations commissioned", "6 of 24"),
              ("Firmware version", "4.7.2"), ("Battery voltage", "12.6 V (station 1)"),
              ("Time on site", "7.5 hours")], 170, 12, step=24)
    b.y += 6
    b.para("Work performed", 13, BOLD, gap=2)
    b.para("Installed six KX-200 stations on existing poles using MPA-3 adapters. Activated the LTE-M modems and "
           "registered all stations in Kestrel Cloud. Checked data reception for every station.", 12,
           leading=1.5)
    b.para("Issues found", 13, BOLD, gap=2)
    b.para("Error E-17 at station 4 on channel CH3. The sensor cable connector was loose. Connector reseated and "
           "secured with a cable tie. Error cleared after restart.", 12, leading=1.5)

    page = b.add_page()
    put(page, 60, 80, "FIELD SERVICE REPORT FSR-24-1127 - PAGE 2", 13, BOLD)
    page.draw_line((60, 90), (535, 90), color=BLACK, width=1.2)
    b.y = 105
    b.para("Commissioning checklist", 14, BOLD, gap=6)
    b.table(["Check", "Result"], [
        ["Mounting and clamp torque 6 Nm", "OK"], ["Grounding connected", "OK"],
        ["SIM card and network registration", "OK"], ["Sensor readings plausible", "OK"],
        ["Data received in Kestrel Cloud", "OK"],
    ], [330, 145], "lc", size=12, header_fill=(0.3, 0.3, 0.3), zebra=False)
    b.para("Remarks", 14, BOLD, gap=2)
    b.para("Remaining 18 stations to be installed in week 50. Customer to provide access to sites 7 to 12.", 12,
           leading=1.5)
    b.fields([("Next calibration due", "November 2025"), ("Customer representative", "Martin Hartmann")],
             200, 12, step=24)
    b.y += 40
    for x, label in [(60, "Customer signature"), (320, "Technician signature")]:
        page.draw_line((x, b.y), (x + 200, b.y), color=BLACK, width=0.8)
        put(page, x, b.y + 16, label, 11)
    page.draw_bezier((80, b.y - 5), (110, b.y - 40), (130, b.y + 5), (190, b.y - 25), color=(0.1, 0.1, 0.45),
                     width=1.4)
    page.draw_bezier((340, b.y - 8), (360, b.y - 30), (400, b.y), (450, b.y - 20), color=(0.1, 0.1, 0.45),
                     width=1.4)
    return b.doc


def scanned_service_report() -> bytes:
    """Rasterise the paper original like a cheap office scanner: greyscale, skew, speckles, JPEG."""
    rng = random.Random(SCAN_SEED)
    paper = service_report_paper()
    out = pymupdf.open()
    zoom = SCAN_DPI / 72
    for page in paper:
        # scanner shadow along the left edge and a faint fold line
        for i in range(10):
            g = 0.78 + i * 0.02
            page.draw_rect(pymupdf.Rect(i * 1.2, 0, (i + 1) * 1.2, A4_H), color=None, fill=(g, g, g))
        page.draw_line((0, 421), (A4_W, 423), color=(0.88, 0.88, 0.88), width=1.2)
        angle = rng.choice([-0.6, -0.4, 0.4, 0.6])
        pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom).prerotate(angle), colorspace=pymupdf.csGRAY)
        for _ in range(900):
            x, y = rng.randrange(pix.width - 1), rng.randrange(pix.height - 1)
            v = rng.randrange(70, 190)
            for dx, dy in ((0, 0), (1, 0), (0, 1))[: rng.randrange(1, 4)]:
                pix.set_pixel(x + dx, y + dy, (v,))
        jpeg = pix.tobytes("jpeg", jpg_quality=75)
        new = out.new_page(width=A4_W, height=A4_H)
        new.insert_image(new.rect, stream=jpeg)
    paper.close()
    return save(out, {"title": "Scan 2024-11-28 08:42", "author": "", "creator": "KD-SCAN-03 (MFP scanner)",
                      "date": "D:20241128084200+01'00'"})


# --------------------------------------------------------------------------------------------
# Questions
# --------------------------------------------------------------------------------------------

AR = "finance/annual_report_2024.pdf"
INV_WF = "finance/invoice_wf_2024_0817.pdf"
INV_KD = "finance/invoice_kd_inv_24_1193.pdf"
CLAIM = "hr/travel_expense_claim_tec_2024_0342.pdf"
MEMO = "hr/memo_mobile_work_2024_12.pdf"
MINUTES = "governance/board_minutes_2024_11_19.pdf"
SLIDES = "sales/q4_2024_sales_review.pdf"
MANUAL = "manuals/kx200_user_manual.pdf"
SCAN = "scans/field_service_report_fsr_24_1127.pdf"

DOCUMENTS: dict[str, Callable[[], bytes]] = {
    AR: annual_report, INV_WF: supplier_invoice, INV_KD: customer_invoice, CLAIM: expense_claim, MEMO: memo,
    MINUTES: board_minutes, SLIDES: slide_deck, MANUAL: manual, SCAN: scanned_service_report,
}

CATEGORY = {
    AR: ("annual report", "finance"), INV_WF: ("invoice", "finance"), INV_KD: ("invoice", "finance"),
    CLAIM: ("form", "human resources"), MEMO: ("memo", "human resources"),
    MINUTES: ("meeting minutes", "corporate governance"), SLIDES: ("slide deck", "sales"),
    MANUAL: ("technical manual", "engineering"), SCAN: ("scanned form", "field service"),
}

# (question, answer variants, evidence [(document, page)]); category and domain follow the documents.
QUESTIONS: list[tuple[str, list[list[str]], list[tuple[str, int]]]] = [
    # --- single page ---
    ("What was Kestrel Dynamics' total revenue in 2024 according to the consolidated income statement?",
     [["148,612"], ["EUR 148.6 million"], ["148.6 million"]], [(AR, 6)]),
    ("What was the operating income (EBIT) in 2023, in EUR thousand?", [["15,005"]], [(AR, 6)]),
    ("How much profit after tax did the company make in 2024?", [["13,396"], ["EUR 13.4 million"]], [(AR, 6)]),
    ("How many staff did Kestrel Dynamics have at the end of 2024?", [["1,184"], ["1184"]], [(AR, 9)]),
    ("What was the employee turnover rate in 2023?", [["8.1%"]], [(AR, 9)]),
    ("What dividend per share is proposed for the 2024 financial year?", [["EUR 0.85"], ["0.85"]], [(AR, 4)]),
    ("What was the equity ratio at 31 December 2024?", [["56.9%"]], [(AR, 7)]),
    ("What share of the company's electricity came from renewable sources in 2024?", [["78%"]], [(AR, 10)]),
    ("What revenue range does the Management Board expect for 2025?",
     [["between EUR 160 million and EUR 168 million"], ["EUR 160 million to EUR 168 million"]], [(AR, 11)]),
    ("On which date will the 2025 Annual General Meeting take place?", [["14 May 2025"]], [(AR, 12)]),
    ("According to the five-year revenue chart, what was revenue in 2021 (EUR million)?", [["104.9"]],
     [(AR, 8)]),
    ("What VAT rate is applied on invoice WF-2024-0817?", [["19%"]], [(INV_WF, 1)]),
    ("By when does Kestrel have to pay the Weser Feinmechanik invoice?", [["12 October 2024"]], [(INV_WF, 1)]),
    ("What is the gross total of the Weser Feinmechanik invoice, including tax?", [["13,463.66"]],
     [(INV_WF, 1)]),
    ("What is the unit price of the AirSense NO2 Sensor Module on the invoice to Stadtwerke Lindenau?",
     [["340.00"]], [(INV_KD, 1)]),
    ("What is the cost centre on travel expense claim TEC-2024-0342?", [["CC-4410"]], [(CLAIM, 1)]),
    ("How much is paid out to Jonas Weber after the advance is deducted?", [["EUR 236.10"], ["236.10"]],
     [(CLAIM, 1)]),
    ("From which date may employees work from home up to three days a week?", [["1 March 2025"]], [(MEMO, 1)]),
    ("How large is the one-off relocation allowance for the Hamburg service team?", [["EUR 2,500"]],
     [(MEMO, 1)]),
    ("What are the core hours in which employees must be reachable under the mobile work policy?",
     [["10:00 and 15:00"], ["10:00 to 15:00"]], [(MEMO, 2)]),
    ("Who sent the memo announcing the new mobile work policy?", [["Katrin Vogel"]], [(MEMO, 1)]),
    ("Who approved Jonas Weber's travel expense claim?", [["Lukas Brandt"]], [(CLAIM, 1)]),
    ("How much investment did the Supervisory Board approve for the Porto plant at its November 2024 meeting?",
     [["EUR 14.5 million"]], [(MINUTES, 2)]),
    ("When is the next Supervisory Board meeting after 19 November 2024?", [["11 February 2025"]],
     [(MINUTES, 3)]),
    ("What was order intake in Q4 2024?", [["EUR 46.2 million"]], [(SLIDES, 2)]),
    ("According to the sales review chart, what was revenue in Q2 2023 in EUR million?", [["31.9"]],
     [(SLIDES, 3)]),
    ("Which customer placed the largest order in Q4 2024?", [["Great Lakes Monitoring Consortium"]],
     [(SLIDES, 5)]),
    ("What was the win rate of qualified opportunities in Q4 2024?", [["34%"]], [(SLIDES, 6)]),
    ("What ingress protection class does the KX-200 enclosure have?", [["IP67"]], [(MANUAL, 5)]),
    ("What is the default IP address of the KX-200 web interface?", [["192.168.50.1"]], [(MANUAL, 7)]),
    ("What does MQTT stand for?", [["Message Queuing Telemetry Transport"]], [(MANUAL, 9)]),
    ("What does error code E-22 mean on the KX-200?", [["Memory full"]], [(MANUAL, 12)]),
    ("How long is the guarantee on the KX-200 logger?", [["36 months"]], [(MANUAL, 13)]),
    ("Which firmware version was installed during the field service visit at Pumping Station Nord?",
     [["4.7.2"]], [(SCAN, 1)]),
    ("According to the field service report, when is the next calibration due?", [["November 2025"]],
     [(SCAN, 2)]),
    # --- cross-page (one document, several pages) ---
    ("What were research and development expenses in 2024 (EUR thousand), and how many employees worked in "
     "research and development at year-end 2024?", [["17,834", "318"]], [(AR, 6), (AR, 9)]),
    ("What net income did Kestrel report for 2024, and what total dividend distribution does the proposal "
     "imply?", [["13,396", "EUR 10.54 million"]], [(AR, 6), (AR, 4)]),
    ("On invoice KD-INV-24-1193, what amount is carried forward from page 1, and what is the total amount due?",
     [["92,030.00", "107,977.97"]], [(INV_KD, 1), (INV_KD, 2)]),
    ("What battery capacity does the KX-200 have, and at what voltage is the low-battery warning triggered?",
     [["7.2 Ah", "11.2 V"]], [(MANUAL, 5), (MANUAL, 10)]),
    ("What one-off amounts does the memo grant for relocation and for home-office equipment?",
     [["EUR 2,500", "EUR 400"]], [(MEMO, 1), (MEMO, 2)]),
    ("In the Q4 2024 sales review, what was DACH revenue in Q4 and what is the order intake target for 2025?",
     [["18.9", "EUR 175 million"]], [(SLIDES, 4), (SLIDES, 6)]),
    # --- cross-document ---
    ("What was revenue for the first nine months of 2024 according to the board minutes, and what was Q4 2024 "
     "revenue according to the sales review?", [["EUR 107.9 million", "EUR 40.7 million"], ["107.9", "40.7"]],
     [(MINUTES, 1), (SLIDES, 2)]),
    ("Which technician installed the loggers at Stadtwerke Lindenau, and what total did he claim for the trip?",
     [["Jonas Weber", "EUR 386.10"], ["Jonas Weber", "386.10"]], [(SCAN, 1), (CLAIM, 1)]),
    ("By what percentage will KX-200 list prices rise in 2025, and what unit price was charged for the KX-200 "
     "on invoice KD-INV-24-1193?", [["4.5%", "1,890.00"]], [(MINUTES, 2), (INV_KD, 1)]),
    ("Which error code did the technician find at station 4, and what does that code mean according to the "
     "user manual?", [["E-17", "Sensor communication timeout"]], [(SCAN, 1), (MANUAL, 12)]),
    ("Who signed the CEO letter in the annual report, and who chaired the Supervisory Board meeting of 19 "
     "November 2024?", [["Miriam Hollenbeck", "Henrik Aalto"]], [(AR, 3), (MINUTES, 1)]),
]


def question_records() -> list[dict]:
    records = []
    for i, (question, answers, evidence) in enumerate(QUESTIONS, start=1):
        docs = list(dict.fromkeys(d for d, _ in evidence))
        if len(docs) == 1:
            category, domain = CATEGORY[docs[0]]
        else:
            category, domain = "multiple", "mixed"
        records.append({
            "id": f"demo-{i:03d}",
            "question": question,
            "answer_variants": answers,
            "evidence": [{"document": d, "page": p} for d, p in evidence],
            "document_category": category,
            "domain": domain,
        })
    return records


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------

def build(out_dir: Path) -> list[Path]:
    """Write all documents and questions.jsonl under ``out_dir``; return the files written."""
    docs_dir = out_dir / "docs"
    written = []
    for rel, make in DOCUMENTS.items():
        target = docs_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        data = make()
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
        written.append(target)
    # drop PDFs left over from earlier versions of this script, then empty folders
    for stale in sorted(docs_dir.rglob("*.pdf")):
        if stale not in written:
            stale.unlink()
    for folder in sorted((p for p in docs_dir.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    lines = [json.dumps(r, ensure_ascii=True) for r in question_records()]
    questions = out_dir / "questions.jsonl"
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")
    written.append(questions)
    return written


def main(argv: list[str]) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__.strip().splitlines()[0])
        print("usage: build_demo.py [OUT_DIR]")
        return 2
    out_dir = Path(argv[1]).resolve() if len(argv) == 2 else HERE
    written = build(out_dir)
    pages = 0
    for path in written:
        if path.suffix == ".pdf":
            with pymupdf.open(path) as doc:
                pages += len(doc)
    print(f"wrote {len(written) - 1} PDFs ({pages} pages) and {len(QUESTIONS)} questions to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
