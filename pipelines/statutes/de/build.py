"""German statutes as a published corpus: parse → validate → chunk → diff → publish, per act version.

The German twin of :mod:`pipelines.statutes.pl.build` over the same :class:`~pipelines.statutes.store.CorpusStore`
(``corpus/de/<act>/<version>/``), so search, staleness and the API read German acts like Polish ones.

Sources (read-only, under ``LEXPIPE_SAMPLE_DIR``): the bundestag/gesetze Markdown laws
``de/gesetze/<slug>.md`` (BGB, GG, HGB, StGB, StPO, ZPO; the text state is the newest amending act
in the metadata), older text states of the same laws from the bundestag/gesetze git history
``de/gesetze-versions/<slug>_<YYYY-MM-DD>.md`` (dated by the file name: the metadata of an older
file may name an amendment "noch nicht berücksichtigt") and the official BGB PDF
``de/pdf/*_bgb_gii_<date>.pdf`` (text state in the file name). The BGB therefore has four versions:
2012-12-02 and 2013-01-11 (§ 1631d Beschneidung added), the Markdown's (~2021-12-21) and the PDF's
(2024-11-28); :func:`diff_step` between consecutive ones lists the real amendments (GbR/MoPeG,
Vormundschaftsrecht, Stiftungsrecht between the last two).

Why a separate content hash for German §§: the two BGB sources print the same wording with other
quotes, dashes and spaces, so the hash is over :func:`~pipelines.statutes.de.structure.normalize_text`
(see ``finish_section``) and the diff compares normalised texts; layout never counts as an amendment.

Chunks (:func:`build_german_chunks`) are one per Absatz (a § without Absätze is one chunk), long
ones packed by sentences, as in the Polish chunker. What is indexed with each chunk is its
``heading_path``: the structure headings (words only, no "Buch 2 / Titel 5" labels, which every
§ of that unit shares and which carry no meaning) and the § label and title — e.g.
``Mietvertrag, Pachtvertrag › … › Kündigung des Vermieters › § 573b Teilkündigung des Vermieters``.
Titles name the topic a layperson asks about ("Kündigung", "Mietminderung") where the § text
speaks in legal terms; ``bench/gerlayqa.py --heading-study`` measures the variants.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from core.layout import Layout
from pipelines.chunking import article_units, chunk_article
from pipelines.statutes.store import CorpusStore
from pipelines.statutes.de.sources_classify import EDITORIAL, RESIDUE, Hunk, diff_hunks
from pipelines.statutes.de.markdown import PARSER_VERSION as MARKDOWN_PARSER_VERSION, parse_markdown
from pipelines.statutes.de.model import GermanStatute, GermanStatuteError, german_acts
from pipelines.statutes.de.pdf import PARSER_VERSION as PDF_PARSER_VERSION, parse_gii_pdf
from pipelines.statutes.de.structure import normalize_text
from pipelines.statutes.de.tables import acts_table, articles_table, nodes_table
from pipelines.statutes.publish import publish_version
from pipelines.validation import ValidationReport, validate_table
from pipelines.statutes.diff import diff_versions, word_diff
from schemas.acts import registry
from schemas.arrow import ACTS, CHUNKS, from_rows
from schemas.expectations import articles_suite, chunks_suite, nodes_suite

DIFF_KINDS = ("added", "changed", "repealed", "removed", "editorial")
CHUNKER_VERSION = "de-chunk-1"  # one chunk per Absatz; heading = structure headings + § label and title
HEADING_MODES = ("headings", "path", "section", "none")


class GermanBuildError(RuntimeError):
    """A German act version could not be built or failed its checks (message names source and reason)."""


# ----------------------------------------------------------------------------------------------
# sources


VERSIONS_DIR = "gesetze-versions"  # de/gesetze-versions/<slug>_<YYYY-MM-DD>.md: older text states


@dataclass(frozen=True)
class GermanSource:
    act_id: str  # de:bgb
    format: str  # markdown | pdf
    path: Path
    dated: str | None = None  # the text-state date of a dated file (de/gesetze-versions), else from the source

    @property
    def parser_version(self) -> str:
        return MARKDOWN_PARSER_VERSION if self.format == "markdown" else PDF_PARSER_VERSION


def dated_sources(versions_dir: Path, act_id: str, stem: str) -> list[GermanSource]:
    """The dated Markdown files ``<stem>_<YYYY-MM-DD>.md`` of one act, oldest first. A file of the
    act whose name carries no valid date (``bgb_2012-13-01.md``, ``bgb_20121202.md``) is an error
    naming it: it would be published undated. ``<stem>_<letters>…`` is another act's file."""
    out = []
    for p in sorted(versions_dir.glob(f"{stem}_*.md")):
        rest = p.name[len(stem) + 1:-len(".md")]
        if not rest[:1].isdigit():
            continue
        try:
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", rest):
                raise ValueError("expected YYYY-MM-DD")
            dt.date.fromisoformat(rest)
        except ValueError as exc:
            raise GermanBuildError(f"{p}: {rest!r} in the file name is not a text-state date "
                                   f"({stem}_<YYYY-MM-DD>.md): {exc}") from exc
        out.append(GermanSource(act_id, "markdown", p, dated=rest))
    return out


