"""Reading a question for the offline backend: its kind of answer, terms, target and synonyms.

Rule based and deterministic: question words and cues (``how much`` + a money word is money,
``who`` is a person...), content words without stopwords, the attribute asked for, and a small
general synonym list (multi-word entries are phrases). Compound questions ("What is X, and who
is Y?") are split into parts that share their lead-in.
"""

from __future__ import annotations

import re

from madqa_plugins.offline.offline_spans import Question, stem, stems_of, words

STOPWORDS = frozenset("""
a about above according after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have
having he her here hers him his how i if in into is it its itself just me more most my no nor not of off on
once only or other our ours out over own same she should so some such than that the their theirs them then
there these they this those through to too under until up very was we were what when where which while who
whom whose why will with would you your yours please tell give state find show according document documents
mentioned listed stated given shown specified provided noted indicated reported described exact exactly kind
type many much whats what's take took taken place make made get got go went happen happened occur occurred
list enumerate identify describe explain
""".split())
LINK_WORDS = frozenset("of in for on at by to from with during per as under between within after before".split())
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9, "ten": 10, "both": 2}
SYNONYMS: dict[str, tuple[str, ...]] = {  # a small general list; multi-word entries are phrases
    "revenue": ("sales", "turnover"), "sales": ("revenue", "turnover"), "turnover": ("revenue", "sales"),
    "profit": ("earnings", "income"), "earnings": ("profit", "income"), "profit after tax": ("net income",),
    "net profit": ("net income",), "operating income": ("ebit",), "ebit": ("operating income",),
    "employees": ("staff", "headcount", "workforce", "personnel"), "staff": ("employees", "headcount", "personnel"),
    "headcount": ("employees", "staff"), "cost": ("price", "fee", "charge"), "price": ("cost", "fee", "rate"),
    "fee": ("charge", "cost", "price"), "total": ("sum", "amount"), "signed": ("approved", "authorized", "signature"),
    "approved": ("signed", "authorized", "approval"), "author": ("prepared", "written"), "wrote": ("written", "author"),
    "company": ("firm", "organization", "corporation"), "customer": ("client", "buyer"), "client": ("customer",),
    "supplier": ("vendor", "seller"), "vendor": ("supplier", "seller"), "start": ("begin", "commence", "effective"),
    "end": ("expire", "close", "finish"), "deadline": ("due",), "due": ("deadline", "payable"),
    "budget": ("allocation", "funding"), "salary": ("pay", "wage", "compensation"), "increase": ("growth", "rise"),
    "decrease": ("decline", "drop", "reduction"), "growth": ("increase", "rise"), "manager": ("head", "supervisor"),
    "director": ("head", "chief"), "ceo": ("chief executive officer",), "chief executive officer": ("ceo",),
    "cfo": ("chief financial officer",), "address": ("location", "street"), "phone": ("telephone", "tel"),
    "meeting": ("session",), "contract": ("agreement",), "agreement": ("contract",), "invoice": ("bill",),
    "purchase": ("order", "buy"), "percentage": ("percent", "share", "rate"), "founded": ("established", "incorporated"),
    "located": ("headquartered", "based"), "guarantee": ("warranty",), "warranty": ("guarantee",),
    "annual general meeting": ("agm",), "agm": ("annual general meeting",), "vat": ("value added tax",),
    "tax": ("vat",), "paid out": ("payable", "payment"), "chaired": ("chair", "chairman", "chairperson"),
    "gross total": ("total amount", "grand total", "total due"), "amount due": ("total due", "payable", "balance due"),
}
_MONEY_WORDS = (r"\b(?:cost|costs|price|prices|amount|amounts|paid|fee|fees|budget|salary|revenue|revenues|sales|"
                r"income|profit|profits|spend|spent|expense|expenses|worth|funding|grant|balance|subtotal|total|dividend|"
                r"investment|allowance|reimbursement|charge|charged|ebit|ebitda|earnings|capex|turnover|intake|eur|usd|"
                r"dollars|euros|pay|pays|earn|earned|raise|raised|invest|invested|receive|received|owe|owed|save|saved|"
                r"lose|lost|donate|donated|bill|billed|rent|deposit|fine|penalty|wage|wages|bonus)\b")
_MONEY_NOUNS = (r"\b(?:cost|costs|price|prices|amount paid|fee|fees|budget|salary|revenue|revenues|sales|income|profit|"
                r"profits|expense|expenses|funding|grant|subtotal|dividend|investment|allowance|reimbursement|ebit|ebitda|"
                r"earnings|capex|turnover|eur|usd|dollars|euros|rent|deposit|wage|wages|bonus)\b")
