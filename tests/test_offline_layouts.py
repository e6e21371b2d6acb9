"""The offline reader on the layouts of real manuals (issue 29): entries of a reference manual, tables of
repeated column groups, rows that are records of their own, cross-references, and the reading defects
the development sets showed. Each page here is written for the test, in the shape the stored text of
such a page has (cells two spaces apart, as madqa_plugins/readers/text_layer.py lays them out)."""

from __future__ import annotations

from madqa_plugins.offline.offline_confidence import document_words, named_documents
from madqa_plugins.offline.offline_dates import TIME_RE
from madqa_plugins.offline.offline_entries import entry_heads
from madqa_plugins.offline.offline_question import analyze
from madqa_plugins.offline.offline_reader import find_candidates
from madqa_plugins.offline.offline_spans import stem, term_weights


def values(question: str, text: str) -> list[str]:
    q = analyze(question)
    return [c.value for c in sorted(find_candidates(text, "doc.pdf", 3, q, term_weights(q, {}, 0)), key=lambda c: -c.score)]


OPTIONS = ("PLOT_MARGIN The PLOT_MARGIN tag sets the space around each plot. The plotter keeps it in\n"
           "points and rounds it to whole points; a wide margin leaves room for the axis labels of\n"
           "rotated plots, which need more of it than the others.\n"
           "Minimum value: 0, maximum value: 72, default value: 18.\n"
           "This tag requires that the tag DRAW_PLOTS is set to YES.\n"
           "PLOT_GRID If the PLOT_GRID tag is set to YES the plotter draws a grid behind each plot.\n"
           "The default value is: NO.\n"
           "PLOT_FONT The PLOT_FONT tag names the font of the labels in the plots it draws.\n"
           "PLOT_FONTPATH to the directory holding it must be set as well.\n"
           "The default value is: Courier.\n")


def test_an_entry_of_a_manual_owns_the_lines_below_its_head():
    """'default value: 18' four lines under PLOT_MARGIN is PLOT_MARGIN's, not beaten by the next entry's
    'The default value is: NO.'; a line opening with a name in running text ('PLOT_FONTPATH to the
    directory') heads nothing; 'The default value is: X' is read (it once gave ':')."""
    assert values("What is the default value of PLOT_MARGIN?", OPTIONS)[0] == "18"
    assert values("Which font does the plotter use by default for the labels in its plots?", OPTIONS)[0] == "Courier"
    heads = entry_heads(OPTIONS.splitlines())
    assert heads[3] == 0 and heads[6] == 5 and heads[8] == 7 and heads[9] == 7
    assert entry_heads(["INVOICE", "PO number: PO-1"]) == [None, None]  # a title in capitals heads nothing


SUFFIXES = ("Suffix  Format  Suffix  Format  Suffix  Format\n"
            ".tsv  Tab-separated  .xls  Spreadsheet  .geo  GeoJSON\n"
            ".csv  Comma-separated  .ods  Spreadsheet  .kml  Keyhole\n"
            ".txt  Plain text  .dbf  dBase  .gpx  GPS exchange\n")


def test_a_table_of_repeated_column_groups_reads_each_group_as_a_row():
    assert values("In which format is a .kml file read, according to the table of suffixes?", SUFFIXES)[0] == "Keyhole"
    assert values("In which format is a .dbf file read, according to the table of suffixes?", SUFFIXES)[0] == "dBase"


def test_a_row_of_a_table_lends_no_words_to_the_rows_beside_it():
    """The row naming the key asked about gives its setting, not the first row under the header nor a
    value repeated on several rows."""
    page = ("Length  Initial value\n"
            "\\gapwidth  \\z@\n"
            "\\gapindent  -\\parindent\n"
            "\\gapskip  \\smallskipamount\n"
            "\\gapsep  \\z@\n")
    assert values("What is the initial value of \\gapindent?", page)[0] == "-\\parindent"
    assert values("What is the initial value of \\gapskip?", page)[0] == "\\smallskipamount"


def test_a_cross_reference_or_a_section_number_is_no_answer():
    page = ("6.2.1 Choosing the encoding\n"
            "The encoding of the labels is set with the option 'encoding'; see section 4.3.4 for the list.\n"
            "The recommended encoding is latin9 for western European text.\n")
    found = values("Which encoding is recommended for western European text?", page)
    assert "4.3.4" not in found[:3] and "6.2.1" not in found
    assert found[0] == "latin9"


def test_an_article_is_no_unit_and_a_decimal_is_no_time():
    page = "For example, firstline is a key and 2 a valid value. The kern was 0.25 em in version 1.00."
    assert "2 a" not in values("What is the default value of the lastline key?", page)
    assert [m.group() for m in TIME_RE.finditer("0.25 em in version 1.00 at 10:30 am")] == ["10:30 am"]


def test_words_opening_a_sentence_are_no_name():
    page = ("In Plotkit all statements end with a semicolon. See When to quote for the rules.\n"
            "The rules were written down by Maria Lopez in the first release.")
    assert values("Who wrote down the rules for statements?", page)[0] == "Maria Lopez"
    assert values("Which language ends all statements with a semicolon?", page)[0] != "In Plotkit"


