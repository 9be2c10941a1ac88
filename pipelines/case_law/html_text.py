"""Open Legal Data "Legal HTML" (and the Markdown-like variant some records carry) → clean text.

Why one line per block: sections, chunks and citation spans are all character offsets into the
*clean* text, so the text must be a deterministic function of the content and keep the decision's
structure — a heading or a paragraph is one line, a Randnummer (margin number, the unit courts
and lawyers pinpoint-cite, "Rn. 12") stays visible as a ``[12] `` prefix and is also kept in
:class:`Block`. The same content always yields the same text, so offsets stored in chunk rows stay
valid as long as ``content_sha256`` is unchanged.

What the real samples contain (``../shared/data/de/openlegaldata``, refex ``html_documents``):

* HTML with ``<h2>Tenor</h2>``, ``<p><rd nr="1"/>…</p>`` (Open Legal Data's Randnummer tag) and
  ``[ref=<uuid>]§ 800 BGB[/ref]`` reference markers written by Open Legal Data's own extractor —
  the markers are removed from the text and kept as :class:`SourceRef` spans;
* juris HTML with ``<dl><dt><span>Randnummer</span><a name="rd_1">1</a></dt><dd><p>…``;
* text without tags (the BGH records): ``## Tenor`` headings, ``1| text`` Randnummer lines,
  ``| I.`` / ``:| II.`` outline lines, Markdown backslash escapes (``1\\.``);
* whole court web pages (``raw``), with scripts, styles and navigation.

Scripts, styles, ``head`` and the like are dropped with their content; entities are decoded;
whitespace (including no-break spaces) is collapsed within a block; ``<sup>2</sup>`` becomes
``²``; double-encoded UTF-8 ("GrÃ¼nde") is repaired per block when that decodes cleanly.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

CLEANER_VERSION = "case-text-1"

# tags whose content is never decision text
_SKIP_TAGS = frozenset({"script", "style", "head", "noscript", "template", "iframe", "svg", "object",
                        "select", "button", "nav"})
# tags that end the current block (their text starts a new line)
_BLOCK_TAGS = frozenset({"p", "div", "br", "li", "ul", "ol", "dl", "dd", "table", "tr", "td", "th",
                         "blockquote", "section", "article", "pre", "header", "footer", "main", "hr",
                         "form", "body", "html", "center", "aside", "figure", "caption", "thead",
                         "tbody", "tfoot"})
_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_HTML_HINT = re.compile(r"<\s*/?\s*(p|div|h[1-6]|br|dl|dt|dd|table|span|a|rd|body|html)\b", re.I)
_WS = re.compile(r"\s+")  # \s covers \xa0, \u2009, \u202f in Python's Unicode regexes
_REF_MARKER = re.compile(r"\[ref=([^\]\s]+)\](.*?)\[/ref\]", re.S)
_STRAY_MARKER = re.compile(r"\[/?ref(?:=[^\]\s]*)?\]")
_DT_RN = re.compile(r"^(?:Randnummer|Randnr\.?|Rn\.?|Rz\.?|Tz\.?)?\s*(\d{1,4}[a-z]?)$", re.I)
_BARE_NUMBER = re.compile(r"\d{1,4}")
_MOJIBAKE = re.compile(r"Ã[\x80-\xbf¤¶¼\u0178\u0153\u2013\u201e\u0161\u201c\u00a0-\u00bf]")
_SUPERSCRIPT = str.maketrans("0123456789+-()", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁽⁾")
# text variant (no tags)
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_MD_RN = re.compile(r"^(\d{1,4}[a-z]?)\s*\|\s?(.*)$")
_MD_CELL = re.compile(r"^:?\|\s?(.*)$")
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~])")


@dataclass(frozen=True)
class Block:
    """One line of the clean text: ``text[start:end]`` (no newline); the body after a Randnummer
    prefix starts at ``body_start``."""

    kind: str  # "heading" | "paragraph"
    start: int
    end: int
    body_start: int
    rn: str | None = None  # Randnummer as printed ("12", "12a")
    level: int | None = None  # heading level (h1 = 1, "##" = 2)


@dataclass(frozen=True)
class SourceRef:
    """An Open Legal Data ``[ref=<id>]…[/ref]`` marker: its id and the span of its inner text."""

    ref_id: str
    start: int
    end: int


@dataclass
class CleanText:
    text: str
    blocks: list[Block] = field(default_factory=list)
    refs: list[SourceRef] = field(default_factory=list)
    fmt: str = "html"  # "html" | "text"

    def block_at(self, offset: int) -> Block | None:
        """The block containing character ``offset`` (None for a newline or out of range)."""
        lo, hi = 0, len(self.blocks) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            b = self.blocks[mid]
            if offset < b.start:
                hi = mid - 1
            elif offset >= b.end:
                lo = mid + 1
            else:
                return b
        return None


def fix_mojibake(s: str) -> str:
    """Undo UTF-8 read as Latin-1/cp1252 ("GrÃ¼nde" → "Gründe") when the round trip is clean."""
    if not _MOJIBAKE.search(s):
        return s
    for enc in ("cp1252", "latin-1"):
        try:
            return s.encode(enc).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
    return s


class _Builder:
    """Accumulates blocks into the clean text; owns the offset bookkeeping."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.blocks: list[Block] = []
        self.refs: list[SourceRef] = []

    def add(self, raw: str, *, kind: str = "paragraph", rn: str | None = None,
            level: int | None = None) -> bool:
        body, refs = _normalise_block(raw)
        if not body:
            return False
        if self.parts:
            self.parts.append("\n")
            self.length += 1
        prefix = f"[{rn}] " if rn else ""
        start = self.length
        body_start = start + len(prefix)
        line = prefix + body
        self.parts.append(line)
        self.length += len(line)
        self.blocks.append(Block(kind, start, self.length, body_start, rn, level))
        self.refs.extend(SourceRef(rid, body_start + s, body_start + e) for rid, s, e in refs)
        return True

    def result(self, fmt: str) -> CleanText:
        return CleanText("".join(self.parts), self.blocks, self.refs, fmt)


