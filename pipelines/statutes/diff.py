"""Which articles really changed between two versions of an act.

Compared by ``content_hash`` (text in force, pending text and status), so page layout, footnote
numbering and amendment footnotes never show up as changes; an article whose hash differs but whose
``editorial_form`` does not (ISAP reprinted it: citations, typography, superscript rendering) is
``editorial``, not ``changed``.
"""

from __future__ import annotations

import difflib
import re

import pyarrow as pa

from schemas.arrow import DIFF, from_rows


def word_diff(old: str, new: str) -> str:
    """Compact word-level diff: ``[-removed-]{+added+}`` with unchanged words between."""
    a, b = re.findall(r"\S+", old or ""), re.findall(r"\S+", new or "")
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            words = a[i1:i2]
            out.append(" ".join(words) if len(words) <= 12 else f"{' '.join(words[:5])} … {' '.join(words[-5:])}")
        if op in ("delete", "replace"):
            out.append("[-" + " ".join(a[i1:i2]) + "-]")
        if op in ("insert", "replace"):
            out.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(out)


_CITATION = re.compile(r"\(\s*Dz\.\s*U\.[^()]*\)")


def strip_citations(text: str) -> str:
    """Text without ``(Dz. U. z 2024 r. poz. 423)``-style publication references: ISAP refreshes
    them when a referenced act gets a new consolidated text; the article itself is not amended."""
    return re.sub(r"\s+", " ", _CITATION.sub("(Dz. U.)", text)).strip()


_DASHES = re.compile(r"[\u2010-\u2015\u2212-]")
_QUOTES = re.compile(r"[\u201c\u201d\u201e\u201f\u00ab\u00bb\u2018\u2019\u201a\"']")
_MISSING_PAR_SIGN = re.compile(r"(^|\n)[ \t]*§[ \t\u00a0]*(?=\d+(?:\^\d+)?[a-z]*\.(?!\d))")
_REPEAL_MARK = re.compile(r"\((uchylon[yaei]|utraci(?:ł|ła|ło|ły) moc|skreślon[yaei]|pominięt[yaei])\)[ \t]*[.,;]?")
_BARE_REPEAL = re.compile(r"((?:^|\s)(?:\d+[a-z]*(?:\^\d+[a-z]*)?|[a-z])\)[ \t]*)(uchylon[yaei])\b(?!\))[ \t]*[.,;]?")
_SPACE = re.compile(r"\s+")


def _unspace(m: re.Match) -> str:
    a, b = m.string[m.start() - 1] if m.start() else "", m.string[m.end()] if m.end() < len(m.string) else ""
    # a space between a digit and a letter or digit is kept: "art. 5 a także" is not "art. 5a także",
    # "§ 1 1" is not "§ 11"
    return " " if a.isalnum() and b.isalnum() and (a.isdigit() or b.isdigit()) else ""


