"""Do our German parsers keep every word of their source, and invent none? A parser-independent audit.

The Markdown-vs-PDF comparison (:mod:`pipelines.statutes.de.sources_compare`) can only see parser residue
where the two sources differ; a word both parsers lose, or a running header the PDF parser leaks
into a § the Markdown happens to lack, needs a check against the source itself. This module counts
the words of a source file read the plainest way — pdfium's page text minus the running header and
page footer lines, or the Markdown text minus its markup — and the words of everything the parser
produced (structure labels and headings, § labels, titles, texts, status notes, footnotes), and
returns both differences. Words are ``\\w+`` runs and "§"; punctuation and spacing are not compared
(normalisation owns those), so a line-end hyphen joined into one word ("Verbraucher-⏎darlehen" →
"Verbraucherdarlehen") shows up as two missing words and one invented.

What a parse may legitimately drop is source material that is not part of any unit: the front
matter before the first heading, annexes the parser lists in ``GermanStatute.annexes`` (the
Markdown audit cuts them), the "(XXXX)" placeholder marks of the Markdown, and a placeholder printed
beside the same number with text ("§ 55 (weggefallen)" then "§ 55 Aufgaben": one § 55 is kept).
An act whose source prints no text (``GermanStatute.metadata_only``) is audited against the metadata
under its title, which its one ``text`` row holds. Anything else reported
as ``missing`` or ``invented`` is a parser's doing; a caller (a test) decides what to allow.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pipelines.statutes.de.markdown import split_front_matter
from pipelines.statutes.de.model import GermanStatute

WORD_RE = re.compile(r"\w+|§")


@dataclass
class Fidelity:
    """Word multisets of a source and of its parse, and their two differences."""
    source: Path
    source_words: int
    parsed_words: int
    missing: Counter  # in the source, not in the parse
    invented: Counter  # in the parse, not in the source


def words(text: str) -> list[str]:
    """The compared words of a text (NFC, hyphen-split, no punctuation)."""
    return WORD_RE.findall(unicodedata.normalize("NFC", text).replace("\ufffe", " "))


def parsed_words(st: GermanStatute) -> Counter:
    """Every word the parse produced, once per place it was printed (a §§ range heading once)."""
    out: Counter = Counter()
    for n in st.structure:
        out.update(words(" ".join([n.label, n.heading, *n.notes])))
    ranges: set[str] = set()
    for s in st.sections:
        if s.range_label:
            if s.range_label not in ranges:
                ranges.add(s.range_label)
                out.update(words(f"{s.range_label} {s.status_note if s.status == 'repealed' else ''}"))
                for f in s.footnotes:
                    out.update(words(f))
            continue
        if s.kind == "text":  # an act's text: no heading of its own (its title is the act's)
            out.update(words(s.text))
        else:
            out.update(words(s.label))  # "§ 573b", "Art. 3", "Präambel", "Anlage 1", "I."
            out.update(words(f"{s.title} {s.text}"))
        if not s.text and s.status_note:
            out.update(words(s.status_note))
        for f in s.footnotes:
            out.update(words(f))
    return out


def _audit(st: GermanStatute, source_text: str) -> Fidelity:
    src, got = Counter(words(source_text)), parsed_words(st)
    return Fidelity(Path(st.source), sum(src.values()), sum(got.values()), src - got, got - src)


def pdf_fidelity(st: GermanStatute) -> Fidelity:
    """Audit a parse of a gesetze-im-internet PDF against pdfium's page text from the first page
    holding a § (the table of contents before it has no units), running header and footer removed."""
    import pypdfium2 as pdfium

    from pipelines.statutes.de.pdf import FOOTER_RE, HEADER_RE

    first = min(s.page_start for s in st.sections if s.page_start)
    doc = pdfium.PdfDocument(str(st.source))
    lines: list[str] = []
    try:
        for i in range(first - 1, len(doc)):
            page = doc[i]
            tp = page.get_textpage()
            for ln in tp.get_text_range().splitlines():
                if not (HEADER_RE.match(ln.strip()) or FOOTER_RE.match(ln.strip())):
                    lines.append(ln)
            tp.close()
            page.close()
    finally:
        doc.close()
    text = "\n".join(lines)
    # the first body page may end the table of contents: start at the first unit's own heading line
    first_label = st.structure[0].label if st.structure else st.sections[0].label
    m = re.search(rf"^{re.escape(first_label)}\b", text, re.M)
    return _audit(st, text[m.start():] if m else text)


def markdown_fidelity(st: GermanStatute) -> Fidelity:
    """Audit a parse of a bundestag/gesetze Markdown law against its text without markup: front
    matter and the ``#`` title with its metadata block (dates, amending acts: the act's, not a
    unit's) cut, ``#`` marks, ``**``, backslash escapes and footnote reference ids removed."""
    raw = Path(st.source).read_text(encoding="utf-8")
    fm = split_front_matter(raw)
    body = fm.body if fm else raw
    if st.metadata_only:  # the source prints no text: the metadata under the title is what the parse holds
        title = re.search(r"^#\s.*$", body, re.M)
        body = body[title.end():] if title else body
        body = re.sub(r"^:\s", " ", body, flags=re.M)
    else:
        first = re.search(r"^#{2,6}\s", body, re.M)  # the first heading below the title
        body = body[first.start():] if first else body
    annex = re.search(r"^#{1,6}\s*(Anhang|Anlage)\b", body, re.M)  # not parsed: not units of the act
    body = body[:annex.start()] if annex and st.annexes else body
    body = re.sub(r"\[\^[^\]]+\]:?", " ", body).replace("**", "")
    body = re.sub(r"\\([\\`*_{}\[\]()#+\-.!>\"'])", r"\1", body)
    body = re.sub(r"^#+\s*", "", body, flags=re.M)
    return _audit(st, body)
