import datetime as dt

from pipelines.chunking import build_chunks, chunk_article, count_tokens
from schemas.arrow import ARTICLES, from_rows


def test_short_article_is_one_chunk():
    assert chunk_article("§ 1. Krótki przepis.", max_tokens=50) == [("§ 1. Krótki przepis.", 6)]  # §, 1, ., Krótki, przepis, .


def test_long_article_splits_at_units_and_sentences_within_limit():
    unit = "§ {n}. " + " ".join(["Zdanie ma tutaj dokładnie kilka słów."] * 6)
    text = "\n".join(unit.format(n=n) for n in range(1, 6))
    chunks = chunk_article(text, max_tokens=60)
    assert len(chunks) > 1
    assert all(0 < k <= 60 for _, k in chunks)
    assert all(k == count_tokens(c.replace("\n", " ")) for c, k in chunks)
    # nothing lost, nothing duplicated
    assert "".join(c.replace("\n", "").replace(" ", "") for c, _ in chunks) == text.replace("\n", "").replace(" ", "")


def test_one_overlong_sentence_is_cut_by_tokens():
    text = " ".join(["słowo"] * 130)
    chunks = chunk_article(text, max_tokens=50)
    assert [k for _, k in chunks] == [50, 50, 30]


def test_build_chunks_keeps_article_id_and_heading_path():
    row = {"id": "pl:kc:art:22^1", "act_id": "pl:kc", "version": dt.date(2025, 11, 13), "ordinal": 0,
           "number": "22^1", "number_display": "22¹", "sort_key": 22001, "path": [], "path_text": "KSIĘGA PIERWSZA",
           "text": "Za konsumenta uważa się osobę fizyczną.", "text_pending": None, "pending_effective_date": None,
           "pending_note": None, "paragraphs": [], "status": "in_force", "status_note": None, "page_start": 4,
           "page_end": 4, "footnotes": [], "content_hash": "x"}
    (c,) = build_chunks(from_rows([row], ARTICLES), max_tokens=100).to_pylist()
    assert c["chunk_id"] == "pl:kc:art:22^1#0" and c["heading_path"] == "KSIĘGA PIERWSZA › Art. 22¹"
    assert c["token_count"] == 7 and len(c["content_hash"]) == 64


def test_article_with_paragraphs_gives_one_chunk_per_paragraph():
    paragraphs = [{"id": "pl:kc:art:944:par:1", "number": "1", "status": "in_force",
                   "text": "§ 1. Sporządzić i odwołać testament może tylko osoba mająca pełną zdolność do czynności prawnych."},
                  {"id": "pl:kc:art:944:par:2", "number": "2", "status": "in_force",
                   "text": "§ 2. Testamentu nie można sporządzić ani odwołać przez przedstawiciela."}]
    row = {"id": "pl:kc:art:944", "act_id": "pl:kc", "version": dt.date(2025, 11, 13), "ordinal": 0,
           "number": "944", "number_display": "944", "sort_key": 944000, "path": [], "path_text": "KSIĘGA CZWARTA",
           "text": "\n".join(p["text"] for p in paragraphs), "text_pending": None, "pending_effective_date": None,
           "pending_note": None, "paragraphs": paragraphs, "status": "in_force", "status_note": None,
           "page_start": 1, "page_end": 1, "footnotes": [], "content_hash": "x"}
    chunks = build_chunks(from_rows([row], ARTICLES), max_tokens=100).to_pylist()
    assert [c["text"] for c in chunks] == [p["text"] for p in paragraphs]
    assert [c["chunk_id"] for c in chunks] == ["pl:kc:art:944#0", "pl:kc:art:944#1"]
    assert {c["article_id"] for c in chunks} == {"pl:kc:art:944"} and all(c["chunk_count"] == 2 for c in chunks)
    assert chunks[0]["content_hash"] != chunks[1]["content_hash"]


def test_an_article_not_yet_in_force_is_chunked_with_its_announced_text():
    """k.k. 255b is printed whole between ISAP's < > markers: no text in force, its text pending.
    Its chunk carries the announced text and status ``pending`` (never an empty chunk)."""
    row = {"id": "pl:kk:art:255b", "act_id": "pl:kk", "version": dt.date(2026, 7, 28), "ordinal": 0,
           "number": "255b", "number_display": "255b", "sort_key": 255002000, "path": [], "path_text": "",
           "text": "", "text_pending": "Kto publicznie pochwala zbrodnię, podlega karze.",
           "pending_effective_date": dt.date(2026, 9, 1), "pending_note": None, "paragraphs": [],
           "status": "pending", "status_note": None, "page_start": 1, "page_end": 1, "footnotes": [],
           "content_hash": "x"}
    (c,) = build_chunks(from_rows([row], ARTICLES), max_tokens=100).to_pylist()
    assert c["text"] == row["text_pending"] and c["status"] == "pending" and c["token_count"] > 0
