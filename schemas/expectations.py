"""Expectation suites of the published corpus: the data-quality contract next to the Arrow schemas.

The Arrow schemas (``schemas/arrow.py``) fix the columns and types; these suites fix what the
values must look like. Each expectation carries ``meta={"reason": ...}`` saying why it exists, so
a failed run explains itself (``pipelines.validation`` puts the reason into the report).

Suites are validated against the *prepared* pandas frame (``pipelines.validation.prepare_*``),
which adds derived columns the Arrow tables do not have:

* ``path_depth`` — number of hierarchy entries in ``path`` (0 when the path is missing);
* the articles frame is sorted by ``ordinal`` so ``sort_key`` can be checked in document order.

Great Expectations is imported lazily inside the builders: importing GX costs ~15 s, and this
module is imported by Dagster definitions that should load fast.

GX 1.24 facts the suites rely on (verified in the installed source and by the tests):

* ``row_condition`` takes a Condition object (``Column("status") != "repealed"``); the pandas
  engine turns it into ``DataFrame.query``. String conditions with ``condition_parser="pandas"``
  still work but are deprecated since GX 1.9 (DeprecationWarning), so they are not used here.
* Column map expectations skip nulls, so "non-empty" needs a not-null expectation besides the
  regex one, and ``sort_key`` increasing needs ``sort_key`` not null.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from schemas.arrow import LEVELS

if TYPE_CHECKING:  # pragma: no cover
    from great_expectations.core.expectation_suite import ExpectationSuite

STATUSES = ("in_force", "repealed")
# "pending": an article already enacted but not yet in force in that text state: a German §
# without text (bundestag/gesetze prints "(XXXX) §§ 707a bis 707c" for the MoPeG §§ before they took
# effect), or a Polish article printed whole between ISAP's < > markers (k.p. 18^3ca, k.k. 255b:
# its text is in ``text_pending``). Suites built with ``allow_pending=True`` accept it (both builds
# today; the Civil Code PDFs have no such article).
PENDING = "pending"

# PDF residue that must never reach a published text: name → (regex searched anywhere, reason).
# The same patterns are useful to parser tests, so they are plain data.
RESIDUE_PATTERNS: dict[str, tuple[str, str]] = {
    "running_header": (
        r"©",
        "running page header '©Kancelaria Sejmu' leaked into the text (headers belong to no article)",
    ),
    "page_marker": (
        r"\bs\.\s*\d+\s*/\s*\d+",
        "page marker 's. N/M' from the running header leaked into the text",
    ),
    "date_footer": (
        r"\d{4}-\d{2}-\d{2}",
        "page footer date line (YYYY-MM-DD) leaked into the text; statutes write dates in words",
    ),
    "footnote_marker": (
        r"[A-Za-zżźćńółęąśŻŹĆĄŚĘŁÓŃ]\d+\)",
        "footnote reference glued to a word (e.g. 'cywilny1)'): a superscript read as body text",
    ),
    "isap_marker": (
        r"[<>\[\]]",
        "bare ISAP change marker < > [ ]: both readings must be resolved into text / text_pending",
    ),
}

# Markdown residue that must never reach a published text (bundestag/gesetze files, read without
# pages): name → (regex, reason). Checked on rows without a page, as RESIDUE_PATTERNS on rows with one.
MARKDOWN_RESIDUE_PATTERNS: dict[str, tuple[str, str]] = {
    "footnote_reference": (
        r"\[\^[^\]]*\]",
        "Markdown footnote reference [^…] left in the text: its note belongs to the footnotes",
    ),
    "emphasis_marker": (
        r"\*\*",
        "Markdown bold marks ** left in the text",
    ),
    "placeholder_heading": (
        r"\(XXXX\)",
        "bundestag/gesetze's (XXXX) mark of an unlabelled heading left in the text",
    ),
}

# Chunks may exceed the configured max by this fraction: the chunker keeps a sentence whole, and
# the token counts of the chunker and of the validator may differ slightly.
DEFAULT_TOKEN_MARGIN = 0.10


def _gx():
    import great_expectations as gx
    import great_expectations.expectations as gxe
    from great_expectations.expectations.row_conditions import Column

    return gx, gxe, Column


def _suite(name: str, expectations: list[Any], **meta: Any) -> ExpectationSuite:
    # Expectations go through the constructor: ``suite.add_expectation`` looks up the suite in the
    # current data context's store and raises DataContextRequiredError when no context exists yet.
    gx, _, _ = _gx()
    return gx.ExpectationSuite(name=name, expectations=expectations, meta=dict(meta) if meta else None)


def count_bounds(previous_count: int, tolerance: float) -> tuple[int, int]:
    """Row-count bounds within ±tolerance of ``previous_count`` (inclusive, integer rows)."""
    if previous_count < 0 or not 0 <= tolerance < 1:
        raise ValueError(f"bad previous_count={previous_count} / tolerance={tolerance}")
    eps = 1e-9  # 100 * 0.98 == 98.00000000000001 must still allow 98
    return (
        math.ceil(previous_count * (1 - tolerance) - eps),
        math.floor(previous_count * (1 + tolerance) + eps),
    )


def articles_suite(previous_count: int | None = None, tolerance: float = 0.02, *,
                   allow_pending: bool = False) -> ExpectationSuite:
    """Suite for the prepared articles frame (``pipelines.validation.prepare_articles_frame``).

    ``allow_pending``: accept status ``pending`` (German placeholder §§, see :data:`PENDING`)."""
    statuses = [*STATUSES, PENDING] if allow_pending else list(STATUSES)
    _, gxe, Column = _gx()
    in_force = Column("status") == "in_force"
    # Rows read from a PDF carry their page: the checks of what a PDF reading can get wrong (a unit
    # that lost its structure headings, page headers, footers, superscripts and ISAP markers in the
    # text) apply to them — every Polish row and the BGB PDF's. A Markdown source marks its headings
    # and has no pages: its rows (page_start null) get the Markdown residue checks instead, and may
    # stand outside any structure heading, as 70 % of German acts print their §§ (no Abschnitte) and
    # the Artikel beside an Artikel that holds §§ do (measured on the 6,636 acts of bundestag/gesetze).
    from_pdf = Column("page_start").is_not_null()
    from_markdown = Column("page_start").is_null()
    # text before the first numbered unit (the GG's Eingangsformel and Präambel: sort_key < 1000,
    # i.e. before Art. 1) stands outside the structure; every numbered unit read from a PDF must have a path
    numbered = (Column("sort_key") >= 1000) & from_pdf
    ex: list[Any] = [
        gxe.ExpectColumnValuesToBeUnique(
            column="id", meta={"reason": "article ids must be unique: they are the join key across versions"}
        ),
    ]
    for col, why in (
        ("id", "every article needs its id for joins and diffs"),
        ("number", "the article number is how lawyers cite the article"),
        ("status", "status decides whether the text is in force"),
        ("content_hash", "content_hash drives change detection and the diff"),
        ("sort_key", "sort_key orders articles; a missing key hides a misparsed number"),
    ):
        ex.append(gxe.ExpectColumnValuesToNotBeNull(column=col, meta={"reason": why}))
    ex += [
        gxe.ExpectColumnValuesToBeInSet(
            column="status", value_set=statuses,
            meta={"reason": f"status must be one of {', '.join(statuses)} (uchylony / utracił moc / pominięty; "
                            "weggefallen / aufgehoben are repealed)"},
        ),
        gxe.ExpectColumnValuesToNotBeNull(
            column="text", row_condition=in_force,
            meta={"reason": "an article in force must have text (only repealed articles may be empty, and pending German §§)"},
        ),
        gxe.ExpectColumnValuesToMatchRegex(
            column="text", regex=r"\S", row_condition=in_force,
            meta={"reason": "an article in force must have non-empty text (only repealed articles may be empty, "
                            "and pending German §§)"},
        ),
        gxe.ExpectColumnValuesToBeIncreasing(
            column="sort_key", strictly=True,
            meta={"reason": "sort_key (base*1000 + superscript) must strictly increase in document order; "
                            "a jump means a misread number, e.g. superscript 109¹ read as 1091"},
        ),
        gxe.ExpectColumnValuesToBeBetween(
            column="path_depth", min_value=1, row_condition=numbered,
            meta={"reason": "every article sits in the hierarchy (book/title/...); an empty path means the "
                            "structure parser lost the headings"},
        ),
    ]
    for col in ("text", "text_pending"):
        for check, (regex, why) in RESIDUE_PATTERNS.items():
            ex.append(gxe.ExpectColumnValuesToNotMatchRegex(
                column=col, regex=regex, row_condition=from_pdf, meta={"reason": why, "check": check},
            ))
        for check, (regex, why) in MARKDOWN_RESIDUE_PATTERNS.items():
            ex.append(gxe.ExpectColumnValuesToNotMatchRegex(
                column=col, regex=regex, row_condition=from_markdown, meta={"reason": why, "check": check},
            ))
    if previous_count is not None:
        lo, hi = count_bounds(previous_count, tolerance)
        ex.append(gxe.ExpectTableRowCountToBeBetween(
            min_value=lo, max_value=hi,
            meta={"reason": f"article count must stay within ±{tolerance:.0%} of the previous version "
                            f"({previous_count}); a larger swing means articles were lost or split"},
        ))
    return _suite("articles", ex, previous_count=previous_count, tolerance=tolerance, allow_pending=allow_pending)


def chunks_suite(min_tokens: int, max_tokens: int, *, margin: float = DEFAULT_TOKEN_MARGIN) -> ExpectationSuite:
    """Suite for the chunks frame.

    ``min_tokens`` is the chunker's target, not a hard floor: a short article is one short chunk,
    so the lower bound is 1 token. The upper bound is ``max_tokens`` plus ``margin``.
    """
    if not 1 <= min_tokens <= max_tokens:
        raise ValueError(f"need 1 <= min_tokens <= max_tokens, got {min_tokens}, {max_tokens}")
    _, gxe, _ = _gx()
    upper = max_tokens + max(1, math.ceil(max_tokens * margin))
    ex = [
        gxe.ExpectColumnValuesToBeUnique(
            column="chunk_id", meta={"reason": "chunk ids must be unique: they key embeddings and search hits"}
        ),
        gxe.ExpectColumnValuesToNotBeNull(
            column="article_id", meta={"reason": "every chunk must point back to its article for citations"}
        ),
        gxe.ExpectColumnValuesToNotBeNull(column="text", meta={"reason": "a chunk without text cannot be embedded"}),
        gxe.ExpectColumnValuesToMatchRegex(
            column="text", regex=r"\S", meta={"reason": "an empty chunk wastes an embedding and pollutes search"}
        ),
        gxe.ExpectColumnValuesToNotBeNull(column="token_count", meta={"reason": "token_count is needed to budget context"}),
        gxe.ExpectColumnValuesToBeBetween(
            column="token_count", min_value=1, max_value=upper,
            meta={"reason": f"chunks must hold 1..{upper} tokens (max {max_tokens} + margin); a larger chunk "
                            "is truncated by the embedding model"},
        ),
    ]
    return _suite("chunks", ex, min_tokens=min_tokens, max_tokens=max_tokens, max_with_margin=upper)


def nodes_suite() -> ExpectationSuite:
    """Suite for the hierarchy nodes frame."""
    _, gxe, _ = _gx()
    ex = [
        gxe.ExpectColumnValuesToBeUnique(
            column="id", meta={"reason": "node ids must be unique: parent_id links and article joins use them"}
        ),
        gxe.ExpectColumnValuesToNotBeNull(column="id", meta={"reason": "every node needs an id"}),
        gxe.ExpectColumnValuesToNotBeNull(column="level", meta={"reason": "every node needs a hierarchy level"}),
        gxe.ExpectColumnValuesToBeInSet(
            column="level", value_set=list(LEVELS),
            meta={"reason": f"level must be one of {', '.join(LEVELS)}: consumers switch on it"},
        ),
    ]
    return _suite("nodes", ex)


BENCHMARKS = ("pl_exams", "gerlayqa")
BENCHMARK_LANGUAGES = ("pl", "de")
OPTION_LETTERS = ("A", "B", "C", "D")


def benchmark_questions_suite(min_rows: int | None = None) -> ExpectationSuite:
    """Suite for the prepared benchmark-questions frame
    (``pipelines.benchmarks.benchmark_table.prepare_benchmark_frame``), which adds:

    * ``option_count`` — number of options (0 when ``options`` is null);
    * ``gold_option_listed`` — the gold letter is one of the options' letters (True without options);
    * ``gold_ref_count`` / ``unresolved_ref_count`` — parsed gold references, and those whose act
      could not be determined (null ``act_id``).

    ``min_rows`` guards against a source silently dropping out of the nightly build.
    """
    _, gxe, Column = _gx()
    exam = Column("benchmark") == "pl_exams"
    ex: list[Any] = [
        gxe.ExpectColumnValuesToBeUnique(
            column="id", meta={"reason": "question ids must be unique: answer jobs and metrics key results by id"}
        ),
        gxe.ExpectColumnValuesToBeUnique(
            column="text_hash", meta={"reason": "the builder keeps one row per distinct question (text + options); "
                                                "a duplicate would count the same question twice in every metric"}
        ),
    ]
    for col, why in (
        ("id", "every question needs its id"),
        ("benchmark", "metrics are reported per benchmark"),
        ("source", "the source file says where to look when a row is wrong"),
        ("question_id", "the question number ties the row back to its source"),
        ("language", "retrievers and answer prompts switch on the language"),
        ("question", "a question without text cannot be asked"),
        ("legal_basis", "the raw legal basis is the gold standard the refs are parsed from"),
        ("text_hash", "text_hash is the dedup key"),
    ):
        ex.append(gxe.ExpectColumnValuesToNotBeNull(column=col, meta={"reason": why}))
    ex += [
        gxe.ExpectColumnValuesToBeInSet(
            column="benchmark", value_set=list(BENCHMARKS), meta={"reason": "consumers switch on the benchmark name"}
        ),
        gxe.ExpectColumnValuesToBeInSet(
            column="language", value_set=list(BENCHMARK_LANGUAGES),
            meta={"reason": "only Polish and German questions are loaded; another value is a loader bug"},
        ),
        gxe.ExpectColumnValuesToMatchRegex(
            column="question", regex=r"\S", meta={"reason": "an empty question text means the parser lost it"}
        ),
        gxe.ExpectColumnValuesToBeInSet(
            column="gold_option", value_set=list(OPTION_LETTERS),
            meta={"reason": "the gold option is one letter A–D (null only for benchmarks without options)"},
        ),
        gxe.ExpectColumnValuesToNotBeNull(
            column="gold_option", row_condition=exam,
            meta={"reason": "every exam question has a correct option in the answer key"},
        ),
        gxe.ExpectColumnValuesToBeBetween(
            column="option_count", min_value=2, max_value=len(OPTION_LETTERS), row_condition=exam,
            meta={"reason": "exam questions have 2–4 options (3 since 2012); fewer means options were "
                            "merged into the question text or lost at a page break"},
        ),
        gxe.ExpectColumnValuesToBeInSet(
            column="gold_option_listed", value_set=[True],
            meta={"reason": "the gold letter must be one of the question's options, or the answer key was "
                            "paired with the wrong question"},
        ),
        gxe.ExpectColumnValuesToMatchRegex(
            column="question_id", regex=r"^\d+$", row_condition=exam,
            meta={"reason": "exam questions are numbered; a non-number means the numbering was misread"},
        ),
        gxe.ExpectColumnValuesToBeBetween(
            column="gold_ref_count", min_value=1,
            meta={"reason": "every question cites at least one unit; zero means the legal-basis parser did "
                            "not understand the citation and retrieval cannot be scored"},
        ),
        gxe.ExpectColumnValuesToBeBetween(
            column="unresolved_ref_count", max_value=0,
            meta={"reason": "every cited unit should name its act (k.c., ustawy z dnia … o …); an unresolved "
                            "act means an abbreviation missing from pipelines.benchmarks.legal_basis.CODES"},
        ),
    ]
    if min_rows is not None:
        ex.append(gxe.ExpectTableRowCountToBeBetween(
            min_value=min_rows,
            meta={"reason": f"the benchmark table should hold at least {min_rows} questions; fewer means a "
                            "source file went missing or a loader stopped early"},
        ))
    return _suite("benchmark_questions", ex, min_rows=min_rows)


# sections of court decisions (pipelines/case_law/sections.py: SECTION_HEADINGS + rubrum/body)
CASE_SECTIONS = ("leitsatz", "orientierungssatz", "tenor", "tatbestand", "entscheidungsgruende", "gruende",
                 "tatbestand_und_entscheidungsgruende", "rechtsmittelbelehrung", "normenkette",
                 "abweichende_meinung", "rubrum", "body")
# sections of Polish judgments (pipelines/case_law/pl/sections.py: PL_SECTIONS)
PL_CASE_SECTIONS = ("komparycja", "teza", "sentencja", "pouczenie", "uzasadnienie", "rozwazania", "zdanie_odrebne",
                    "body")
# the suite's vocabulary: one chunk table per jurisdiction, one suite for both
ALL_CASE_SECTIONS = tuple(dict.fromkeys(CASE_SECTIONS + PL_CASE_SECTIONS))


def case_chunks_suite(max_tokens: int, *, margin: float = DEFAULT_TOKEN_MARGIN) -> ExpectationSuite:
    """Suite for the prepared case-chunks frame (``pipelines.case_law.chunks.prepare_case_chunks_frame``),
    which adds ``span_length`` (char_end - char_start) and ``span_matches_text`` (the text is as long
    as its span, i.e. offsets and text were not taken from different cleanings)."""
    _, gxe, _ = _gx()
    upper = max_tokens + max(1, math.ceil(max_tokens * margin))
    ex: list[Any] = [
        gxe.ExpectColumnValuesToBeUnique(
            column="chunk_id", meta={"reason": "chunk ids key embeddings and search hits; a duplicate means a case "
                                               "version was chunked twice"}),
    ]
    for col, why in (
        ("chunk_id", "every chunk needs its id"),
        ("case_id", "a hit must lead back to its decision"),
        ("case_sha256", "the case version fixes what the offsets point into"),
        ("court_id", "court is how users filter and cite decisions"),
        ("date", "the decision date is part of every citation of a decision"),
        ("file_number", "the Aktenzeichen (sygnatura) is how a decision is cited"),
        ("section", "the section says whether a passage is claim (Tatbestand, uzasadnienie) or holding "
                    "(Gründe, rozważania)"),
        ("text", "a chunk without text cannot be embedded"),
        ("token_count", "token_count is needed to budget context"),
        ("content_hash", "content_hash keys the embedding cache"),
    ):
        ex.append(gxe.ExpectColumnValuesToNotBeNull(column=col, meta={"reason": why}))
    ex += [
        gxe.ExpectColumnValuesToBeInSet(
            column="section", value_set=list(ALL_CASE_SECTIONS),
            meta={"reason": "sections come from a fixed vocabulary; consumers filter on them"}),
        gxe.ExpectColumnValuesToMatchRegex(
            column="text", regex=r"\S", meta={"reason": "an empty chunk wastes an embedding and pollutes search"}),
        gxe.ExpectColumnValuesToNotMatchRegex(
            column="text", regex=r"<\s*/?\s*(?:p|div|span|br|h[1-6]|dl|dt|dd|a|rd|sup)\b[^>]*>|\[/?ref[=\]]",
            meta={"reason": "HTML tags or [ref] markers left in chunk text: the Legal HTML (SAOS textContent) "
                            "was not cleaned"}),
        gxe.ExpectColumnValuesToMatchRegex(
            column="content_hash", regex=r"^[0-9a-f]{64}$", meta={"reason": "content_hash is a sha256 hex digest"}),
        gxe.ExpectColumnValuesToBeBetween(
            column="token_count", min_value=1, max_value=upper,
            meta={"reason": f"chunks must hold 1..{upper} tokens (max {max_tokens} + margin); a larger chunk is "
                            "truncated by the embedding model"}),
        gxe.ExpectColumnValuesToBeBetween(
            column="char_start", min_value=0, meta={"reason": "offsets into the clean text are non-negative"}),
        gxe.ExpectColumnValuesToBeBetween(
            column="span_length", min_value=1, meta={"reason": "char_end must lie after char_start"}),
        gxe.ExpectColumnValuesToBeInSet(
            column="span_matches_text", value_set=[True],
            meta={"reason": "text must be exactly clean_text[char_start:char_end]; a length mismatch means offsets "
                            "and text disagree and highlighting would be wrong"}),
    ]
    return _suite("case_chunks", ex, max_tokens=max_tokens, max_with_margin=upper)
