"""SAOS ``textContent`` → clean text with stable offsets (the :class:`CleanText` of the German cleaner).

Why a Polish variant and not :func:`~pipelines.case_law.html_text.clean_legal_html` as is: the
two real dump pages (``shared/data/pl/saos``, 200 judgments) hold three kinds of text, and only the
first is the HTML the German cleaner was written for:

* common courts (26): HTML from the courts' portals — ``<h2>WYROK</h2>``, ``<p>``, tables of the
  bench, ``<a>`` links to ISAP and anonymised names as ``<span class="anon-block">P. S.</span>``,
  often written without a space to the next word (``<span …>P.</span>wniósł``), superscripts
  with whitespace inside (``art. 385<sup>\n<!-- -->1 </sup>§ 1``, ``<sup>(\n 3 )</sup>``) and
  soft hyphens (``usta\xadwowymi``). The German parser is reused; this variant pads anonymised
  spans with a space where a word touched them, writes a superscript without its inner whitespace
  (``385¹ § 1``, ``385⁽³⁾``), and drops soft hyphens. On its own, the German cleaner gave clean
  text with stable offsets too, but kept soft hyphens inside words in 1 of the 26, words glued to
  anonymised names in 7 ("P.wniósł", "w(...)z": as the portals' HTML renders them) and a
  superscript split from its number in 10 ("art. 385 ¹§ 1").
* Supreme Court (68) and National Appeal Chamber (KIO, 80): plain text extracted from PDFs —
  every line wrapped at the page width (~80 characters), page numbers ("2", "3", …) on their own
  lines, paragraphs separated by blank lines (KIO) or by nothing (SN). One block per line, as the
  German text variant would make (15,704 SN lines), cuts every sentence of the reasons into
  line-sized blocks. Here wrapped lines are joined back into paragraphs (SN: 1,945 blocks, KIO
  5,226 of 24,270 lines): a line break is kept (a new block)

  - after a blank line;
  - before and after a reasons heading ("Uzasadnienie", "U z a s a d n i e n i e"), and before
    an operative heading ("postanawia:", "podjął uchwałę:") that follows punctuation or ends in ":";
  - after a short line (under 60 % of the page width: a heading, a paragraph's end, a line of
    the bench) — unless it stops without punctuation and the next line goes on in lower case
    (the narrow last lines of a page, "orzekł, jak" / "w sentencji.");
  - after a line ending a sentence when the next line starts a sentence (not in lower case) and
    its first word would still have fitted on the line;
  - before an enumerated point ("1)", "2.", "I.", "-") after a line ending with punctuation;

  but never after a reference waiting for its number ("art.", "§", "ust.", "pkt", "nr", "poz.")
  or a number the PDF broke off where it had a superscript ("art. 83" / "3931" followed by
  "ust. 9" / "§ 2 k.p.c."). Joined lines meet with one space, or with none after a hyphen
  ("Sanitarno-\nEpidemiologiczną", "23-\n300": the hyphen stays). Lone page numbers in sequence
  (2, 3, …) are dropped. Hyphenation inside lines of the SN's reporter versions ("pod-lega") is
  the source's and stays.
* Constitutional Tribunal (26): plain text with one paragraph per line: one block per line.

The text is a pure function of ``text_content`` (no state, no settings), so the offsets stored in
chunk rows stay valid as long as ``content_sha256`` is unchanged. Checked on all 200 judgments
(``tests/pipelines/case_law/test_pl_judgments.py``): no tag or entity left, no word glued to
another that the source did not glue, the reasons heading a line of its own in every judgment
that has one.
"""

from __future__ import annotations

import html
import re

from pipelines.case_law.html_text import _HTML_HINT, _SUPERSCRIPT, CleanText, _Builder, _LegalHTMLParser
from pipelines.case_law.pl.sections import is_operative_heading, is_reasons_heading

PL_CLEANER_VERSION = "pl-judgment-text-1"

_SOFT_HYPHEN = "\xad"
_SUPERSCRIPTABLE = frozenset("0123456789+-()")
_WS = re.compile(r"\s+")
_WORD_CHAR = re.compile(r"\w", re.UNICODE)
# a plain-text judgment is "wrapped" when nearly all its lines are about one page width long
_WRAP_MAX_P90 = 120
_WRAP_MIN_LINES = 8
_SHORT_LINE = 0.6  # of the page width: a line this short ends its paragraph
_FIT_SLACK = 0.95  # the next word "would have fitted" below 95 % of the page width
_SENTENCE_END = re.compile(r"[.:;!?][\"'”»)\]]*$")
_CLAUSE_END = re.compile(r"[.,:;!?)\]][\"'”»]*$")
_LIST_END = re.compile(r"[.:;,][\"'”»)\]]*$")
_ENUMERATION = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*[.)]|[a-z]\)|[IVXL]{1,6}[.)]|[-–•])\s")
_PAGE_NUMBER = re.compile(r"\d{1,3}")
# a line ending so expects a number on the next one ("w art.\n3931\nk.p.c."): never a paragraph end
_OPEN_REFERENCE = re.compile(r"(?:\bart\.|§|\bust\.|\bpkt\.?|\bnr|\bpoz\.|\blit\.)$", re.IGNORECASE)
# "art. 83" / "3931" broken off where the PDF had a superscript, continued by "ust. 9" / "§ 2 k.p.c."
_SPLIT_NUMBER = re.compile(r"(?:^|\bart\.\s*)\d+[a-z]?$")


