"""A corpus's language: stored at ingest, detected when not given, and choosing the analysis and OCR language."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
from conftest import make_pdf, make_scanned_pdf

from madqa.cli import main
from madqa.corpus import Corpus
from madqa.errors import CorpusError, SettingsError
from madqa.index import ingest
from madqa.languages import LANGUAGES, detect_language, tesseract_language
from madqa.ocr import find_tessdata
from madqa.page_readers import page_texts
from madqa.refusals import is_refusal
from madqa.settings import Settings
from madqa_plugins.text import text_analysis

GERMAN = ["Die Paketbetreuer bauen die neuen Paketen für das System. Der Befehl ist nicht schwer, und die "
          "Häuser der Entwickler sind groß. Wenn Sie eine Datei ändern, wird sie auch neu gebaut.",
          "Das Programm wird mit dem Aufruf make gebaut, und die Selbsttests werden mit make check gestartet."]
FRENCH = ["Les chevaux du responsable sont dans le répertoire debian. Vous devez installer les paquets avec "
          "la commande dpkg, et l'option des correctifs est utile pour les sources.",
          "Le fichier changelog est modifié avec dch pour une nouvelle version du paquet."]


def test_german_and_french_stop_words_differ_from_english():
    assert text_analysis.analysis_for("de").analyze("der und die Paket") == ["paket"]
    assert text_analysis.analyze("der und die Paket") == ["der", "und", "die", "paket"]  # English keeps them
    assert text_analysis.analysis_for("fr").analyze("l'option des paquets") == ["option", "paquets"]
    assert "the" in text_analysis.analysis_for("de").analyze("the paket")  # English ones are words in German


@pytest.mark.parametrize(("language", "pages", "query", "page"), [
    ("de", GERMAN, "Paket Haus", 1),  # the page writes Paketen and Häuser
    ("fr", FRENCH, "cheval", 1),  # the page writes chevaux
])
@pytest.mark.parametrize("retriever", ["whoosh", "tantivy"])
def test_the_language_stemmer_finds_inflected_forms(tmp_path, registry, language, pages, query, page, retriever):
    root = tmp_path / "docs"
    make_pdf(root / "doc.pdf", pages)
    found = {}
    for analysis in (language, "en"):
        settings = Settings.from_env(env={}, home=tmp_path / analysis)
        ingest(root, settings, registry, ocr="never", language=analysis)
        corpus = Corpus.open(root, settings.corpora_dir)
        found[analysis] = [h.page for h in registry.create("retriever", retriever, corpus, {}).search(query, 5).hits]
        corpus.close()
    assert found[language][:1] == [page]
    assert page not in found["en"]  # Porter does not join these forms


def test_the_language_is_stored_kept_and_changing_it_rebuilds_indexes_from_stored_texts(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", GERMAN)
    make_pdf(root / "b.pdf", FRENCH)
    first = ingest(root, settings, registry, ocr="never", language="German")
    corpus = Corpus.open(root, settings.corpora_dir)
    assert (corpus.language, first.language) == ("de", "de") and "set with --language" in corpus.language_note
    texts = list(corpus.iter_pages())
    corpus.close()
    again = ingest(root, settings, registry, ocr="never")  # no language given: the stored one is kept
    corpus = Corpus.open(root, settings.corpora_dir)
    assert corpus.language == "de" and again.unchanged == 2 and again.added == again.updated == 0
    corpus.close()
    changed = ingest(root, settings, registry, ocr="never", language="fr")
    assert changed.unchanged == 2 and changed.added == changed.updated == 0  # no PDF read again
    corpus = Corpus.open(root, settings.corpora_dir)
    assert corpus.language == "fr" and list(corpus.iter_pages()) == texts  # nothing stored is lost
    for name, marker in (("whoosh", "madqa-whoosh.json"), ("tantivy", "madqa-tantivy.json")):
        assert json.loads((corpus.retriever_dir(name) / marker).read_text(encoding="utf-8"))["language"] == "fr"
    hits = registry.create("retriever", "whoosh", corpus, {}).search("cheval", 5).hits
    assert ("b.pdf", 1) in {(h.file, h.page) for h in hits}  # the French stemmer now joins chevaux
    corpus.close()


def test_a_rebuild_of_a_damaged_index_keeps_the_language(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", FRENCH)
    ingest(root, settings, registry, ocr="never", language="de")  # set, though the text is French
    report = ingest(root, settings, registry, ocr="never", rebuild="a test says so")
    corpus = Corpus.open(root, settings.corpora_dir)
    assert report.added == 1 and corpus.language == "de"  # read again, not detected again
    corpus.close()


def test_the_language_is_detected_and_the_status_says_from_how_much_text(tmp_path, settings, registry):
    root = tmp_path / "docs"
    make_pdf(root / "de.pdf", GERMAN * 8)
    report = ingest(root, settings, registry, ocr="never")
    corpus = Corpus.open(root, settings.corpora_dir)
    assert corpus.language == "de" and report.language == "de"
    assert corpus.language_note.startswith("detected German (de) from ") and " words " in corpus.language_note
    assert any("thesaurus" in w for _, w in report.warnings)  # English-only parts say so
    from madqa.ui.corpus import documents_table

    summary = documents_table(corpus)[1]  # the web app's corpus status
    assert "Language: detected German \\(de\\) from " in summary and "thesaurus" in summary
    corpus.close()
    assert detect_language(["Le fichier est dans le répertoire et les paquets sont pour vous."] * 10).code == "fr"
    assert detect_language(["12 34 56"]).code == "en"  # too little text: the default, said so
    assert "too little text" in detect_language(["12 34 56"]).describe()


def test_a_bad_language_is_a_clear_error_listing_the_supported_ones(tmp_path, settings, registry, capsys):
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", GERMAN)
    with pytest.raises(SystemExit) as exc:
        main(["index", "--language", "klingon", str(root)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown language 'klingon'" in err and "de (German)" in err and "fr (French)" in err
    with pytest.raises(CorpusError, match="supported: en \\(English\\)"):
        ingest(root, settings, registry, ocr="never", language="xx")
    assert not settings.corpora_dir.exists() or not any(settings.corpora_dir.iterdir())  # failed before any work
    with pytest.raises(SettingsError, match="MADQA_LANGUAGE: unknown language"):
        Settings.from_env(env={"MADQA_LANGUAGE": "xx"}, home=tmp_path / "h")


def test_the_corpus_language_chooses_the_tesseract_language(tmp_path, settings, registry):
    tessdata = find_tessdata()
    if tessdata is None or not os.path.isfile(os.path.join(tessdata, "deu.traineddata")):
        pytest.skip("Tesseract's German data is not installed (scripts/install installs tesseract-ocr-deu)")
    root = tmp_path / "docs"
    make_scanned_pdf(root / "scan.pdf", "Die Größe der Übersetzungsdateien wird geändert.")
    report = ingest(root, settings, registry, ocr="auto", language="de")
    corpus = Corpus.open(root, settings.corpora_dir)
    assert report.ocr_pages == 1 and corpus.manifest["options"]["ocr_language"] == "deu"
    assert "Übersetzungsdateien" in corpus.page_text("scan.pdf", 1)
    corpus.close()
    texts, problem = page_texts(registry, dataclasses.replace(settings, ocr_language="deu"), "auto")
    assert problem is None and texts.ocr.language == "deu"
    assert tesseract_language("de", "eng", tessdata) == ("deu", None)
    assert tesseract_language("de", "eng+fra", tessdata) == ("eng+fra", None)  # MADQA_OCR_LANGUAGE set: it wins


def test_missing_ocr_data_is_a_warning_not_silence(tmp_path):
    language, warning = tesseract_language("hu", "eng", str(tmp_path))  # no hun.traineddata there
    assert language == "eng" and "tesseract-ocr-hun" in warning


def test_analysis_gaps_declared_match_what_whoosh_has():
    for code, lang in LANGUAGES.items():
        assert text_analysis.analysis_for(code).missing == lang.analysis_gaps, code


@pytest.mark.parametrize("text", [
    "Ich konnte diese Information in den Dokumenten nicht finden.",
    "Leider konnte ich keine Angaben dazu finden.",
    "Die Dokumente enthalten keine Angaben zur Version.",
    "Je ne trouve pas cette information.",
    "Je n'ai pas pu trouver la réponse dans les documents.",
    "L’information n’est pas disponible.",
])
def test_german_and_french_refusals_are_refusals(text):
    assert is_refusal(text)


@pytest.mark.parametrize("text", [
    "Die Dokumente enthalten keine Angaben zur Version, aber Seite 3 nennt 2.1",
    "Les documents ne mentionnent pas X, mais la page 4 dit 5",
    "dialout", "non-free und contrib",
])
def test_german_and_french_answers_are_not_refusals(text):
    assert not is_refusal(text)


def test_the_offline_baseline_answers_a_german_question_without_crashing(tmp_path, capsys, monkeypatch):
    """Its question reading stays English (docs/search.md#languages): it must still search and answer or refuse."""
    root = tmp_path / "docs"
    make_pdf(root / "a.pdf", GERMAN)
    monkeypatch.setenv("MADQA_HOME", str(tmp_path / "home"))
    assert main(["index", "--language", "de", str(root)]) == 0
    assert "language: German (de): set with --language" in capsys.readouterr().out
    status = main(["ask", "--corpus", str(root), "--backend", "offline", "--json",
                   "Mit welchem Aufruf werden die Selbsttests gestartet?"])
    row = json.loads(capsys.readouterr().out)
    assert status == 0 and not row.get("error") and row["search_history"]