def german_sources(sample_dir: Path, acts: tuple[str, ...] | None = None) -> list[GermanSource]:
    """Every German source of the sample dir, per act oldest first: the dated older text states
    ``de/gesetze-versions/<sample_stem>_<YYYY-MM-DD>.md`` (when the folder exists), the Markdown law
    ``de/gesetze/<sample_stem>.md`` of each German act of the registry (the six of
    ``schemas/acts.toml``), then the BGB PDF(s).

    ``acts`` (e.g. ``("de:gg",)``) restricts the list. A missing ``de/gesetze`` folder is an error naming it."""
    sample_dir = Path(sample_dir)
    md_dir, pdf_dir = sample_dir / "de" / "gesetze", sample_dir / "de" / "pdf"
    versions_dir = sample_dir / "de" / VERSIONS_DIR
    if not md_dir.is_dir():
        raise GermanBuildError(f"{md_dir}: folder of bundestag/gesetze laws not found")
    out = []
    for a in registry().of_jurisdiction("de"):
        if versions_dir.is_dir():
            out += dated_sources(versions_dir, a.id, a.sample_stem)
        if (md_dir / f"{a.sample_stem}.md").is_file():
            out.append(GermanSource(a.id, "markdown", md_dir / f"{a.sample_stem}.md"))
    bgb = german_acts().get("bgb")
    if pdf_dir.is_dir() and bgb is not None:
        out += [GermanSource(bgb.act_id, "pdf", p) for p in sorted(pdf_dir.glob("*_bgb_gii_*.pdf"))]
    return [s for s in out if acts is None or s.act_id in acts]


def parse_source(source: GermanSource, *, workers: int = 2) -> GermanStatute:
    act = next(a for a in german_acts().values() if a.act_id == source.act_id)
    if source.format == "markdown":
        return parse_markdown(source.path, act=act,
                              version=dt.date.fromisoformat(source.dated) if source.dated else None)
    if source.format == "pdf":
        return parse_gii_pdf(source.path, act=act, workers=workers)
    raise GermanBuildError(f"{source.path}: unknown source format {source.format!r}")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ----------------------------------------------------------------------------------------------
# parse


@dataclass
class GermanParseOutcome:
    act_id: str
    version: str
    source: GermanSource
    directory: Path
    sections: int
    seconds: float
    reused: bool
    source_sha256: str
    stats: dict = field(default_factory=dict)


def _find_build(store: CorpusStore, act_id: str, key: dict, version: str | None = None) -> str | None:
    """A staged or published version of ``act_id`` built from the same source bytes and parser
    (and, for a dated source, of that date: the same bytes renamed to another date are another version)."""
    act_dir = store.layout.act_dir(act_id)
    candidates = [p for p in (act_dir / ".staging").glob("*") if p.is_dir()] if (act_dir / ".staging").exists() else []
    candidates += [act_dir / v for v in store.published_versions(act_id)]
    for d in candidates:
        if version is not None and d.name != version:
            continue
        m = store.manifest(d) or _read_json(d / "parse.json")
        if all(m.get(k) == v for k, v in key.items()) and (d / "articles.parquet").exists():
            return d.name
    return None


