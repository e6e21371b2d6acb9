#!/usr/bin/env python3
"""A small held-out corpus for query strategies: questions worded unlike their pages.

Usage::

    python data/heldout/build_heldout.py OUT_DIR   # OUT_DIR/docs/*.pdf and OUT_DIR/questions.jsonl

Four fictional documents (a wind-turbine maintenance manual, a personnel policy, a service
contract, board minutes). Of the 16 questions, 6 use a synonym of the page's word ("staff" for
"employees", "guarantee" for "warranty"), 3 use the spelled-out form where the page uses the
abbreviation or the other way round (defined elsewhere in the corpus), 7 use the page's own words
(controls). Written for issue 6 to check query strategies on text they were not developed on —
but by the same person who wrote the strategies, so read the figures as a sanity check, not a
benchmark. Deterministic: same input, same files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pymupdf

DOCS: dict[str, list[str]] = {
    "manuals/wt3_maintenance_manual.pdf": [
        "Norvik WT-3 Maintenance Manual\n\nThis manual describes the inspections of the WT-3 wind turbine. Every visit "
        "is documented in a Field Service Report (FSR). Technicians wear Personal Protective Equipment (PPE) at all "
        "times. Turbine data come from the Supervisory Control and Data Acquisition (SCADA) system.",
        "Blade inspection\n\nThe leading edge of each rotor blade is checked for erosion every 6 months. The maximum "
        "permitted erosion depth is 1.8 mm. Beyond this limit the blade is repaired by a certified technician.",
        "Gearbox\n\nThe gearbox oil is replaced every 24 months. Oil samples are sent to the laboratory in Aalborg. "
        "The Mean Time Between Failures (MTBF) of the gearbox is 41,000 hours.",
        "Reporting\n\nEach FSR must be uploaded within 48 hours of the visit. SCADA records the operating hours of "
        "every turbine. SCADA alarms are reviewed daily by the control room.",
    ],
    "hr/personnel_policy_2025.pdf": [
        "Norvik Energy Personnel Policy 2025\n\nThe company employs 214 employees across three sites. Overtime is "
        "compensated at 150% of the hourly wage.",
        "Annual leave\n\nEvery employee is entitled to 28 days of paid vacation per year. Requests go to the line "
        "manager at least two weeks in advance.",
    ],
    "contracts/service_agreement_sa_2025_117.pdf": [
        "Service Agreement between Norvik Energy and Baltic Wind Farms A/S\n\nContract number SA-2025-117. Term: "
        "1 January 2025 to 31 December 2029.",
        "Warranty and fees\n\nThe manufacturer's warranty on the WT-3 rotor blades lasts 60 months from "
        "commissioning. The annual service fee is EUR 38,500 per turbine.",
    ],
    "governance/board_minutes_2025_03_14.pdf": [
        "Minutes of the Norvik Energy board meeting, 14 March 2025\n\nChair: Ingrid Solberg. The board approved a "
        "budget of EUR 2.4 million for new FSR tablets.",
        "The board discussed blade erosion at the Hanstholm site. Staff turnover fell to 6.1% in 2024.",
    ],
}

M, H, C, G = ("manuals/wt3_maintenance_manual.pdf", "hr/personnel_policy_2025.pdf",
              "contracts/service_agreement_sa_2025_117.pdf", "governance/board_minutes_2025_03_14.pdf")
QUESTIONS: list[tuple[str, str, list[str], str, int]] = [  # kind, question, answers, document, page
    ("synonym", "What is the maximum allowed wear depth on the leading edge of a blade?", ["1.8 mm"], M, 2),
    ("synonym", "How many staff does Norvik Energy have?", ["214"], H, 1),
    ("synonym", "How many days of holiday does each employee get per year?", ["28 days", "28"], H, 2),
    ("synonym", "How long is the guarantee on the WT-3 rotor blades?", ["60 months"], C, 2),
    ("synonym", "What is the yearly service charge per turbine?", ["EUR 38,500", "38,500"], C, 2),
    ("synonym", "How often is the gearbox lubricant replaced?", ["every 24 months", "24 months"], M, 3),
    ("abbreviation", "Within how many hours must each Field Service Report be uploaded?", ["48 hours", "48"], M, 4),
    ("abbreviation", "How often are Supervisory Control and Data Acquisition alarms reviewed?", ["daily"], M, 4),
    ("abbreviation", "What budget was approved for new Field Service Report tablets?",
     ["EUR 2.4 million", "2.4 million"], G, 1),
    ("control", "What is the MTBF of the gearbox?", ["41,000 hours", "41,000"], M, 3),
    ("control", "What was the staff turnover in 2024?", ["6.1%"], G, 2),
    ("control", "Who chaired the Norvik Energy board meeting on 14 March 2025?", ["Ingrid Solberg"], G, 1),
    ("control", "In which city is the laboratory that receives the oil samples?", ["Aalborg"], M, 3),
    ("control", "At what percentage of the hourly wage is overtime compensated?", ["150%"], H, 1),
    ("control", "What is the contract number of the service agreement with Baltic Wind Farms?", ["SA-2025-117"], C, 1),
    ("control", "How often is the leading edge of each rotor blade checked for erosion?",
     ["every 6 months", "6 months"], M, 2),
]


def write_pdf(path: Path, pages: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(60, 60, 535, 782), text, fontsize=11, fontname="helv")
    doc.set_metadata({"producer": "madqa held-out builder", "creationDate": "D:20250101000000",
                      "modDate": "D:20250101000000"})
    doc.save(path, no_new_id=True, garbage=3)
    doc.close()


def build(out: Path) -> None:
    for name, pages in DOCS.items():
        write_pdf(out / "docs" / name, pages)
    with open(out / "questions.jsonl", "w", encoding="utf-8") as f:
        for n, (kind, question, answers, document, page) in enumerate(QUESTIONS, 1):
            row = {"id": f"heldout-{n:03d}", "question": question, "answer_variants": [[a] for a in answers],
                   "evidence": [{"document": document, "page": page}], "document_category": kind,
                   "domain": document.split("/")[0]}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build(Path(sys.argv[1]))
