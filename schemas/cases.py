"""Arrow schemas of the case-law store (court decisions), starting with Open Legal Data.

Why a separate module: the statute schemas in ``schemas/arrow.py`` describe one consolidated act
per version; case law is a stream of independently updated records (one row per case *version*,
deduplicated on read) plus a quarantine of records we refused. Field ``description`` metadata
travels into the Parquet files like the statute schemas'.

Rows are written by ``connectors/case_store.py``; ``schemas.arrow.conform`` casts to these.
"""

from __future__ import annotations

import pyarrow as pa

CASES_ACT = "de:cases"  # the German case-law collection in search (not a registry act: no versions of a text)
PL_CASES_ACT = "pl:cases"  # the Polish case-law collection (SAOS judgments)


def _f(name: str, type_: pa.DataType, doc: str, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={"description": doc})


_TS = pa.timestamp("us", tz="UTC")  # the API sends milli- or microseconds; never lose either

CASES = pa.schema([
    _f("source", pa.string(), "provider, e.g. 'openlegaldata'", nullable=False),
    _f("case_id", pa.int64(), "the provider's case id (Open Legal Data: /api/cases/<id>/)", nullable=False),
    _f("slug", pa.string(), "provider slug (court-date-file number)"),
    _f("court_id", pa.int64(), "provider court id (joins COURTS.court_id)", nullable=False),
    _f("court_name", pa.string(), "court name as embedded in the case record"),
    _f("court_slug", pa.string(), "court slug as embedded in the case record"),
    _f("court_jurisdiction", pa.string(), "e.g. 'Ordentliche Gerichtsbarkeit' (as sent)"),
    _f("court_level_of_appeal", pa.string(), "e.g. 'Bundesgericht' (as sent)"),
    _f("court_json", pa.string(), "the embedded court object as sent (JSON), null if only an id was sent"),
    _f("file_number", pa.string(), "Aktenzeichen as defined by the court, e.g. 'VI ZR 194/17'", nullable=False),
    _f("date", pa.date32(), "decision/publication date as in the source", nullable=False),
    _f("created_date", _TS, "when the provider created the record"),
    _f("updated_date", _TS, "provider's last change: the sync cursor and the dedup order", nullable=False),
    _f("updated_date_raw", pa.string(), "updated_date exactly as sent (echoed back in the cursor filter)", nullable=False),
    _f("type", pa.string(), "decision type (Urteil, Beschluss, ...)"),
    _f("ecli", pa.string(), "European Case Law Identifier; null when the provider sends ''"),
    _f("content", pa.string(), "full text as sent (Legal HTML for Open Legal Data)", nullable=False),
    _f("content_sha256", pa.string(), "sha256 of content (UTF-8): changes iff the text changes", nullable=False),
    _f("record_sha256", pa.string(), "sha256 of the whole record as sent (canonical JSON): a re-read "
       "with the same value is 'unchanged' and not stored again", nullable=False),
    _f("extra_json", pa.string(), "fields this connector does not know, kept verbatim (JSON object)", nullable=False),
    _f("source_url", pa.string(), "the API page URL the record came from", nullable=False),
    _f("raw_sha256", pa.string(), "sha256 of that page's body in the raw landing zone", nullable=False),
    _f("fetched_at", _TS, "when the page was fetched", nullable=False),
])

COURTS = pa.schema([
    _f("source", pa.string(), "provider, e.g. 'openlegaldata'", nullable=False),
    _f("court_id", pa.int64(), "provider court id", nullable=False),
    _f("name", pa.string(), "court name", nullable=False),
    _f("code", pa.string(), "court code, e.g. 'BGH'"),
    _f("slug", pa.string(), "court slug"),
    _f("court_type", pa.string(), "AG, LG, OLG, BGH, ..."),
    _f("city", pa.string(), "city (id or name, as sent, as text)"),
    _f("state", pa.string(), "state (id or name, as sent, as text)"),
    _f("jurisdiction", pa.string(), "jurisdiction, as sent"),
    _f("level_of_appeal", pa.string(), "level of appeal, as sent"),
    _f("updated_date", _TS, "provider's last change"),
    _f("extra_json", pa.string(), "fields this connector does not know, kept verbatim (JSON object)", nullable=False),
    _f("source_url", pa.string(), "the API page URL the record came from", nullable=False),
    _f("raw_sha256", pa.string(), "sha256 of that page's body in the raw landing zone", nullable=False),
    _f("fetched_at", _TS, "when the page was fetched", nullable=False),
])

QUARANTINE = pa.schema([
    _f("quarantine_id", pa.string(), "sha256 of kind + raw_record: the same bad record is kept once", nullable=False),
    _f("source", pa.string(), "provider, e.g. 'openlegaldata'", nullable=False),
    _f("kind", pa.string(), "case | court | judgment (SAOS) | page (a page whose envelope could not be read)", nullable=False),
    _f("record_id", pa.string(), "the record's id if one could be read, as text"),
    _f("reasons", pa.list_(pa.string()), "why it was refused, one entry per problem", nullable=False),
    _f("raw_record", pa.string(), "the record's text as received (pages: the first 4 KB)", nullable=False),
    _f("source_url", pa.string(), "the API page URL", nullable=False),
    _f("page", pa.int32(), "page number requested"),
    _f("record_index", pa.int32(), "0-based position in the page's results; null for kind=page"),
    _f("raw_sha256", pa.string(), "sha256 of the page body in the raw landing zone", nullable=False),
    _f("quarantined_at", _TS, "when it was first refused", nullable=False),
])