def parse_step(layout: Layout, source: GermanSource, *, workers: int = 2) -> GermanParseOutcome:
    """Parse one source into articles/nodes/acts in staging, or reuse an identical build."""
    store = CorpusStore(layout)
    sha = _sha256(source.path)
    key = {"source_sha256": sha, "parser_version": source.parser_version}
    reused = _find_build(store, source.act_id, key, source.dated)
    if reused is not None:
        built = store.built_dir(source.act_id, reused)
        m = store.manifest(built) or _read_json(built / "parse.json")
        return GermanParseOutcome(source.act_id, reused, source, built, m.get("stats", {}).get("sections", 0),
                                  0.0, True, sha, m.get("stats", {}))
    t0 = time.perf_counter()
    try:
        st = parse_source(source, workers=workers)
    except GermanStatuteError as exc:
        raise GermanBuildError(f"{source.act_id} from {source.path}: {exc}") from exc
    seconds = time.perf_counter() - t0
    version = st.version.isoformat()
    store.discard_staging(source.act_id, version)  # never mix files of two different sources
    articles = articles_table(st)
    store.stage_table(source.act_id, version, "articles", articles)
    store.stage_table(source.act_id, version, "nodes", nodes_table(st))
    acts = acts_table(st, source_sha256=sha, source_url=str(source.path))
    acts = acts.set_column(acts.schema.get_field_index("parser_version"), ACTS.field("parser_version"),
                           pa.array([source.parser_version], pa.string()))
    store.stage_table(source.act_id, version, "acts", acts)
    statuses = articles["status"].to_pylist()
    stats = {"sections": articles.num_rows, "in_force": statuses.count("in_force"),
             "repealed": statuses.count("repealed"), "pending": statuses.count("pending"),
             "structure_units": len(st.structure), "source_format": source.format,
             "source_file": source.path.name, "pages": st.pages}
    store.stage_json(source.act_id, version, "parse.json",
                     {**key, "stats": stats, "parse_seconds": round(seconds, 3)})
    return GermanParseOutcome(source.act_id, version, source, store.staging(source.act_id, version),
                              articles.num_rows, seconds, False, sha, stats)


# ----------------------------------------------------------------------------------------------
# validate


# How much a German act's § count may grow or shrink per year between two text states, on top of
# ``tolerance``: repealed §§ stay as "(weggefallen)" rows, so the count moves only by inserted §§
# (and the few never printed again). Measured 2012 → 2021 (bundestag/gesetze): BGB 2,633 → 2,756
# (+0.52 %/year), StGB 550 → 575 (+0.49), GG 199 → 204 (+0.31), ZPO 1,248 → 1,277 (+0.25); a flat
# ±2 % would block every 2021 version behind a 2012 one.
COUNT_DRIFT_PER_YEAR = 0.005


def count_tolerance(tolerance: float, previous: str, version: str) -> float:
    """``tolerance`` plus :data:`COUNT_DRIFT_PER_YEAR` per year between the two text states
    (2021-12-21 → 2024-11-28: 2 % + 1.5 % ≈ 3.5 %; 2013-01-11 → 2021-12-21: ≈ 6.5 %)."""
    years = max(0, (dt.date.fromisoformat(version) - dt.date.fromisoformat(previous)).days) / 365.25
    return round(tolerance + COUNT_DRIFT_PER_YEAR * years, 4)