def test_a_plural_stems_as_its_singular_verb_form_does():
    assert stem("settings") == stem("setting")
    assert stem("encodings") == stem("encoding")


def test_the_documents_a_question_names_by_file_name():
    files = document_words({"latex/booktabs.pdf", "glpk/graphs.pdf", "r/R-data.pdf", "docs/manual.pdf"})
    assert named_documents(analyze("Who is the author of the booktabs package?"), files) == {"latex/booktabs.pdf"}
    assert named_documents(analyze("Who wrote the manual?"), files) == frozenset()  # "manual" names no document


def test_a_code_in_a_table_cell_needs_no_digit():
    page = ("Country  Currency  Code  Rate\n"
            "Austria  Schilling  ATS  13.7603\n"
            "Finland  Markka  FIM  5.94573\n"
            "France  Franc  FRF  6.55957\n")
    assert values("What is Finland's ISO currency code in the table?", page)[0] == "FIM"


def test_a_table_with_bars_between_its_cells():
    page = ("4.2  Reserved words of the fog window\n"
            "res. word  | cat.  | range  | def. | description\n"
            "-------------------------------------------------\n"
            "fog_density  | double |  [0,1] |  0.35 | thickness of fog\n"
            "fog_start  | double |  [-50,50] |  2.5 | where fog begins\n"
            "fog_colour  | int  |  {0,..,255} |  128 | grey level of fog\n")
    assert values("In the table of reserved words, what is the default of fog_start?", page)[0] == "2.5"
    assert values("In the table of reserved words, what range does fog_colour take?", page)[0] == "{0,..,255}"


def test_a_caption_above_the_header_names_every_row_of_its_table():
    """Two tables with the same header one after the other: the caption says which one a row is in, for
    its last row as much as for its first."""
    page = ("widget.slider parameters\n"
            "Parameter  Meaning  Default\n"
            "name  the group name  None\n"
            "steps  number of notches  10\n"
            "Slider usage\n"
            "The slider method draws a slider.\n"
            "widget.dial parameters\n"
            "Parameter  Meaning  Default\n"
            "name  the group name  None\n"
            "colour  the dial colour  None\n"
            "radius  the dial radius  36\n"
            "steps  number of notches  'fine'\n")
    assert values("In the table of widget.dial parameters, what is the default of steps?", page)[0] == "fine"
    assert values("In the table of widget.slider parameters, what is the default of steps?", page)[0] == "10"


def test_the_whole_cell_under_the_asked_column_is_the_answer():
    page = ("type  width  default  signed range\n"
            "char  8 bits, 1 byte  unsigned  -128, +127\n"
            "long  32 bits, 4 bytes  signed  -2.147.483.648, +2.147.483.647\n")
    assert values("In the table of data types, what is the width of long?", page)[0] == "32 bits, 4 bytes"
    assert values("In the table of data types, what is the signed range of char?", page)[0] == "-128, +127"


def test_a_reference_card_reads_a_cell_by_the_one_before_it():
    """A card laid out in columns has no header; a setting is read with the cell before it as its label,
    and a row of values ("0s, 1S, 0x7fs") is never taken for a header."""
    page = ("normal prompt  >  short  0s, 1S, 0x7fs, -32766s\n"
            "prompt for continued line  cont>  long  0, 1, 0x7f, 1234L\n"
            "Those functions build arrays of several dimensions.\n"
            "prompt in trace mode  trce>  double  0.0, 1.0, -32.766e-33\n")
    assert values("What prompt does the shell show in trace mode?", page)[0] == "trce>"


def test_an_option_whose_name_spells_the_question_is_preferred():
    page = "To fit the window I used the command line\nplotter -pwidth 8 -pheight 5.5 -keys_per_col 3\n"
    assert values("Which plotter command-line option sets the number of keys per column?", page)[0] == "-keys_per_col"


def test_a_version_is_no_date():
    page = "The snapshot of the development branch was 7.99.23 on 12.03.2021."
    assert "7.99.23" not in values("On what date was the snapshot made?", page)


def test_question_cues_that_named_the_wrong_type():
    assert analyze("In which encoding must the questionnaire file be saved?").kind != "money"
    assert analyze("How much did the company save in 2023?").kind == "money"
    assert analyze("How much faster are the new searches?").kind == "factor"
    assert analyze("Which file format does the program write by default?").kind != "file"
    assert analyze("In PSPP's table of date formats, what is the template of EDATE?").kind != "date"
    assert values("How much faster are the new searches?", "The new searches are 100-fold faster than BLAST.")[0] == "100-fold"


def test_a_caption_above_a_table_of_repeated_column_groups_keeps_the_groups():
    """The caption joins the first column's header after the repeat is found: joined before, it made the
    header's groups differ ("Suffix Readable suffixes" vs "Suffix") and every group after the first was read
    under the first group's row label."""
    page = "Readable suffixes\n" + SUFFIXES
    assert values("In which format is a .kml file read, according to the table of readable suffixes?", page)[0] == "Keyhole"
    assert values("In which format is a .ods file read, according to the table of readable suffixes?", page)[0] == "Spreadsheet"