# Retrieval chunks of decisions (pipelines/case_law/chunks.py). Offsets are into the decision's
# clean text (pipelines/case_law/html_text.py), a pure function of CASES.content, so
# (case_id, case_sha256, char_start, char_end) locates a chunk without storing the whole text.
CASE_CHUNKS = pa.schema([
    _f("chunk_id", pa.string(), "<source>:<case_id>:<case_sha256[:12]>:<chunk_index 4 digits>", nullable=False),
    _f("source", pa.string(), "provider, e.g. 'openlegaldata'", nullable=False),
    _f("case_id", pa.int64(), "the provider's case id (joins CASES.case_id)", nullable=False),
    _f("case_sha256", pa.string(), "CASES.content_sha256 of the case version chunked", nullable=False),
    _f("slug", pa.string(), "provider slug"),
    _f("court_id", pa.int64(), "provider court id", nullable=False),
    _f("court_name", pa.string(), "court name: the case record's, else the synced court list's by "
                                  "court id, else by the case slug's court part (pipelines/case_law/court_names.py)"),
    _f("date", pa.date32(), "decision date", nullable=False),
    _f("file_number", pa.string(), "Aktenzeichen, e.g. 'VIII ZR 127/17'", nullable=False),
    _f("ecli", pa.string(), "European Case Law Identifier, null when the provider has none"),
    _f("decision_type", pa.string(), "Urteil, Beschluss, ... (CASES.type)"),
    _f("section", pa.string(), "tenor | tatbestand | entscheidungsgruende | gruende | leitsatz | "
                               "orientierungssatz | rechtsmittelbelehrung | ... | rubrum | body", nullable=False),
    _f("section_label", pa.string(), "the section heading as printed ('G r ü n d e :'), '' for rubrum/body"),
    _f("section_index", pa.int32(), "0-based position of the section in the decision", nullable=False),
    _f("chunk_index", pa.int32(), "0-based position of the chunk in the decision", nullable=False),
    _f("section_chunk_index", pa.int32(), "0-based position of the chunk in its section", nullable=False),
    _f("chunk_count", pa.int32(), "chunks of this case version", nullable=False),
    _f("char_start", pa.int32(), "start offset in the clean text (inclusive)", nullable=False),
    _f("char_end", pa.int32(), "end offset in the clean text (exclusive)", nullable=False),
    _f("rn_first", pa.string(), "first Randnummer the chunk covers (null if none)"),
    _f("rn_last", pa.string(), "last Randnummer the chunk covers (null if none)"),
    _f("text", pa.string(), "clean_text[char_start:char_end]", nullable=False),
    _f("token_count", pa.int32(), "spaCy blank('de') tokens", nullable=False),
    _f("content_hash", pa.string(), "sha256 of text (UTF-8): keys the embedding cache", nullable=False),
    _f("chunker_version", pa.string(), "chunker/cleaner version: a change re-chunks every case", nullable=False),
])

# Polish judgments from SAOS (saos.org.pl, the dump endpoint /api/dump/judgments). One row per
# judgment *version* as fetched; readers keep the newest fetch per judgment_id. SAOS's dump records
# carry no modification time (sinceModificationDate filters server-side only), so the fetch time
# orders versions and record_sha256 tells whether a re-read changed anything.
SAOS_JUDGMENTS = pa.schema([
    _f("source", pa.string(), "provider: 'saos'", nullable=False),
    _f("judgment_id", pa.int64(), "SAOS judgment id (/api/judgments/<id>)", nullable=False),
    _f("court_type", pa.string(), "COMMON | SUPREME | ADMINISTRATIVE | CONSTITUTIONAL_TRIBUNAL | "
                                  "NATIONAL_APPEAL_CHAMBER (as sent)", nullable=False),
    _f("judgment_type", pa.string(), "SENTENCE | DECISION | RESOLUTION | REASONS | REGULATION (as sent)",
       nullable=False),
    _f("case_numbers", pa.list_(pa.string()), "sygnatury akt, e.g. ['II AKa 105/11'], at least one",
       nullable=False),
    _f("judgment_date", pa.date32(), "date of the judgment", nullable=False),
    _f("division_id", pa.int64(), "SAOS court division id (common courts), null when not sent"),
    _f("judges", pa.list_(pa.string()), "judges' names as sent", nullable=False),
    _f("keywords", pa.list_(pa.string()), "SAOS keywords (hasła tematyczne)", nullable=False),
    _f("text_content", pa.string(), "the judgment's full text as sent (HTML)", nullable=False),
    _f("content_sha256", pa.string(), "sha256 of text_content (UTF-8)", nullable=False),
    _f("record_sha256", pa.string(), "sha256 of the whole record as sent (canonical JSON): a re-read "
       "with the same value is 'unchanged' and not stored again", nullable=False),
    _f("referenced_regulations_json", pa.string(), "SAOS's referencedRegulations list as sent (JSON): "
       "the acts and articles SAOS says the judgment cites", nullable=False),
    _f("source_json", pa.string(), "the record's source object as sent (JSON: court portal URL, ids)"),
    _f("extra_json", pa.string(), "every other field of the record, verbatim (JSON object)", nullable=False),
    _f("source_url", pa.string(), "the API page URL the record came from", nullable=False),
    _f("raw_sha256", pa.string(), "sha256 of that page's body in the raw landing zone", nullable=False),
    _f("page", pa.int32(), "the dump page number requested"),
    _f("fetched_at", _TS, "when the page was fetched: orders versions of one judgment", nullable=False),
])

SCHEMAS: dict[str, pa.Schema] = {"cases": CASES, "courts": COURTS, "quarantine": QUARANTINE,
                                 "case_chunks": CASE_CHUNKS, "saos_judgments": SAOS_JUDGMENTS}