KIND_CUES: tuple[tuple[str, str], ...] = (  # the question word first, then the attribute's own word
    (r"\b(?:which|what)\s+(?:\w+\s+){0,2}port\b|\bport (?:number|does|is|do)\b|\bon port\b", "port"),
    (r"\bhow many times\b|\bhow much (?:faster|slower|quicker|larger|smaller|bigger|more efficient)\b|\b(?:speed-?up|slow-?down)\b|\bby what factor\b|\b(?:what|which)\s+(?:\w+\s+)?factor\b|"
     r"\btimes (?:faster|slower|larger|smaller|more|less)\b", "factor"),
    (r"\bstands? for\b|\babbreviation\b|\bacronym\b|\bshort for\b|\babbreviated\b", "expansion"),
    (r"\b(?:what|which|since|in|from)\s+(?:\w+\s+){0,2}(?:version|release|edition)s?\b(?!\s+notes?\b)|\bversion number\b",
     "version"),
    (r"\b(?:command[- ]line\s+)?(?:option|flag|switch|argument)s?\b(?=.*\b(?:command|line|program|run|invok|call|pass|"
     r"give|use|enable|disable|turn|set|print|output|start)\w*)|\bcommand[- ]line\b", "flag"),
    (r"\bfile ?names?\b|\bname of (?:the |\w+'s )?(?:\w+ ){0,2}(?:file|directory|folder)\b|"
     r"\b(?:which|what)\s+(?:\w+\s+)?(?:file|directory|folder|path|extension)s?\b(?!\s+(?:formats?|types?|systems?|sizes?))|"
     r"\b(?:file|directory|folder|path)\s+(?:is|does|do|did|should|must|can|will)\b", "file"),
    (r"\b(?:which|what)\s+(?:\w+\s+){0,2}(?:command|function|macro|keyword|method|class|variable|environment|"
     r"package|procedure|routine|operator|directive|type|tool|program|utility|script|backend|terminal|engraver|"
     r"property|symbol|setting|library|libraries|editor|module|interpreter|compiler)s?\b", "ident"),
    (r"\b(?:in|during)\s+(?:what|which)\s+year\b|\b(?:what|which)\s+year\b|\byear\s+(?:did|was|were)\b", "year"),
    (r"\b(?:what|which)\s+(?:percentage|percent|proportion|fraction)\b|\bhow many percent\b|\bby what percent", "percent"),
    (r"^(?:\w+\s+){0,3}(?:who|whom|whose)\b|\b(?:which|what) (?:person|employee|author|manager|officer|individual|"
     r"technician|engineer|member|director|consultant|contact|chair|chairman|ceo)\b|\bname of the (?:person|author|"
     r"manager|director|officer|ceo|cfo|chair|president|contact|signatory)\b", "person"),
    (r"\b(?:which|what) (?:company|companies|firm|organi[sz]ation|supplier|vendor|customer|client|bank|auditor|"
     r"contractor|manufacturer|partner|agency|university|institution|brand|team|department|landlord|tenant|insurer)\b",
     "org"),
    (r"\bwhen\b|\b(?:what|which)\s+(?:date|day)\b", "date"),
    (r"\bwhere\b|\b(?:which|what) (?:city|country|town|location|site|plant|region|address|venue|place)\b", "place"),
    (r"\bhow many\b|\b(?:what|which) number\b", "number"),
    (r"\bhow much\b(?=.*" + _MONEY_WORDS[2:] + ")", "money"),
    (r"\bhow much\b", "quantity"),
    (r"\bhow (?:long|old|far|big|large|tall|high|heavy|wide|deep|often|fast)\b(?=.*" + _MONEY_WORDS[2:] + ")", "money"),
    (r"\bhow (?:long|old|far|big|large|tall|high|heavy|wide|deep|often|fast)\b", "quantity"),
    (r"\b(?:what|which|at what)\s+time\b|\bhours\b", "time"),
    (r"\bpercentage\b|\brate\b|\bratio\b|\bmargin\b|\bshare of\b|\bwhat share\b", "percent"),
    (r"\bdate\b(?!\s+(?:formats?|fields?|types?|columns?|functions?|ranges?|values?|variables?|strings?|stamps?))"
     r"|\bdated\b|\bdeadline\b", "date"),
    (r"\b(?:id|identifier|code|reference|ref|serial|account|invoice|order|policy|case|file|po|tracking|registration|"
     r"licen[cs]e|contract|model|part|ticket|claim|phone|telephone|fax|item|article|project)\s+(?:number|no\.?|#|id|code)\b"
     r"|\b(?:ip address|iban|bic|swift|vat id|sku|postcode|zip code|class|standard|isbn|issn|doi)\b"
     r"|\b(?:what|which)(?: \w+)? (?:id|code|model)\b"
     r"|\b(?:currency|country|language|iso|error|exit|return|status|colou?r|key|area|postal|product|hex|ascii|unicode|"
     r"character|char|charset|encoding|locale)\s+codes?\b", "code"),
    (_MONEY_NOUNS, "money"),  # a verb alone ("saved", "lost", "raised") asks for money only after "how much"
    (r"\b(?:capacity|weight|duration|length|voltage|distance|size|height|width|speed|temperature|lifetime|warranty|"
     r"guarantee|period)\b", "quantity"),
    (r"\bnumber of\b|\bcount of\b", "number"),
    (r"^(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)\b", "yesno"),
)
_SPLIT = re.compile(r",?\s+and\s+(?=(?:what|which|who|whom|when|where|how|at what|by what|in what|on what|from what)\b)", re.I)
_SYN = {stem(k): tuple(stems_of(v)[0] for v in vs if " " not in v) for k, vs in SYNONYMS.items() if " " not in k}


