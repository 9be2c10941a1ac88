import datetime as dt
import hashlib

from pipelines.statutes.diff import diff_markdown, diff_versions, word_diff
from schemas.arrow import ARTICLES, from_rows


def _art(number, text, status="in_force", version=dt.date(2025, 1, 1), pending=None, page=1):
    h = hashlib.sha256("\x00".join([text, pending or "", status]).encode()).hexdigest()
    return {"id": f"pl:kc:art:{number}", "act_id": "pl:kc", "version": version, "ordinal": 0, "number": number,
            "number_display": number, "sort_key": 0, "path": [], "path_text": "", "text": text,
            "text_pending": pending, "pending_effective_date": None, "pending_note": None, "paragraphs": [],
            "status": status, "status_note": None, "page_start": page, "page_end": page, "footnotes": [],
            "content_hash": h}


def test_diff_kinds_and_layout_insensitivity():
    old = from_rows([_art("1", "A."), _art("2", "B."), _art("3", "C (Dz. U. z 2023 r. poz. 1)."), _art("4", "D."),
                     _art("5", "E.")], ARTICLES)
    new_v = dt.date(2025, 11, 13)
    new = from_rows([_art("1", "A.", version=new_v, page=7),  # moved page only: no change
                     _art("2", "B changed.", version=new_v),
                     _art("3", "C (Dz. U. z 2025 r. poz. 9).", version=new_v),
                     _art("4", "(uchylony)", status="repealed", version=new_v),
                     _art("6", "F.", version=new_v)], ARTICLES)
    d = {r["number"]: r for r in diff_versions(old, new).to_pylist()}
    assert {k: v["change"] for k, v in d.items()} == {
        "2": "changed", "3": "editorial", "4": "repealed", "6": "added", "5": "removed"}
    assert "{+changed.+}" in d["2"]["unified_diff"] or "{+changed.+}" in d["2"]["unified_diff"].replace("B ", "")
    md = diff_markdown(diff_versions(old, new), "t")
    assert "1 changed" in md and "1 editorial" in md and "Art. 2 — changed" in md


def test_pending_change_is_a_change():
    old = from_rows([_art("7", "X.")], ARTICLES)
    new = from_rows([_art("7", "X.", pending="Y.", version=dt.date(2025, 11, 13))], ARTICLES)
    (row,) = diff_versions(old, new).to_pylist()
    assert row["change"] == "changed" and "Y." in row["new_text"]


def test_word_diff():
    assert word_diff("na piśmie pod rygorem", "w formie dokumentowej pod rygorem") == \
        "[-na piśmie-] {+w formie dokumentowej+} pod rygorem"
