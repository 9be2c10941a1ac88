"""Which articles really changed between two versions of an act.

Compared by ``content_hash`` (text in force, pending text and status), so page layout, footnote
numbering and amendment footnotes never show up as changes.
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
        elif strip_citations(_reading(o)) == strip_citations(_reading(r)):
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
             "`editorial`: only a `(Dz. U. …)` citation of another act was refreshed — not an amendment.", ""]
    for kind in kinds:
        for r in (r for r in rows if r["change"] == kind):
            lines += [f"## Art. {r['number']} — {r['change']}", "", r["unified_diff"] or "(no text)", ""]
    return "\n".join(lines)
