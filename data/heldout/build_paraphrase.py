"""Write a small held-out corpus whose questions paraphrase their evidence (lexical match fails).

    python data/heldout/build_paraphrase.py OUT_DIR    # OUT_DIR/docs/*.pdf and OUT_DIR/questions.jsonl

Made to see where dense or hybrid retrieval helps and where it does not: each question avoids the
words of its evidence sentence ("How fast can the ship travel at most?" for "maximum cruising speed
is 18 knots"), and every page also carries distractor text that shares the question's words.
Written once and not tuned against any retriever; the figures in docs/plugins.md come from it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_heldout import write_pdf  # noqa: E402

# (file, [page texts]); the facts the questions ask about are marked by the questions' evidence
DOCS = {
    "shipping/fleet_overview.pdf": [
        "Fleet overview. The company operates eleven vessels on routes in the North Sea. Fast delivery and "
        "travel times matter to every customer, and our ships are inspected each year.",
        "MV Northern Tern. Built in 2016, the vessel's maximum cruising speed is 18 knots and its hold takes "
        "420 containers. The crew of fourteen works in two watches.",
        "Ports of call. Rotterdam, Hamburg and Aarhus are served weekly. How fast cargo moves through a "
        "port depends on cranes, customs and the weather at sea.",
    ],
    "corporate/company_history.pdf": [
        "Our story. The firm was founded in 1987 by two engineers in a rented garage in Utrecht. The "
        "business grew slowly in its first decade.",
        "Milestones. Our headquarters relocated to Rotterdam in June 2019, next to the river terminal. "
        "The main office in the old city was sold to a housing cooperative.",
        "Leadership. Dr. Amara Okafor chairs the ethics panel, which meets four times a year. The company "
        "board approves the committee's annual plan.",
    ],
    "environment/valley_report.pdf": [
        "Climate. Annual rainfall in the valley averages 640 millimetres, most of it between October and "
        "March. Each year the valley floods in a few low fields.",
        "Water. The reservoir holds 52 million cubic metres of water behind an earth dam built in 1961. The "
        "lake is used for drinking water and irrigation.",
        "Wildlife. Migrating storks arrive in late March and nest on the church towers. Birds of prey hunt "
        "over the meadows, and the return of the otter was recorded in 2021.",
    ],
    "infrastructure/bridge_factsheet.pdf": [
        "The Saltmarsh Bridge. The bridge spans 1,280 metres between the two banks of the estuary and "
        "carries four traffic lanes. The river crossing opened in 2004.",
        "Maintenance. Cables are inspected every two years; painting the steel deck takes a crew of 30 "
        "people about five months. How long each closure lasts is announced in advance.",
    ],
    "consumer/product_terms.pdf": [
        "Warranty. The warranty covers defects for 36 months from purchase, provided the receipt is kept. "
        "Damage from misuse is excluded.",
        "Battery. The laptop's battery lasts up to 11 hours of light office work. Charging the notebook "
        "computer to 80 percent takes about one hour.",
        "Returns. Products bought online may be sent back within 30 days. A guarantee card is valid only "
        "with the product's serial number.",
    ],
    "leisure/museum_guide.pdf": [
        "Visiting. Tickets cost EUR 45 for adults and EUR 20 for children under 12. The price includes the "
        "audio guide. Admission for groups must be booked.",
        "Opening hours. The museum opens at 10:00 from Tuesday to Sunday. The clinic on the ground floor "
        "opens at 07:30 on weekdays for staff.",
    ],
    "agriculture/orchard_season.pdf": [
        "Season summary. The orchard harvested 9,300 kilograms of apples and 2,100 kilograms of pears. Fruit "
        "yield per tree was lower than last year because of a late frost.",
        "Workforce. Seasonal pickers came from four countries; the weight of each crate is checked at the "
        "gate. The plant for juice pressing ran for six weeks.",
    ],
    "education/school_annual.pdf": [
        "Library. The school library lends out roughly 14,000 books annually, most of them novels. The "
        "reading room is open until 17:00.",
        "Transport. The aircraft seats 186 passengers in a two-class layout, as pupils learned on the "
        "airport visit. Travellers to the trip each paid EUR 12.",
    ],
}

QUESTIONS = [
    ("How fast can the ship travel at most?", ["18 knots"], "shipping/fleet_overview.pdf", 2),
    ("In which year was the business established?", ["1987"], "corporate/company_history.pdf", 1),
    ("To which city did the company move its main office?", ["Rotterdam"], "corporate/company_history.pdf", 2),
    ("Who leads the ethics committee?", ["Amara Okafor", "Dr. Amara Okafor"], "corporate/company_history.pdf", 3),
    ("How much precipitation does the valley receive each year?", ["640 millimetres"],
     "environment/valley_report.pdf", 1),
    ("What is the storage capacity of the lake behind the dam?", ["52 million cubic metres"],
     "environment/valley_report.pdf", 2),
    ("When do the migratory birds come back?", ["late March"], "environment/valley_report.pdf", 3),
    ("How long is the crossing over the estuary?", ["1,280 metres"], "infrastructure/bridge_factsheet.pdf", 1),
    ("For how long is the guarantee valid after buying the product?", ["36 months"],
     "consumer/product_terms.pdf", 1),
    ("What is the notebook computer's maximum runtime on one charge?", ["11 hours"], "consumer/product_terms.pdf", 2),
    ("What is the admission price for a grown-up?", ["EUR 45"], "leisure/museum_guide.pdf", 1),
    ("What time does the medical centre start seeing people Monday to Friday?", ["07:30"],
     "leisure/museum_guide.pdf", 2),
    ("What weight of apples was picked?", ["9,300 kilograms"], "agriculture/orchard_season.pdf", 1),
    ("How many volumes does the school's reading room loan out per year?", ["14,000", "roughly 14,000"],
     "education/school_annual.pdf", 1),
    ("How many travellers can the plane carry?", ["186"], "education/school_annual.pdf", 2),
]


def main(out: Path) -> None:
    for name, pages in DOCS.items():
        write_pdf(out / "docs" / name, pages)
    with open(out / "questions.jsonl", "w", encoding="utf-8") as f:
        for n, (question, answers, file, page) in enumerate(QUESTIONS, 1):
            row = {"id": f"paraphrase-{n:03}", "question": question, "answer_variants": [[a] for a in answers],
                   "evidence": [{"document": file, "page": page}], "document_category": "held-out",
                   "domain": file.split("/")[0]}
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