def validate_step(layout: Layout, *, act_id: str, version: str, tolerance: float = 0.02,
                  max_tokens: int | None = None) -> dict[str, ValidationReport]:
    """GX suites on the built version: articles (count within ±:func:`count_tolerance` of the
    previous published version), nodes, and chunks when ``max_tokens`` is given. Never raises; see ``.success``."""
    store = CorpusStore(layout)
    prev = store.previous_version(act_id, version)
    prev_count = store.read(act_id, prev, "articles", published_only=True).num_rows if prev else None
    tol = count_tolerance(tolerance, prev, version) if prev else tolerance
    reports = {
        "articles": validate_table(store.read(act_id, version, "articles"),
                                   articles_suite(prev_count, tol, allow_pending=True),
                                   name=f"articles {act_id} {version}"),
        "nodes": validate_table(store.read(act_id, version, "nodes"), nodes_suite(), name=f"nodes {act_id} {version}"),
    }
    if max_tokens is not None:
        reports["chunks"] = validate_table(store.read(act_id, version, "chunks"), chunks_suite(1, max_tokens),
                                           name=f"chunks {act_id} {version}")
    return reports


def require_valid(reports: dict[str, ValidationReport]) -> None:
    bad = [r for r in reports.values() if not r.success]
    if bad:
        raise GermanBuildError("validation failed, not publishing:\n" + "\n".join(r.summary() for r in bad))


# ----------------------------------------------------------------------------------------------
# chunk


def _structure_words(entry: dict) -> str:
    """A path entry's heading without its label ("Mietvertrag, Pachtvertrag" for "Titel 5 …")."""
    return (entry.get("heading") or "").strip()


def chunk_heading(article: dict, mode: str = "headings") -> str:
    """The context indexed with every chunk of a § (see the module docstring):

    * ``headings`` — structure headings (no labels) › § label and title (the default);
    * ``path`` — the full ``path_text`` (labels included);
    * ``section`` — the § label and title only;
    * ``none`` — the § label only (the number, so a cited § stays findable).
    """
    label = article["number_display"] or article["number"]
    section = f"{label} {article.get('title') or ''}".strip()
    if mode == "headings":
        heads = [h for h in (_structure_words(e) for e in (article.get("path") or [])) if h]
        return " › ".join([*heads, section])
    if mode == "path":
        return article["path_text"] or section
    if mode == "section":
        return section
    if mode == "none":
        return label
    raise ValueError(f"unknown heading mode {mode!r}; use one of {HEADING_MODES}")


def build_german_chunks(articles: pa.Table, *, max_tokens: int, heading: str = "headings") -> pa.Table:
    """CHUNKS table: one chunk per Absatz (or per § without Absätze; a repealed § is one chunk
    with its status note, so "(weggefallen)" stays findable), over-long units split at sentences."""
    rows = []
    for art in articles.to_pylist():
        head = chunk_heading(art, heading)
        units = article_units(art)
        if art["status"] != "in_force":
            units = [art["text"] or art.get("status_note") or art["status"]]
        pieces = [p for unit in units for p in (chunk_article(unit, max_tokens=max_tokens, lang="de") if unit else [])]
        if not pieces:
            pieces = [(art.get("status_note") or art["status"], 1)]
        for i, (text, tokens) in enumerate(pieces):
            rows.append({
                "chunk_id": f"{art['id']}#{i}", "article_id": art["id"], "act_id": art["act_id"],
                "version": art["version"], "chunk_index": i, "chunk_count": len(pieces), "heading_path": head,
                "text": text, "token_count": max(tokens, 1), "status": art["status"],
                "content_hash": hashlib.sha256(f"{head}\n{text}".encode()).hexdigest(),
            })
    return from_rows(rows, CHUNKS)


def chunk_step(layout: Layout, *, act_id: str, version: str, max_tokens: int) -> pa.Table:
    """Chunks of a built version (reused when chunker, max_tokens and source are unchanged)."""
    store = CorpusStore(layout)
    built = store.built_dir(act_id, version)
    if built is None:
        raise GermanBuildError(f"{act_id} {version}: nothing built; run the parse step first")
    parse = store.manifest(built) or _read_json(built / "parse.json")
    info = _read_json(built / "chunk.json")
    if (built / "chunks.parquet").exists() and info == {"max_tokens": max_tokens, "chunker": CHUNKER_VERSION,
                                                       "source_sha256": parse.get("source_sha256")}:
        return store.read(act_id, version, "chunks")
    if built == layout.version_dir(act_id, version):
        store.stage_published_copy(act_id, version)  # re-chunk a published version: publish swaps it whole
    chunks = build_german_chunks(store.read(act_id, version, "articles"), max_tokens=max_tokens)
    store.stage_table(act_id, version, "chunks", chunks)
    store.stage_json(act_id, version, "chunk.json", {"max_tokens": max_tokens, "chunker": CHUNKER_VERSION,
                                                     "source_sha256": parse.get("source_sha256")})
    return chunks


