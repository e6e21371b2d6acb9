"""The one list of what counts as a refusal: a reply or an answer item saying the answer was not found.

English, German and French phrases (a corpus may be in either language, ``madqa.languages``; the
model answers in the question's language). Precision over recall: text counts only when it matches a pattern here, and the patterns are tested
against every gold answer of the development question sets, so a real answer ("zero", "none of
them" aside) is never taken for a refusal. The official MADQA harness has no such list: it scores an
empty answer 0 and leaves refusals to its LLM judge ("refuses or claims inability to answer" →
incorrect); the phrases its baselines write when they fail ("Unable to parse answer", "Unable to
find answer") are here too, so a refusal is recorded as one (empty answer, ``refusal: true``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

MAX_REFUSAL_CHARS = 300  # a longer reply is an explanation, perhaps with an answer in it: not a refusal

# the whole (normalised) text is one of these
_EXACT = frozenset({
    "n/a", "n.a.", "n. a.", "not available", "unknown", "unanswerable", "not answerable", "undetermined",
    "not found", "no answer", "no answer found", "none found", "nothing found", "no results", "no result found",
    "not known", "not specified", "not stated", "not mentioned", "not provided", "not given", "not listed",
    "no information", "no data", "no information available", "no data available", "information not available",
    "information not found", "answer not found", "not in the documents", "not in the document",
    "not enough information", "insufficient information", "cannot answer", "can't answer", "cannot be answered",
    "i don't know", "i do not know", "don't know", "no idea",
    # the MADQA baselines' answers when they fail
    "unable to parse answer", "unable to generate answer", "error: unable to generate answer",
    "unable to find answer", "unable to answer",
    # German and French (a corpus in those languages; see madqa.languages)
    "nicht gefunden", "keine angabe", "keine angaben", "unbekannt", "nicht verfügbar", "keine antwort",
    "nicht angegeben", "keine informationen", "weiß ich nicht", "ich weiß es nicht", "nicht bekannt",
    "non trouvé", "introuvable", "inconnu", "non disponible", "non précisé", "non spécifié", "non mentionné",
    "aucune réponse", "je ne sais pas", "pas d'information", "aucune information", "information non disponible",
})

_WHERE = r"(?: (?:in|from|within|on|among) (?:the |any of the |these |those |this |any )?" \
         r"(?:provided |given |available |supplied |attached |searched |retrieved )?" \
         r"(?:documents?|pages?|texts?|sources?|context|files?|pdfs?|collection|search results?|results?|material))?"
_SUBJECT = r"(?:the |this |that |such |any |specific |requested |relevant |exact |required )*" \
           r"(?:information|answer|data|value|figure|number|amount|date|name|detail|details|fact|answer to (?:this|the) question)"
# the text starts with one of these, and then says nothing that could be an answer (see _CONTRAST)
_PATTERNS = [
    # "I cannot find this information in the documents.", "I'm sorry, but I couldn't locate ..."
    r"(?:i|we) (?:cannot|can't|could not|couldn't|"
    r"was unable to|am unable to|were unable to|did not|didn't|do not|don't|am not able to|was not able to) "
    r"(?:find|locate|determine|identify|see|find any|answer|confirm|extract|provide)\b",
    # "The documents do not mention ...", "The provided pages don't contain ..."
    r"(?:the |these |this )?(?:provided |given |available |retrieved |searched )?"
    r"(?:documents?|pages?|texts?|sources?|context|files?|search results?|results?) "
    r"(?:do not|does not|don't|doesn't|did not|didn't) "
    r"(?:mention|contain|include|provide|specify|state|say|give|show|list|indicate|have|discuss|cover|appear to)\b",
    r"none of the (?:provided |given |available |retrieved |searched )?(?:documents|pages|texts|sources|files|"
    r"search results|results) (?:mentions?|contains?|includes?|provides?|specif(?:y|ies)|states?|says?|gives?|"
    r"shows?|lists?|indicates?|has|have|discuss(?:es)?)\b",
    # "The information is not available ...", "This answer could not be found ..."
    rf"{_SUBJECT} (?:is not|was not|isn't|wasn't|are not|aren't|could not be|cannot be|"
    r"can't be|couldn't be|is nowhere|does not appear|doesn't appear|was nowhere) "
    r"(?:to be )?(?:found|available|provided|given|mentioned|specified|stated|present|located|determined|"
    r"included|listed|disclosed|reported|shown|in)\b",
    # "There is no information about ...", "No relevant information was found."
    r"there (?:is|was|are|were) no (?:mention|information|data|answer|record|reference|details?)\b",
    r"no (?:relevant |such |specific )?(?:information|answer|data|results?|mention|details?|evidence)"
    r"(?: (?:was|were|is|could be|can be))? (?:found|available|provided|given|located)\b",
    # "Not specified in the documents", "Not found in the provided pages"
    rf"not (?:found|specified|stated|mentioned|provided|given|available|listed|included|present|disclosed|reported)"
    rf"{_WHERE}$",
    # "Cannot be determined from the documents"
    r"(?:it |this |that |the answer )?(?:cannot|can't|could not|couldn't) be "
    r"(?:determined|found|answered|identified|established|located|confirmed)\b",
    r"(?:i am |i'm )?unable to (?:find|determine|answer|locate|identify|parse|generate|confirm)\b",
    r"(?:i do not|i don't) know\b",
    r"(?:there is )?(?:not enough|insufficient) (?:information|data|evidence|context)\b",
    # German: "Ich konnte diese Information in den Dokumenten nicht finden.", "(Leider) konnte ich keine ... finden"
    r"(?:(?:ich|wir) (?:kann|konnte|können|konnten)|(?:kann|konnte|können|konnten) (?:ich|wir)) (?:\S+ ){0,8}?"
    r"(?:nicht|keine\w*) (?:\S+ ){0,2}?(?:finden|ermitteln|bestimmen|beantworten|feststellen|entnehmen|angeben)\b",
    # "Die Dokumente enthalten keine Angaben zu ..."
    r"(?:die |diese |den )?(?:bereitgestellten |vorliegenden |durchsuchten |gefundenen )?"
    r"(?:dokumente|seiten|texte|quellen|unterlagen|suchergebnisse) (?:enthalten|nennen|erwähnen|geben|liefern) "
    r"(?:keine|nicht)\b",
    # "Diese Information ist in den Dokumenten nicht angegeben.", "Die Antwort wurde nicht gefunden."
    r"(?:die |diese |eine )?(?:information|informationen|antwort|angabe|angaben) (?:ist|sind|wurde|wurden|war|waren) "
    r"(?:\S+ ){0,5}?nicht (?:gefunden|verfügbar|vorhanden|angegeben|enthalten|erwähnt|ermittelbar)\b",
    r"es (?:gibt|liegen) keine (?:informationen|angaben|hinweise|daten|antwort)\b",
    r"keine (?:relevanten |passenden )?(?:informationen|angaben|antwort|daten|ergebnisse|treffer)"
    r"(?: (?:wurden|ist|sind))? (?:gefunden|verfügbar|vorhanden)\b",
    # French: "Je ne trouve pas ...", "Je n'ai pas pu trouver ...", "Je ne peux pas déterminer ..."
    r"(?:je|nous) ne (?:trouve|trouvons) (?:pas|aucune?)\b",
    r"(?:je|nous) (?:ne |n')(?:peux|pouvons|pouvais|parviens|parvenons|suis|sommes|ai|avons) pas (?:\S+ ){0,3}?"
    r"(?:trouver|trouvé|déterminer|déterminé|répondre|identifier|localiser|en mesure)\b",
    # "Les documents ne mentionnent pas ...", "L'information n'est pas disponible ..."
    r"(?:les |ces )?(?:documents?|pages?|textes?|sources?|résultats?)(?: \S+){0,2}? ne (?:mentionnent|contiennent|"
    r"précisent|indiquent|donnent|fournissent|mentionne|contient|précise|indique|donne|fournit) (?:pas|aucune?)\b",
    r"(?:l'|cette |une )?(?:information|réponse|donnée|valeur)s? (?:n'est|ne sont|n'a|n'ont|n'était) (?:\S+ ){0,3}?"
    r"(?:trouvée?s?|disponibles?|mentionnée?s?|précisée?s?|indiquée?s?|fournie?s?)\b",
    r"il n'y a (?:pas d'|aucune? )(?:information|mention|donnée|réponse|indication)s?\b",
    r"aucune? (?:information|réponse|donnée|mention|résultat|indication)s? (?:n'a été |n'ont été )?"
    r"(?:trouvée?s?|disponibles?)\b",
]
# an apology or a search report before the refusal is no part of it (nor is its "but")
_PREAMBLE = re.compile(r"(?:(?:i'm|i am|we're|we are) sorry,? (?:but )?|sorry,? (?:but )?|unfortunately,? |"
                       r"leider,? |(?:es tut mir leid|entschuldigung),? (?:aber )?|"
                       r"(?:je suis )?désolée?,? (?:mais )?|malheureusement,? |"
                       r"(?:after|despite) (?:searching|reviewing|checking|several searches)[^,]{0,80}, )+")
_REFUSAL = re.compile("|".join(f"(?:{p})" for p in _PATTERNS))
# what turns a refusal into a partial answer: "the documents do not say X, but Y is 5"
_CONTRAST = re.compile(r"\b(?:but|however|although|though|instead|except|whereas|nevertheless|only|"
                       r"aber|jedoch|allerdings|außer|nur|sondern|stattdessen|"
                       r"mais|cependant|toutefois|sauf|seulement|néanmoins|par contre)\b")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})
_EDGES = " \t\r\n\"'`*_.,;:!?()[]{}<>-\u2013\u2014"


def normalize(text: str) -> str:
    """``text`` as the patterns see it: NFKC, case folded, straight quotes, one space, no edge punctuation."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return " ".join(text.split()).strip(_EDGES)


def is_refusal(text: str) -> bool:
    """True when a whole reply or one answer item says the answer was not found (and says nothing else).

    Blank text is no refusal: it is no answer at all, which the loop treats as a failure.
    """
    if not isinstance(text, str) or len(text) > 4 * MAX_REFUSAL_CHARS:
        return False
    norm = normalize(text)
    if not norm or len(norm) > MAX_REFUSAL_CHARS:
        return False
    if norm in _EXACT:
        return True
    norm = norm[m.end():] if (m := _PREAMBLE.match(norm)) else norm
    return _REFUSAL.match(norm) is not None and _CONTRAST.search(norm) is None


def refusal_items(answer: Sequence[str]) -> bool:
    """True when an answer list refuses: it is empty (blank items aside) or every item is a refusal."""
    items = [item for item in answer if not isinstance(item, str) or item.strip()]
    return all(isinstance(item, str) and is_refusal(item) for item in items)