def _normalise_block(raw: str) -> tuple[str, list[tuple[str, int, int]]]:
    """Collapse whitespace, repair mojibake, cut out ``[ref]`` markers (returning their spans)."""
    text = _WS.sub(" ", fix_mojibake(raw)).strip()
    if "[ref" not in text and "[/ref" not in text:
        return text, []
    out: list[str] = []
    refs: list[tuple[str, int, int]] = []
    pos = n = 0
    for m in _REF_MARKER.finditer(text):
        out.append(text[pos:m.start()])
        n += m.start() - pos
        inner = m.group(2)
        refs.append((m.group(1), n, n + len(inner)))
        out.append(inner)
        n += len(inner)
        pos = m.end()
    out.append(text[pos:])
    cleaned = "".join(out)
    if _STRAY_MARKER.search(cleaned):  # an unbalanced marker: drop it, offsets of refs after it move
        cleaned, refs = _STRAY_MARKER.sub("", cleaned), []
    # stripping may leave doubled or edge spaces; refs are only kept when offsets did not move
    squeezed = _WS.sub(" ", cleaned).strip()
    if squeezed != cleaned:
        refs = []
    return squeezed, refs


class _LegalHTMLParser(HTMLParser):
    def __init__(self, builder: _Builder) -> None:
        super().__init__(convert_charrefs=True)
        self.b = builder
        self.buf: list[str] = []
        self.skip = 0
        self.sup = 0
        self.heading_level: int | None = None
        self.in_dt = False
        self.dt_buf: list[str] = []
        self.pending_rn: str | None = None

    # -- helpers
    def flush(self) -> None:
        text = "".join(self.buf)
        self.buf = []
        if not self.heading_level and self.pending_rn is None and _BARE_NUMBER.fullmatch(text.strip()):
            # a line holding only a number is a Randnummer printed above its paragraph (BVerfG pages)
            self.pending_rn = text.strip()
            return
        kind = "heading" if self.heading_level else "paragraph"
        if self.b.add(text, kind=kind, rn=None if self.heading_level else self.pending_rn,
                      level=self.heading_level):
            if not self.heading_level:
                self.pending_rn = None

    # -- HTMLParser hooks
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP_TAGS:
            self.skip += 1
            return
        if self.skip:
            return
        if tag == "rd":  # <rd nr="1"/>: Open Legal Data's Randnummer mark at the start of a block
            nr = dict(attrs).get("nr")
            if nr:
                if "".join(self.buf).strip():
                    self.flush()
                self.pending_rn = nr.strip()
            return
        if tag == "dt":
            self.flush()
            self.in_dt, self.dt_buf = True, []
            return
        if tag in _HEADING_TAGS:
            self.flush()
            self.heading_level = int(tag[1])
            return
        if tag == "sup":
            self.sup += 1
        if tag in _BLOCK_TAGS:
            self.flush()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in ("rd", "br", "hr") and tag in _SKIP_TAGS:
            self.skip -= 1  # a self-closed skip tag has no content to skip

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if tag == "dt" and self.in_dt:
            self.in_dt = False
            label = _WS.sub(" ", "".join(self.dt_buf)).strip()
            m = _DT_RN.match(label)
            if m:
                self.pending_rn = m.group(1)
            elif label:  # a term of a real definition list: keep it as its own line
                self.b.add(label)
            return
        if tag in _HEADING_TAGS and self.heading_level:
            self.flush()
            self.heading_level = None
            return
        if tag == "sup":
            self.sup = max(0, self.sup - 1)
        if tag in _BLOCK_TAGS:
            self.flush()

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.sup and data.strip().isdigit():
            data = data.strip().translate(_SUPERSCRIPT)
        (self.dt_buf if self.in_dt else self.buf).append(data)

    def close(self) -> None:
        super().close()
        if self.in_dt:
            self.buf.extend(self.dt_buf)
        self.flush()


def _clean_text_variant(content: str, b: _Builder) -> None:
    """The tag-free variant (BGH records): one block per non-empty line."""
    for line in html.unescape(content).split("\n"):
        line = line.strip()
        if not line:
            continue
        m = _MD_HEADING.match(line)
        if m:
            b.add(_MD_ESCAPE.sub(r"\1", m.group(2)), kind="heading", level=len(m.group(1)))
            continue
        m = _MD_RN.match(line)
        if m:
            b.add(_MD_ESCAPE.sub(r"\1", m.group(2)), rn=m.group(1))
            continue
        m = _MD_CELL.match(line)
        if m:
            line = m.group(1)
        b.add(_MD_ESCAPE.sub(r"\1", line))


def clean_legal_html(content: str) -> CleanText:
    """Clean text of one decision's content (Legal HTML, juris HTML, a web page or the tag-free
    variant). Deterministic: the same content always gives the same text and offsets."""
    if not isinstance(content, str):
        raise TypeError(f"content must be str, got {type(content).__name__}")
    b = _Builder()
    if _HTML_HINT.search(content):
        parser = _LegalHTMLParser(b)
        parser.feed(content)
        parser.close()
        return b.result("html")
    _clean_text_variant(content, b)
    return b.result("text")
