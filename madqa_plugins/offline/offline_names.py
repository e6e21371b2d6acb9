"""Answer type names for the offline reader: people, organisations and other proper names, with the
capitalised words that are not names ("Total", "Invoice", months, weekdays, ...)."""

from __future__ import annotations

import re

from madqa_plugins.offline.offline_dates import MONTHS

_NAMEWORD = r"[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?"
NAME_RE = re.compile(rf"\b(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?{_NAMEWORD}(?:\s+[A-Z]\.)?(?:\s+(?:van|von|de|da|del|der|di|le|la)"
                     rf"(?=\s+[A-Z]))?(?:\s+{_NAMEWORD}){{1,2}}\b")
PROPER_RE = re.compile(r"\b[A-Z][\w&'.\-]*[\w&](?:(?:\s+(?:of|and|&|for|de|the|der|von))?\s+[A-Z0-9][\w&'.\-]*[\w&]){0,5}"
                       r"|\b[A-Z]{2,}\b")
NOT_NAME = MONTHS | frozenset("""
The A An This That These Those Inc Ltd LLC LLP GmbH AG Corp Corporation Company Co Group Report Annual Total Department
Office Street Road Avenue Table Figure Page Section Chapter Summary Invoice Memo Memorandum Subject Date From To Re
Dear Monday Tuesday Wednesday Thursday Friday Saturday Sunday University Institute Bank Board Committee Project Plan
Policy Agreement Contract Order Purchase Net Gross Revenue Income Budget Quarter Fiscal Year North South East West
New United States Kingdom National International Global Services Systems Solutions Technologies Industries Holdings
Partners Limited Ministry Council City County Hospital School College Center Centre Program Programme Director
Manager Chief Officer President Executive Vice Head Chair Chairman Secretary Treasurer Approved Prepared Signed
Sincerely Regards Best Thank Thanks Please Note Notes Key Main General Final Draft Internal Public Private Meeting
Minutes Supervisory Management Service Sales Financial Statement Balance Sheet Customer Item Description Amount
In On At For By With If As It We Our All Any No Yes Phone Email Fax Tel Address Yours Kind Attn Attention
Lane Drive Way Place Square Park Court Boulevard Flat Suite Building Floor Hall Station Room Trust Property Properties
Works Civil Logistics Trading Capital Fund Foundation Association Society Agency Authority Consortium Monitoring
Insurance Energy Health Medical Construction Engineering Consulting Software Media Studio Labs Laboratory Market
""".split())

ORG_SUFFIX = (r"\b(?:Inc|Ltd|LLC|LLP|PLC|GmbH|AG|SE|SA|SAS|BV|NV|Corp|Corporation|Company|Co|Group|Trust|Partners|"
               r"Associates|Consortium|Bank|Services|Solutions|Systems|Works|Industries|Holdings|Foundation|Institute|"
               r"University|Agency|Authority|Council|Society|Association|Labs?|Technologies|Logistics|Trading)\b\.?")
HONORIFICS = frozenset({"Dr", "Mr", "Mrs", "Ms", "Prof"})