# --- reading the question ----------------------------------------------------------------------

def split_parts(question: str) -> list[str]:
    """The parts of a compound question ("What is X, and who is Y?"); a shared lead-in goes to each."""
    text = " ".join(question.split())
    pieces = [p.strip(" ,?") for p in _SPLIT.split(text) if p.strip(" ,?")]
    if len(pieces) < 2:
        return [text]
    lead = re.match(r"^((?:according to|in|on|for|from|within)\b[^,]{3,80}),\s*(?=\w)", pieces[0], re.I)
    if lead:
        pieces = [pieces[0]] + [f"{lead.group(1)}, {p}" for p in pieces[1:]]
    return [p + "?" for p in pieces[:4]]


def analyze(question: str) -> Question:
    """Read one question into a Question (rule based)."""
    text = " ".join(question.split())
    low = text.lower()
    phrases = tuple(p.strip() for p in re.findall(r"[\"“”]([^\"“”]{2,80})[\"“”]", text) if p.strip())
    kind = next((k for pattern, k in KIND_CUES if re.search(pattern, low)), "phrase")
    terms: list[str] = []
    for w in words(text):
        lw = w.lower()
        if (lw in STOPWORDS and not (w.isupper() and not text.isupper())) or lw in NUMBER_WORDS or \
                (len(lw) < 2 and not w.isdigit()) or w in ("AND", "OR", "NOT") or len(w) > 40:
            continue  # question words, search operators, stray letters, runaway tokens
        if w not in terms:
            terms.append(w)
    count = 1
    m = re.search(r"\b(?:which|what|name|list)\s+(two|three|four|five|six|\d)\b(?![-.,\d])", low)
    if m:
        count = NUMBER_WORDS.get(m.group(1)) or int(m.group(1))
    elif re.search(r"^(?:list|name all|enumerate)\b|\b(?:what|which) are (?:the|all)\b|\ball of the\b", low):
        count = 0
    stems = tuple(dict.fromkeys(stem(t) for t in terms))
    alts: dict[str, list[tuple[str, ...]]] = {s: [(a,) for a in _SYN.get(s, ())] for s in stems}
    for key, values in SYNONYMS.items():  # phrases: each word of "profit after tax" may be "net income"
        if (" " in key or any(" " in v for v in values)) and re.search(rf"\b{re.escape(key)}\b", low):
            for s in stems_of(key):
                alts.setdefault(s, []).extend(stems_of(v) for v in values)
    return Question(text, kind, tuple(terms), stems, _target(text), phrases, count,
                    {s: tuple(dict.fromkeys(v)) for s, v in alts.items() if v})


def _target(text: str) -> tuple[str, ...]:
    """Stems of the attribute asked for: the content words after the question word, names left out."""
    m = re.search(r"\b(?:what|which|who|whom|whose|when|where|how much|how many|how \w+|list|name)\b(.*)", text, re.I)
    out: list[str] = []
    for w in words(m.group(1) if m else text):
        lw = w.lower()
        if out and (lw in LINK_WORDS or lw in ("did", "does", "was", "were", "is", "are", "has", "have", "the", "a")):
            break
        acronym = w.isupper() and w.isalpha() and len(w) <= 5
        if out and w[0].isupper() and not acronym and w.replace("'", "").isalpha():
            break  # a name after the attribute: the subject, not the attribute
        if lw in STOPWORDS or lw in NUMBER_WORDS or (w[0].isupper() and not acronym) or any(c.isdigit() for c in w):
            continue
        out.append(stem(lw))
        if len(out) >= 4:
            break
    return tuple(out)
