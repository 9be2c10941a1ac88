"""Bad PDFs made from real ones, written once for the tests that need them (``tests/`` is on
``sys.path`` via conftest, as for ``registry_rows``)."""

from __future__ import annotations

import io
from pathlib import Path

import pypdfium2 as pdfium


def pages(src: Path, order: list[int]) -> bytes:
    """The real PDF's pages in ``order`` (a subset, or all of them shuffled): still a valid PDF."""
    doc = pdfium.PdfDocument(str(src))
    out = pdfium.PdfDocument.new()
    out.import_pages(doc, order)
    buf = io.BytesIO()
    out.save(buf)
    return buf.getvalue()