class _PolishHTMLParser(_LegalHTMLParser):
    """The German Legal-HTML parser plus the three SAOS habits described in the module docstring."""

    def __init__(self, builder: _Builder) -> None:
        super().__init__(builder)
        self.spans: list[bool] = []  # per open <span>: is it an anonymised block?
        self.pad_next = False  # an anonymised span just ended: a word right after it needs a space

    def _buffer(self) -> list[str]:
        return self.dt_buf if self.in_dt else self.buf

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "span" and not self.skip:
            anon = "anon-block" in (dict(attrs).get("class") or "")
            self.spans.append(anon)
            buf = self._buffer()
            if anon and buf and buf[-1] and _WORD_CHAR.match(buf[-1][-1]):
                buf.append(" ")
        super().handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and not self.skip and self.spans:
            if self.spans.pop():
                self.pad_next = True
        super().handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        data = data.replace(_SOFT_HYPHEN, "")
        if self.pad_next and data:
            if _WORD_CHAR.match(data[0]):
                data = " " + data
            self.pad_next = False
        if self.sup:
            core = _WS.sub("", data)
            if not core:
                return  # whitespace inside <sup> would separate the superscript from its number
            if all(ch in _SUPERSCRIPTABLE for ch in core):  # "1 ", "(\n 3 )": art. 385¹, art. 385⁽³⁾
                self._buffer().append(core.translate(_SUPERSCRIPT) + (" " if data[-1].isspace() else ""))
                return
        super().handle_data(data)


def _p90(lengths: list[int]) -> int:
    ordered = sorted(lengths)
    return ordered[int(0.9 * (len(ordered) - 1))]


def _breaks_after(prev: str, line: str, width: int) -> bool:
    """Is the line break between ``prev`` and ``line`` (both stripped, non-empty) a paragraph end?"""
    if _OPEN_REFERENCE.search(prev):
        return False
    if is_reasons_heading(line) or is_reasons_heading(prev):
        return True  # "Uzasadnienie" is a line of its own, however long the line before it
    if is_operative_heading(line) and (_CLAUSE_END.search(prev) or line.endswith(":")):
        return True  # '… projektem uchwały?"' / 'podjął uchwałę:': the operative part starts
    if _SPLIT_NUMBER.search(prev) and (line[0].islower() or line[0] == "§"):
        return False
    if len(prev) < _SHORT_LINE * width:
        # a short line ends its paragraph, unless it stops mid-sentence and the next line goes on
        # in lower case (the narrow last lines of a page: "orzekł, jak" / "w sentencji.")
        return not ((line[0].islower() or line[0] == "§") and not _CLAUSE_END.search(prev))
    first_word = line.split(" ", 1)[0]
    if _SENTENCE_END.search(prev) and not line[0].islower() and len(prev) + 1 + len(first_word) < _FIT_SLACK * width:
        return True
    return bool(_ENUMERATION.match(line) and _LIST_END.search(prev))


def _join(lines: list[str]) -> str:
    out = lines[0]
    for line in lines[1:]:
        if out.endswith("-") and len(out) > 1 and out[-2].isalnum() and line[:1].isalnum():
            out += line  # "Sanitarno-" + "Epidemiologiczną", "23-" + "300": the hyphen stays
        else:
            out += " " + line
    return out


def _plain_text(content: str, b: _Builder) -> None:
    text = html.unescape(content.replace("\r\n", "\n").replace("\r", "\n").replace(_SOFT_HYPHEN, ""))
    lines = [line.strip() for line in text.split("\n")]
    filled = [len(line) for line in lines if line]
    wrapped = len(filled) >= _WRAP_MIN_LINES and _p90(filled) <= _WRAP_MAX_P90
    if not wrapped:
        for line in lines:
            if line:
                b.add(line)
        return
    width = _p90(filled)
    page = 2
    paragraph: list[str] = []
    for line in lines:
        if not line:
            if paragraph:
                b.add(_join(paragraph))
                paragraph = []
            continue
        if _PAGE_NUMBER.fullmatch(line) and int(line) == page:
            page += 1  # the PDF's page number, not text
            continue
        if paragraph and _breaks_after(paragraph[-1], line, width):
            b.add(_join(paragraph))
            paragraph = []
        paragraph.append(line)
    if paragraph:
        b.add(_join(paragraph))


def clean_judgment_text(text_content: str) -> CleanText:
    """Clean text of one SAOS judgment's ``textContent`` (HTML, wrapped PDF text or one paragraph
    per line). Deterministic: the same content always gives the same text and offsets."""
    if not isinstance(text_content, str):
        raise TypeError(f"text_content must be str, got {type(text_content).__name__}")
    b = _Builder()
    if _HTML_HINT.search(text_content):
        parser = _PolishHTMLParser(b)
        parser.feed(text_content)
        parser.close()
        return b.result("html")
    _plain_text(text_content, b)
    return b.result("text")