def editorial_form(text: str) -> str:
    """The text as far as an amendment can change it: what ISAP prints differently in two consolidated
    texts without the act being amended is normalised away, nothing else.

    Measured on k.p. 2016-09-22 → 2025-12-10 (161 "changed" when only citations were ignored) and
    k.p.c. 2023-08-16 → 2024-02-16 (87), every difference read in both PDFs (bench/diff_sample.py):

    - ``(Dz. U. …)`` references to other acts, refreshed or dropped (k.p.c. art. 585, 626^11, 890);
    - the punctuation ISAP puts after a repeal marker: ``(uchylony).`` (2016) / ``(uchylony)`` (2025),
      ``(uchylona),``, ``(uchylony);``, ``(utracił moc).`` (k.p.: 65 of the 81 articles that
      moved from changed to editorial; k.p.c.: 31 moved, 17 of them by spaces), and the parentheses of
      ``5) uchylony`` (k.p. 2016 art. 30);
    - spaces: lost or added between words (``Socjalnejokreśli``, ``Wrazie``: the parser drops a footnote
      reference ending a line together with the line break; ``rejonowymoże`` in the 2023 k.p.c.),
      around dashes (``1– 4``, ``pracownika–ojca``), before ``%`` (``20%`` / ``20 %``), after a comma;
      a space is kept where a digit meets a letter or digit, so no number can merge with another;
    - dash and quote forms (– — ‒ - ; „” “ " ' ’), the ellipsis, and a compound broken at a line end
      (``opiekuńczo- -lecznicze`` / ``opiekuńczo-lecznicze``, k.p. art. 182, k.p.c. art. 579^4);
    - superscript rendering: ``art. 8091`` / ``art. 809^1``, ``§ 11`` / ``§ 1^1`` (k.p.c. art. 986^1,
      760^2: the 2023 PDF prints the last digit inline at full size, 2024 raised and smaller — pdfium
      glyph boxes), hours ``2100`` / ``21^00``. Amendments insert units with superscripts instead of
      renumbering, so the same digits name the same unit; ``§ 11`` / ``§ 12`` stays a change;
    - a paragraph label printed without its sign at the start of a paragraph: ``Art. 88. 1.`` in the
      2023 k.p.c. PDF, ``Art. 88. § 1.`` in 2024 (also art. 156^1, 280, 1106^3, 1153^25). Inside a
      sentence a missing ``§`` stays a change (``oraz w 1^1`` / ``oraz w § 1^1``, k.p.c. art. 805):
      there it can decide which unit is meant.

    Words, numbers, their order and every other punctuation mark are compared as they are.
    """
    t = _CITATION.sub("", text or "")
    t = _MISSING_PAR_SIGN.sub(r"\1", t)
    t = _BARE_REPEAL.sub(r"\1(\2)", t)
    t = _REPEAL_MARK.sub(r"(\1)", t)
    t = t.replace("\u2026", "...").replace("^", "").replace("\u00ad", "")
    t = _QUOTES.sub('"', t)
    t = _SPACE.sub(" ", _DASHES.sub("-", t)).strip()
    t = _SPACE.sub(_unspace, t)
    return re.sub(r"-+", "-", t)


def _reading(row: dict) -> str:
    text = row["text"] or ""
    if row.get("text_pending"):
        eff = row.get("pending_effective_date")
        text += f"\n[from {eff or 'a date not given'}:]\n{row['text_pending']}"
    return text


def diff_versions(old: pa.Table, new: pa.Table) -> pa.Table:
    """Added, changed, repealed and removed articles between two ARTICLES tables."""
    old_rows = {r["id"]: r for r in old.to_pylist()}
    rows = []
    new_rows = new.to_pylist()
    if not new_rows:
        return from_rows([], DIFF)
    act_id, from_v, to_v = new_rows[0]["act_id"], (old_rows and next(iter(old_rows.values()))["version"]), new_rows[0]["version"]
    for r in new_rows:
        o = old_rows.pop(r["id"], None)
        if o is None:
            change = "added"
        elif o["content_hash"] == r["content_hash"]:
            continue
        elif r["status"] == "repealed" and o["status"] != "repealed":
            change = "repealed"
        elif editorial_form(_reading(o)) == editorial_form(_reading(r)):
            change = "editorial"
        else:
            change = "changed"
        old_text, new_text = (_reading(o) if o else None), _reading(r)
        rows.append({"act_id": act_id, "from_version": from_v, "to_version": to_v, "article_id": r["id"],
                     "number": r["number"], "change": change, "old_text": old_text, "new_text": new_text,
                     "old_hash": o["content_hash"] if o else None, "new_hash": r["content_hash"],
                     "unified_diff": word_diff(old_text or "", new_text)})
    for o in old_rows.values():  # vanished without a "(uchylony)" trace
        rows.append({"act_id": act_id, "from_version": from_v, "to_version": to_v, "article_id": o["id"],
                     "number": o["number"], "change": "removed", "old_text": _reading(o), "new_text": None,
                     "old_hash": o["content_hash"], "new_hash": None, "unified_diff": ""})
    return from_rows(rows, DIFF)


def diff_markdown(diff: pa.Table, title: str) -> str:
    """The readable summary published next to the diff table."""
    rows = diff.to_pylist()
    kinds = ("added", "changed", "repealed", "removed", "editorial")
    counts = {k: sum(r["change"] == k for r in rows) for k in kinds}
    lines = [f"# {title}", "", ", ".join(f"{v} {k}" for k, v in counts.items()), "",
             "`editorial`: only ISAP's printing differs (a `(Dz. U. …)` citation of another act, punctuation after "
             "`(uchylony)`, spaces, dash or quote forms, superscript rendering) — not an amendment.", ""]
    for kind in kinds:
        for r in (r for r in rows if r["change"] == kind):
            lines += [f"## Art. {r['number']} — {r['change']}", "", r["unified_diff"] or "(no text)", ""]
    return "\n".join(lines)