# ----------------------------------------------------------------------------------------------
# diff


def normalised_articles(articles: pa.Table) -> pa.Table:
    """ARTICLES with normalised text (one kind of quote/dash/space): what the German diff compares."""
    texts = [normalize_text(t) if t else t for t in articles["text"].to_pylist()]
    return articles.set_column(articles.schema.get_field_index("text"), articles.schema.field("text"),
                               pa.array(texts, pa.string()))


@dataclass
class GermanDiff:
    act_id: str
    from_version: str
    to_version: str
    table: pa.Table  # schemas.arrow.DIFF

    def counts(self) -> dict[str, int]:
        changes = self.table["change"].to_pylist()
        return {k: changes.count(k) for k in DIFF_KINDS}

    def summary(self) -> str:
        c = self.counts()
        return (f"{self.act_id} {self.from_version} → {self.to_version}: {c['added']} §§ added, "
                f"{c['changed']} changed, {c['repealed']} repealed, {c['removed']} removed without trace, "
                f"{c['editorial']} editorial (same words in another form)")

    def markdown(self) -> str:
        rows = self.table.to_pylist()
        unit = next((a.unit for a in german_acts().values() if a.act_id == self.act_id), "§")
        label = "§" if unit == "§" else "Art."  # the Grundgesetz numbers Artikel
        lines = [f"# {self.summary()}", "",
                 "Texts compared after normalising quotes, dashes and spaces (the two sources print them "
                 "differently), without the publisher's footnotes; `removed`: the § is not printed at all in the "
                 "newer text state; `editorial`: not an amendment — the same words in another form (\"Ort\"/\"Orte\", "
                 "\"Vorschriften finden\"/\"Vorschrift findet\", punctuation; see "
                 "`pipelines.statutes.de.sources_classify`), the same characters spaced otherwise, or a § "
                 "repealed in both versions.", ""]
        for kind in ("added", "repealed", "removed", "changed", "editorial"):
            sel = [r for r in rows if r["change"] == kind]
            if sel:
                lines += [f"## {kind} ({len(sel)})", ""]
                for r in sel:
                    lines += [f"### {label} {r['number']}", "", r["unified_diff"] or "(no text)", ""]
        return "\n".join(lines)


