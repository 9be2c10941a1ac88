"""What page 1 of an ISAP unified text says about its act, read by the parser's own rules — for
acts discovered from the ELI listing, which have no curated registry row to say it.

* :func:`read_front_page` — the title under "USTAWA / z dnia … r." (the parser's ``_heading``),
  the act's Dz. U. address (``ADDRESS_RE``: "Dz. U. 1997 Nr 88 poz. 553") and the enactment line.
  The offline ELI source's listing (``connectors.eli.SampleEliSource``) takes its titles from it,
  and because it is the parser's reading, the identity check of the parse
  (``parser._check_identity``: page 1's title must *equal* the act's) accepts what discovery
  wrote. Measured on the seven sample PDFs: the four titles and addresses equal the curated rows'
  (k.p.c. 2023 prints no address: the listing takes it from the 2024 text); page 1 reads in
  0.2–0.4 s (pdfium, one page), cached per file and modification time.
* :func:`paragraph_unit` — "§" or "ust.": how the act numbers its paragraphs, which the registry
  row says for a curated act. Counted over the first :data:`UNIT_PAGES` pages: lines opening with
  "§ N" (the codes) against article heads "Art. N. 1. " (an ``ust.`` act). Measured on the seven
  sample PDFs (§ / ust.): k.c. 29 / 0 and 28 / 0, k.p.c. 23 / 0 and 21 / 0, k.p. 19 / 0 and
  15 / 0 (its first § is on page 3 or 4, hence six pages), k.k. 47 / 0; about 1 s per file, read
  once per parse of an act without a curated row. No sample statute numbers by ``ust.``: that
  branch is the registry's default for such acts, untested on a real PDF here.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from connectors.eli_listing import FrontPage
from pipelines.pdf_lines import read_lines
from pipelines.statutes.pl.parser import ADDRESS_RE, ART_RE, ENACTED_RE, _flat, _heading

UNIT_PAGES = 6
_PAR_LINE = re.compile(r"^(?:Art\.\s*\S+\.\s*)?§\s*\d")
_UST_LINE = re.compile(r"^Art\.\s*\S+\.\s*1\.\s")


def read_front_page(path: Path) -> FrontPage:
    """Title, Dz. U. address and enactment line of the ISAP PDF ``path`` (page 1)."""
    path = Path(path)
    stat = path.stat()
    return _front_page(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=256)
def _front_page(path: str, _mtime: int, _size: int) -> FrontPage:
    page1 = [ln for ln in read_lines(Path(path), workers=1, pages=[0])[0] if ln.zone == "body"]
    front = []
    for ln in page1:
        if ART_RE.match(ln.text) or ln.text.startswith("Preambuła"):
            break
        front.append(ln)
    printed = next((ln.text.strip() for ln in front if ADDRESS_RE.search(_flat(ln.text))), "")
    enacted = next((ln.text.strip() for ln in front if ENACTED_RE.match(ln.text)), "")
    title = re.sub(r"\s+", " ", _heading(front)).strip()
    return FrontPage(title=title, display_address=printed, enacted=enacted)


def paragraph_unit(path: Path) -> str:
    """"§" when the act numbers paragraphs "§ 1." (the codes), else "ust." ("1. …")."""
    from pipelines.pdf_lines import page_count

    pages = read_lines(Path(path), workers=1, pages=range(min(UNIT_PAGES, page_count(Path(path)))))
    body = [ln.text for page in pages for ln in page if ln.zone == "body"]
    par = sum(bool(_PAR_LINE.match(t)) for t in body)
    ust = sum(bool(_UST_LINE.match(t)) for t in body)
    return "§" if par > 0 and par >= ust else "ust."