def _respaced(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """The same characters broken into words elsewhere ("Reichs behörden" / "Reichsbehörden": the
    Markdown's wide gaps, closed or not by the file's vocabulary), and no break moved next to a digit
    ("1 000" / "1000", "5 a" / "5a" stay changes: a number could merge with another)."""
    joined = "".join(old)
    if joined != "".join(new):
        return False

    def breaks(words: tuple[str, ...]) -> set[int]:
        out, pos = set(), 0
        for w in words[:-1]:
            pos += len(w)
            out.add(pos)
        return out

    return all(not (joined[i - 1].isdigit() or joined[i].isdigit()) for i in breaks(old) ^ breaks(new))


def _not_an_amendment(h: Hunk) -> bool:
    """A hunk no amendment makes: the same words in another form (``editorial``), a "(weggefallen)"
    note shown or not (its place moves between heading and text: the status decides), the same
    characters spaced otherwise (:func:`_respaced`)."""
    if h.kind == EDITORIAL:
        return True
    return h.kind == RESIDUE and (h.reason == "repeal note" or (h.reason == "spacing" and _respaced(h.old, h.new)))


_SENTENCE_END = (".", ":", ";", ")", "!", "?")
HEADING_TAIL_MAX_WORDS = 20


def _heading_tail(h: Hunk, old_text: str, new_text: str, *, formula: bool = False) -> bool:
    """A heading line read as the last line of the unit before it, in one version only: the one
    difference is words at the very end of the text, at most :data:`HEADING_TAIL_MAX_WORDS`, not
    ending a sentence, after text that does.

    Why: until its fixes of 2012-10-18 the converter left some headings as plain lines: the second
    line of a wrapped structure heading ("Verwarnung mit Strafvorbehalt" after StGB § 58), the
    "Auszug aus EinigVtr Anlage I …" heading of the Einigungsvertrag annex after the last § (StPO
    § 495, JGG § 125), "Gebührenverzeichnis" after a Schlussformel: 14 units of that commit in a 241-act
    slice. An amendment that strikes or adds the end of a unit strikes or adds a sentence, list item
    or clause, which ends in a full stop, colon or semicolon. A Schlussformel (``formula``) ends in
    signatures, without punctuation ("Der Reichsminister der Finanzen" before "Muster 1 bis Muster 14")."""
    added, removed = h.new, h.old
    if bool(added) == bool(removed):
        return False
    words = added or removed
    longer, shorter = (new_text, old_text) if added else (old_text, new_text)
    if len(words) > HEADING_TAIL_MAX_WORDS or not longer.endswith(" ".join(words)):
        return False
    if longer[: len(longer) - len(" ".join(words))].rstrip() != shorter.rstrip():
        return False
    return (formula or shorter.rstrip().endswith(_SENTENCE_END)) and not words[-1].endswith(_SENTENCE_END[:3])


MOVED_MAX_WORDS = 3


def _labels_moved(hunks: list[Hunk]) -> bool:
    """Every difference is a short block of words (at most :data:`MOVED_MAX_WORDS`) taken out in one
    place and put back, unchanged, in another: the same words, only their order differs.

    Why: in an act without §§ the whole text is one unit per part (``de:x:text``), its headings and
    § labels lines of that text, and the converter's fixes of 2012-10-18 printed a label on the other
    side of its title line ("§ 3.01 Begriffsbestimmungen" for "Begriffsbestimmungen § 3.01") or a
    heading word on the other side of its number ("Abschnitt I. - Schallzeichen"): 15 text units of the
    Rhine and Moselle shipping codes showed as ``changed`` in that commit on a 241-act slice, 1 in the
    ``fixes`` commit of 2012-10-02 (``bench/reclassify_replay.py``; no unit of a BGBl, BAnz or 2022
    refresh commit moved). An amendment replaces, inserts or strikes words; it does not move a
    label. Only text units (where units are cut at the §s a label cannot move inside one), and only
    blocks that start as a label or heading does (a "§", a digit, a capital): a moved "nicht" stays
    a change."""
    if not hunks:
        return False
    out = Counter(w for h in hunks for w in h.old)
    back = Counter(w for h in hunks for w in h.new)
    return out == back and all(len(block) <= MOVED_MAX_WORDS and (not block or block[0][:1] == "§"
                                                                 or block[0][:1].isdigit() or block[0][:1].isupper())
                               for h in hunks for block in (h.old, h.new))


def _editorial(old: dict, new: dict) -> bool:
    """Same status and every difference of text and title not an amendment (:func:`_not_an_amendment`:
    the same words in another form, :mod:`pipelines.statutes.de.sources_classify`; a moved repeal
    note; spacing): listed, but not as an amendment. A § repealed on both sides has no wording an
    amendment could change: whatever differs (a title shown or dropped beside "(weggefallen)") is editorial.
    The title of a unit holding an act's text without §§ (``de:x:text``) is the act's title, not wording
    of the unit: the converter's fixes of 2012-10-18 wrote four acts' titles out in full
    ("(Anhang II zur Binnenschiffsuntersuchungsordnung)" → "Technische Mindestvorschriften …"), which
    showed 28 such units as ``changed``."""
    if old["status"] != new["status"]:
        return False
    if old["status"] == "repealed":
        return True
    old_text, new_text = normalize_text(old["text"] or ""), normalize_text(new["text"] or "")
    hunks = diff_hunks(old_text, new_text)
    if len(hunks) == 1 and _heading_tail(hunks[0], old_text, new_text,
                                         formula=str(old.get("number") or "").endswith("formel")):
        hunks = []
    text_unit = old.get("number") == "text"
    if not text_unit:  # a text unit's title is the act's (the converter's fixes rewrote some)
        hunks += diff_hunks(normalize_text(old.get("title") or ""), normalize_text(new.get("title") or ""))
    rest = [h for h in hunks if not _not_an_amendment(h)]
    return not rest or (text_unit and _labels_moved(rest))


def _moved_across_units(new: pa.Table, changed: set[str], old_rows: dict, new_rows: dict) -> set[str]:
    """The changed units whose words only moved across the boundary to a neighbour: a run of units
    adjacent in the new version, each differing (``changed`` or ``editorial`` on its own), whose
    titles and texts read together are the same words in both versions (:func:`_not_an_amendment` for what differs).

    Why: the converter's fixes moved a heading's wrapped second line from the end of the § before it
    into the heading ("Aufenthaltsgewährung durch die obersten Landesbehörden;" from the end of
    AufenthG § 22 into the title of § 23), and a heading's words from the text into the title
    (HGB §§ 267/268, 297/298, JGG §§ 10/11 and 29/30, ZPO §§ 799/799a): 18 of the 115 units the
    fixes commit of 2012-10-18 showed as ``changed`` in a 241-act slice. No amendment moves words
    between units and leaves them the same."""
    if len(changed) < 2:
        return set()
    order = [r["id"] for r in sorted(new.select(["id", "sort_key"]).to_pylist(), key=lambda r: r["sort_key"])]
    runs, run = [], []
    for a in order:
        if a in changed and a in old_rows:
            run.append(a)
            continue
        if len(run) > 1:
            runs.append(run)
        run = []
    if len(run) > 1:
        runs.append(run)

    def words(rows: dict, ids: list[str]) -> str:
        return " ".join(normalize_text(f"{rows[a].get('title') or ''} {rows[a]['text'] or ''}") for a in ids)

    moved: set[str] = set()
    for run in runs:
        if any(old_rows[a]["status"] != new_rows[a]["status"] for a in run):
            continue
        hunks = diff_hunks(words(old_rows, run), words(new_rows, run))
        if all(_not_an_amendment(h) for h in hunks):
            moved.update(run)
    return moved


def diff_german(old: pa.Table, new: pa.Table) -> pa.Table:
    """DIFF of two German ARTICLES tables; ``changed`` means the normalised wording, title or status
    changed (content hashes are over normalised text, so equal wording never shows up), ``editorial``
    that only the form of the same words did."""
    diff = diff_versions(normalised_articles(old), normalised_articles(new))
    # a (weggefallen) § whose title disappeared has the same "(weggefallen)" text: keep the repeal
    # but give every change a word diff of what a reader sees (title + text)
    old_rows = {r["id"]: r for r in old.to_pylist()}
    new_rows = {r["id"]: r for r in new.to_pylist()}

    def shown(r: dict | None) -> str:
        return normalize_text(f"[{r.get('title') or ''}] {r['text'] or r.get('status_note') or ''}") if r else ""

    ids = diff["article_id"].to_pylist()
    wd = [word_diff(shown(old_rows.get(a)), shown(new_rows.get(a))) for a in ids]
    # diff_versions' own "editorial" is the Polish rule (texts equal once Dz. U. citations are
    # stripped); it compares text only, so a German § whose *title* changed came out "editorial": decide anew
    changes = [(("editorial" if _editorial(old_rows[a], new_rows[a]) else "changed") if c in ("changed", "editorial")
                else c) for a, c in zip(ids, diff["change"].to_pylist())]
    moved = _moved_across_units(new, {a for a, c in zip(ids, changes) if c in ("changed", "editorial")},
                                old_rows, new_rows)
    changes = ["editorial" if a in moved else c for a, c in zip(ids, changes)]
    diff = diff.set_column(diff.schema.get_field_index("change"), diff.schema.field("change"),
                           pa.array(changes, pa.string()))
    return diff.set_column(diff.schema.get_field_index("unified_diff"), diff.schema.field("unified_diff"),
                           pa.array(wd, pa.string()))


def diff_step(layout: Layout, *, act_id: str, version: str) -> GermanDiff | None:
    """Diff against the newest published older version (None for the first), staged beside it.

    A published version without ``diff_from_<that version>`` (an older text state was published
    after it: the 2012 Markdown behind the 2021 one) is staged again with the new diff, and the
    diff against its former predecessor dropped, so every version's diff names its predecessor."""
    store = CorpusStore(layout)
    prev = store.previous_version(act_id, version)
    if prev is None:
        return None
    diff = GermanDiff(act_id, prev, version, diff_german(store.read(act_id, prev, "articles", published_only=True),
                                                         store.read(act_id, version, "articles")))
    name, staging = f"diff_from_{prev}", layout.staging_dir(act_id, version)
    built = store.built_dir(act_id, version)
    if built == layout.version_dir(act_id, version) and not (built / f"{name}.parquet").exists():
        store.stage_published_copy(act_id, version)
        built = staging
    if built == staging:
        for stale in staging.glob("diff_from_*"):
            if stale.name not in (f"{name}.parquet", f"{name}.md"):
                stale.unlink()
        store.stage_table(act_id, version, name, diff.table, "diff")
        store.stage_file(act_id, version, f"{name}.md", diff.markdown())
    return diff


# ----------------------------------------------------------------------------------------------
# publish and the whole build


def publish_step(layout: Layout, *, act_id: str, version: str) -> Path:
    return publish_version(layout, act_id=act_id, version=version, chunker=CHUNKER_VERSION)


@dataclass
class GermanBuildResult:
    act_id: str
    version: str
    source: GermanSource
    reused: bool
    sections: int
    chunks: int
    diff: GermanDiff | None
    seconds: float
    path: Path


def build_version(layout: Layout, source: GermanSource, *, max_tokens: int = 256, tolerance: float = 0.02,
                  workers: int = 2, parsed: GermanParseOutcome | None = None) -> GermanBuildResult:
    """One source → one published version: parse (or ``parsed``, the outcome of its parse step),
    chunk, validate (blocking), diff, publish."""
    t0 = time.perf_counter()
    parsed = parsed or parse_step(layout, source, workers=workers)
    chunks = chunk_step(layout, act_id=source.act_id, version=parsed.version, max_tokens=max_tokens)
    require_valid(validate_step(layout, act_id=source.act_id, version=parsed.version, tolerance=tolerance,
                                max_tokens=max_tokens))
    diff = diff_step(layout, act_id=source.act_id, version=parsed.version)
    path = publish_step(layout, act_id=source.act_id, version=parsed.version)
    return GermanBuildResult(source.act_id, parsed.version, source, parsed.reused, parsed.sections,
                             chunks.num_rows, diff, time.perf_counter() - t0, path)


def build_all(layout: Layout, sample_dir: Path, *, acts: tuple[str, ...] | None = None, max_tokens: int = 256,
              tolerance: float = 0.02, workers: int = 2) -> list[GermanBuildResult]:
    """Every German source, older text states first, so each act's diff runs against its predecessor."""
    parsed: list[GermanParseOutcome] = []
    for src in german_sources(sample_dir, acts):
        outcome = parse_step(layout, src, workers=workers)
        twin = next((p.source for p in parsed if p.version == outcome.version and p.act_id == src.act_id), None)
        if twin is not None:  # one version folder, two texts: the second parse replaced the first
            raise GermanBuildError(f"{src.act_id}: {src.path} and {twin.path} are both the text state of "
                                   f"{outcome.version}")
        parsed.append(outcome)
    return [build_version(layout, p.source, max_tokens=max_tokens, tolerance=tolerance, workers=workers, parsed=p)
            for p in sorted(parsed, key=lambda p: (p.act_id, p.version))]


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}

