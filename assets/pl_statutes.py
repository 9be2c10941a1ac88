"""Polish statutes as Dagster assets: one group ``pl_statutes``, one partition per changeset.

A Polish changeset is one ELI text state of one act (``connectors/eli_listing.py``): key
``<version>_<slug>`` — ``2025-11-13_kc``, ``2026-07-28_du1997_553`` for an act the ELI listing
discovered without a curated row. A run of ``pl_statutes_refresh`` for one ``pl_changesets``
partition builds the acts of that changeset through the six steps every Polish version has had:

    pl/statutes/raw_pdf → articles ─[articles_valid]→ chunks ─[chunks_valid]→ diff
                        → published → search_index

Thin bindings: the work is in ``pipelines.statutes.pl.build``. Each step reads the act(s) and
version from the changeset and loops over its members (one today; the record format holds many,
as a German changeset does). A member that fails — its PDF missing, a parse error, a failed
blocking check — is *quarantined* with its reason in the changeset's record
(``corpus/pl/.changesets/<key>.json``, ``pipelines/statutes/changeset_record.py``), its last good
version keeps serving, and the other members go on. The blocking checks stay blocking for what is
published: a check that fails every member it validated fails with severity ERROR and stops
``chunks``/``published``; one that fails some of them fails with severity WARN (the failures are
quarantined, the rest is published). So a one-act changeset behaves exactly as a version did.
A version that is already published is validated again by the same checks but never quarantined
(the weekly re-validation reports it).

Why one group partitioned by changeset instead of one group per act (issue 24, point 5): the ELI
listing discovers every statute of the Dziennik Ustaw; one asset family per act would put six
assets, two checks, two jobs and a partition set per act into the code location (thousands of
nodes in the lineage view) and would need a code-location reload for every act discovered. With
``pl_changesets`` the graph is six nodes whatever the catalogue holds, a new act is a new
partition key, and German and Polish law are orchestrated one way.

Every asset reports what an operator needs on its page in the UI: the changeset, the act and
version, row counts, the diff summary, validation results and seconds; ``published`` gathers them
with the source change date the ELI API gave (also written as ``source.json`` beside the
manifest). The ELI source itself is the external asset ``sources/pl_eli``, observed by the
``source_watch`` sensor (``assets/sensors.py``).
"""

import json
import time
import warnings
from dataclasses import dataclass
import dagster as dg

# Partitioned asset checks are "preview" in Dagster 1.13; we rely on them so every changeset's
# checks run with its partition key. Pinned Dagster version keeps the API stable for us.
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec")

from assets.metadata import md_table as _md
from assets.resources import CorpusStorage, EliApi, ParseConfig, SearchConfig
from connectors.changesets import ActChange, Changeset
from connectors.eli import EliError, EliSource, SampleEliSource, download_act
from connectors.eli_listing import parse_changeset_key, polish_changeset, update_catalogue
from core.layout import Layout
from pipelines.statutes.changeset_record import ActOutcome, ChangesetRecord, load_record, record_path, save_record
from pipelines.statutes.checks import check_articles, check_chunks  # the same checks gate the Prefect flow
from pipelines.statutes.pl.build import chunk_step, diff_step, parse_step, publish_step
from pipelines.statutes.store import CorpusStore
from schemas.acts import Act, registry

GROUP = "pl_statutes"
JURISDICTION = "pl"
SOURCE_TAG = "lexpipe/source"
CHANGE_DATE_TAG = "lexpipe/source_change_date"  # set by the sensor on the runs it requests
SOURCE_KEY = dg.AssetKey(["sources", "pl_eli"])  # the ELI listing, observed by the source_watch sensor
PREFIX = ["pl", "statutes"]
changesets = dg.DynamicPartitionsDefinition(name="pl_changesets")
SETTLED = ("published", "unchanged")


# ----------------------------------------------------------------------------------------------
# the changeset of a partition and its record


def act_changeset(layout: Layout, act: Act, version: str, *, path: str = "") -> Changeset:
    """The changeset of one text state of one registry act (``added`` when nothing of it is published)."""
    change = "modified" if CorpusStore(layout).published_versions(act.id) else "added"
    return polish_changeset(act.id, act.address, version, change=change, path=path, title=act.title,
                            gazette=act.display_address)


def resolve_changeset(layout: Layout, key: str, source: EliSource | None = None) -> Changeset:
    """The changeset of partition ``key``: its record's when one was written, else the act the key
    names (``<version>_<slug>``: ``pl:<slug>`` in the home's registry). A slug the registry does not
    hold yet is looked up in the ELI listing first (``source``), so a partition of a newly listed
    act runs without waiting for the sensor's discovery."""
    path = layout.changesets(JURISDICTION) / f"{key}.json"
    if path.exists():
        return ChangesetRecord.from_json(json.loads(path.read_text(encoding="utf-8"))).changeset
    version, slug = parse_changeset_key(key)
    act_id = f"pl:{slug}"
    if act_id not in registry(layout.home) and source is not None:
        discover(layout, source)
    reg = registry(layout.home)
    if act_id not in reg:
        raise dg.Failure(f"changeset {key}: no act {act_id} in the registry of {layout.home} "
                         f"(curated rows + catalogue/eli.json), nor in the ELI listing")
    act = reg.get(act_id)
    if act.source != "eli":
        raise dg.Failure(f"changeset {key}: {act_id} is an act of source {act.source!r}, not of the ELI")
    return act_changeset(layout, act, version)


def discover(layout: Layout, source: EliSource, years: list[int] | None = None, *, save: bool = True):
    """The ELI listing of ``years`` (default: the source's held years and every year of a
    registry ELI act) into ``catalogue/eli.json`` (``save=False``: only what it would hold)."""
    wanted = years or sorted({*source.listing_years(),
                              *(int(a.address.split("/")[1]) for a in registry(layout.home).of_source("eli"))})
    return update_catalogue(layout.home, source, wanted, save=save)


def _record(layout: Layout, key: str, source: EliSource | None = None) -> ChangesetRecord:
    return load_record(layout, resolve_changeset(layout, key, source))


def _quarantine(record: ChangesetRecord, m: ActChange, reason: str, message: str) -> None:
    record.outcomes[m.act_id] = ActOutcome(m.act_id, m.version, "quarantined", reason, message[:2000])


def _active(record: ChangesetRecord) -> list[ActChange]:
    """Members not quarantined (nor deleted): what a step builds or re-validates."""
    return [m for m in record.changeset.members
            if record.outcomes.get(m.act_id) is None or record.outcomes[m.act_id].outcome in SETTLED]


def _save(layout: Layout, record: ChangesetRecord) -> None:
    """Save the record; it is *applied* once every member is settled (published, unchanged,
    quarantined), so the sensor does not ask for it again."""
    import datetime as dt

    if record.state != "applied" and all(m.act_id in record.outcomes for m in record.changeset.members):
        record.state = "applied"
        record.finished_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    save_record(layout, record)


def _give_up_if_none_left(context, record: ChangesetRecord, failed: list[str], step: str) -> None:
    """A step whose every member failed fails the run (nothing downstream has anything to do):
    a one-act changeset fails as a version always did, naming the file and the cause."""
    if failed and not _active(record):
        raise dg.Failure(f"{record.changeset.key}: {step} failed for every act: " + "; ".join(failed))
    for f in failed:
        context.log.warning(f"{record.changeset.key}: quarantined {f}")


def _flatten(per_act: dict[str, dict], key: str, extra_sum: tuple[str, ...] = ()) -> dict:
    """One act: its metadata as it always was; several: an outcome table and the sums."""
    if len(per_act) == 1:
        md = dict(next(iter(per_act.values())))
        md["changeset"] = key
        return md
    rows = [(a, *(str(md.get(c, ""))[:60] for c in ("version", "dagster/row_count", *extra_sum)))
            for a, md in per_act.items()]
    md = {"changeset": key, "acts": _md(rows, ("act", "version", "rows", *extra_sum)),
          "dagster/row_count": sum(int(md.get("dagster/row_count", 0) or 0) for md in per_act.values())}
    for name in extra_sum:
        md[name] = sum(int(v.get(name, 0) or 0) for v in per_act.values())
    return md


def _preview(table, columns: list[str], n: int = 8) -> dg.MarkdownMetadataValue:
    rows = table.select(columns).slice(0, n).to_pylist()
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    body = "\n".join("| " + " | ".join(str(r[c])[:80].replace("|", "/").replace("\n", " ") for c in columns) + " |"
                     for r in rows)
    return dg.MetadataValue.md(head + body)


def _timestamp_from_iso(value: str | None) -> float | None:
    import datetime as dt

    if not value:
        return None
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)).timestamp()


def _diff_counts(table) -> dict[str, int]:
    changes = table["change"].to_pylist()
    return {k: changes.count(k) for k in ("added", "changed", "repealed", "removed", "editorial")}


def _source_change_date(context, source: EliSource, m: ActChange, single: bool) -> str | None:
    """The ELI ``changeDate`` of this version: from the sensor's run tag (a one-act changeset), else
    asked of the source (the live API only knows its current version; an older one gets None,
    never a wrong date)."""
    tagged = context.run.tags.get(CHANGE_DATE_TAG)
    if tagged and single:
        return tagged
    try:
        meta = (source.metadata(m.address, m.version) if isinstance(source, SampleEliSource)
                else source.metadata(m.address))
    except (EliError, KeyError) as exc:
        context.log.warning(f"{m.act_id} {m.version}: no change date from the source ({exc})")
        return None
    return meta.change_date if meta.version == m.version else None


# ----------------------------------------------------------------------------------------------
# the six steps


@dg.asset(key=PREFIX + ["raw_pdf"], deps=[SOURCE_KEY], partitions_def=changesets, group_name=GROUP, kinds={"pdf"},
          description="The ISAP unified-text PDF of every act of the changeset, landed in the immutable raw zone.")
def raw_pdf(context: dg.AssetExecutionContext, storage: CorpusStorage, eli: EliApi) -> dg.MaterializeResult:
    key = context.partition_key
    t0 = time.perf_counter()
    layout = storage.layout
    source = eli.source(layout.raw)
    record = _record(layout, key, source)
    # a run from the top builds every member again (a quarantined one is retried; work on disk is reused)
    record.outcomes.clear()
    record.state = "in_progress"
    single = len(record.changeset.members) == 1
    per_act: dict[str, dict] = {}
    failed: list[str] = []
    dates: dict[str, str] = {}
    for m in record.changeset.members:
        t1 = time.perf_counter()
        try:
            landed = download_act(source, storage.landing(), m.address, m.act_id, m.version, home=layout.home)
        except (EliError, KeyError, OSError) as exc:
            _quarantine(record, m, "source_missing", f"{m.act_id} {m.version}: {type(exc).__name__}: {exc}")
            failed.append(f"{m.act_id} {m.version}: {type(exc).__name__}: {exc}")
            continue
        change_date = _source_change_date(context, source, m, single)
        dates[m.act_id] = change_date or "unknown"
        context.log.info(f"{m.act_id} {m.version}: {'landed' if landed.created else 'already landed'} "
                         f"{landed.sha256[:12]} ({landed.size:,} bytes) from {landed.source_url}; "
                         f"source change date {change_date or 'unknown'}")
        per_act[m.act_id] = {
            "act_id": m.act_id, "version": m.version, "source_change_date": change_date or "unknown",
            "sha256": landed.sha256, "bytes": landed.size, "source_url": landed.source_url,
            "new_file": landed.created, "seconds": round(time.perf_counter() - t1, 2),
            "path": dg.MetadataValue.path(str(landed.path))}
    _save(layout, record)
    _give_up_if_none_left(context, record, failed, "download")
    md = _flatten(per_act, key)
    md["source_change_dates"] = dg.MetadataValue.json(dates)
    md["quarantined"] = len(failed)
    md["seconds"] = round(time.perf_counter() - t0, 2)
    return dg.MaterializeResult(metadata=md)


@dg.asset(key=PREFIX + ["articles"], deps=[raw_pdf], partitions_def=changesets, group_name=GROUP,
          kinds={"parquet"}, description="Articles with hierarchy path, paragraphs, status and both readings of "
                                         "announced changes (schemas.arrow.ARTICLES), per act of the changeset.")
def articles(context: dg.AssetExecutionContext, storage: CorpusStorage,
             parse_config: ParseConfig) -> dg.MaterializeResult:
    from pipelines.pdf_lines import PdfReadError
    from pipelines.statutes.pl.parser import StatuteParseError

    layout = storage.layout
    record = _record(layout, context.partition_key)
    per_act: dict[str, dict] = {}
    failed: list[str] = []
    for m in _active(record):
        landed = storage.landing().find(m.act_id, m.version)
        if landed is None:
            _quarantine(record, m, "source_missing", f"no raw PDF landed for {m.act_id} {m.version}")
            failed.append(f"{m.act_id}: no raw PDF landed (materialize raw_pdf first)")
            continue
        try:
            out = parse_step(layout, act_id=m.act_id, version=m.version, pdf_path=landed.path,
                             source_sha256=landed.sha256, source_url=landed.source_url, workers=parse_config.workers)
        except (PdfReadError, StatuteParseError) as exc:
            _quarantine(record, m, "parse_error", f"{type(exc).__name__}: {exc}")
            failed.append(f"{type(exc).__name__}: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 — a parser bug on one act must not stop the others
            _quarantine(record, m, "crash", f"{landed.source_url}: {type(exc).__name__}: {exc}")
            failed.append(f"{m.act_id} {m.version} from {landed.source_url}: {type(exc).__name__}: {exc}")
            continue
        table = CorpusStore(layout).read(m.act_id, m.version, "articles")
        context.log.info(f"{m.act_id} {m.version}: {out.article_count} articles from {out.pages} pages "
                         f"in {out.seconds:.1f}s{' (reused, no parsing)' if out.reused else ''}")
        per_act[m.act_id] = {
            "act_id": m.act_id, "version": m.version, "source_sha256": out.source_sha256,
            "article_count": out.article_count, "pages": out.pages, "parse_seconds": round(out.seconds, 2),
            "reused_previous_parse": out.reused,
            **{f"count_{k}": v for k, v in out.stats.items() if k not in ("articles", "pages")},
            "dagster/row_count": out.article_count,
            "preview": _preview(table, ["id", "status", "path_text", "text"]),
            # where the table lives once published (the staging folder is renamed into it)
            "path": dg.MetadataValue.path(str(layout.version_dir(m.act_id, m.version) / "articles.parquet"))}
    _save(layout, record)
    _give_up_if_none_left(context, record, failed, "parse")
    return dg.MaterializeResult(metadata={**_flatten(per_act, context.partition_key, ("article_count",)),
                                          "quarantined": len(failed)})


def _gate(context, storage: CorpusStorage, name: str, reason: str, check) -> dg.AssetCheckResult:
    """Run ``check(layout, member) -> (report, extra metadata)`` on every active member: a failing
    member not yet published is quarantined (``reason``); published ones are only reported. ERROR
    (blocking) when every member validated failed, WARN when some did."""
    layout = storage.layout
    key = context.partition_key
    record = _record(layout, key)
    reports, failed, quarantined = {}, [], []
    md: dict = {}
    for m in _active(record):
        report, extra = check(layout, m)
        reports[m.act_id] = report
        context.log.info(f"{m.act_id} {m.version}: {report.summary()}")
        md = {**report.to_metadata(), **extra, "version": m.version, "act_id": m.act_id} if len(reports) == 1 else md
        if report.success:
            continue
        landed = storage.landing().find(m.act_id, m.version)
        message = (f"{m.act_id} {m.version} from {landed.source_url if landed else 'unknown source'}: "
                   f"{report.summary()}")
        failed.append(message)
        if record.outcomes.get(m.act_id) is None:  # not published yet: keep it out
            _quarantine(record, m, reason, message)
            quarantined.append(m.act_id)
    _save(layout, record)
    if not reports:
        return dg.AssetCheckResult(passed=False, severity=dg.AssetCheckSeverity.ERROR,
                                   description=f"{key}: no act of the changeset left to validate ({name})",
                                   metadata={"changeset": key})
    passed = not failed
    severity = dg.AssetCheckSeverity.ERROR if len(failed) == len(reports) else dg.AssetCheckSeverity.WARN
    if len(reports) == 1:
        description = failed[0] if failed else next(iter(reports.values())).summary()
    else:
        description = (f"{key}: {len(reports) - len(failed)} of {len(reports)} acts passed {name}"
                       + (f"; quarantined: {'; '.join(failed)}" if failed else ""))
        md = {"acts_validated": len(reports), "acts_failed": len(failed)}
    return dg.AssetCheckResult(passed=passed, severity=severity, description=description[:4000],
                               metadata={**md, "changeset": key, "quarantined": ", ".join(quarantined) or "none"})


@dg.asset_check(asset=articles, blocking=True, partitions_def=changesets,
                description="Great Expectations suite schemas.expectations.articles_suite, per act of the changeset "
                            "(a failing act is quarantined; ERROR, which blocks, when every act failed)")
def articles_valid(context: dg.AssetCheckExecutionContext, storage: CorpusStorage,
                   parse_config: ParseConfig) -> dg.AssetCheckResult:
    def check(layout, m):
        checked = check_articles(layout, act_id=m.act_id, version=m.version,
                                 tolerance=parse_config.article_count_tolerance)
        return checked.report, {"previous_version": checked.previous_version or "none"}

    return _gate(context, storage, "articles_suite", "articles_check", check)


@dg.asset(key=PREFIX + ["chunks"], deps=[articles], partitions_def=changesets, group_name=GROUP,
          kinds={"parquet", "spacy"}, description="Retrieval chunks: whole articles, long ones split at sentences.")
def chunks(context: dg.AssetExecutionContext, storage: CorpusStorage, parse_config: ParseConfig) -> dg.MaterializeResult:
    layout = storage.layout
    record = _record(layout, context.partition_key)
    per_act: dict[str, dict] = {}
    for m in _active(record):
        t0 = time.perf_counter()
        table = chunk_step(layout, act_id=m.act_id, version=m.version, max_tokens=parse_config.chunk_max_tokens)
        tokens = table["token_count"].to_pylist()
        context.log.info(f"{m.act_id} {m.version}: {table.num_rows} chunks, max {max(tokens)} tokens")
        per_act[m.act_id] = {
            "act_id": m.act_id, "version": m.version, "seconds": round(time.perf_counter() - t0, 2),
            "dagster/row_count": table.num_rows, "max_tokens": max(tokens),
            "mean_tokens": round(sum(tokens) / len(tokens), 1),
            "split_articles": sum(c > 1 for c in table["chunk_count"].to_pylist()),
            "preview": _preview(table, ["chunk_id", "token_count", "heading_path", "text"])}
    return dg.MaterializeResult(metadata=_flatten(per_act, context.partition_key))


@dg.asset_check(asset=chunks, blocking=True, partitions_def=changesets,
                description="Great Expectations suite schemas.expectations.chunks_suite, per act of the changeset "
                            "(a failing act is quarantined; ERROR, which blocks, when every act failed)")
def chunks_valid(context: dg.AssetCheckExecutionContext, storage: CorpusStorage,
                 parse_config: ParseConfig) -> dg.AssetCheckResult:
    def check(layout, m):
        return check_chunks(layout, act_id=m.act_id, version=m.version, max_tokens=parse_config.chunk_max_tokens), {}

    return _gate(context, storage, "chunks_suite", "chunks_check", check)


@dg.asset(key=PREFIX + ["diff"], deps=[articles], partitions_def=changesets, group_name=GROUP, kinds={"parquet"},
          description="Articles added, changed, repealed or removed since each act's previous published version.")
def diff(context: dg.AssetExecutionContext, storage: CorpusStorage) -> dg.MaterializeResult:
    layout = storage.layout
    record = _record(layout, context.partition_key)
    per_act: dict[str, dict] = {}
    failed: list[str] = []
    for m in _active(record):
        t0 = time.perf_counter()
        try:
            prev, table, md = diff_step(layout, act_id=m.act_id, version=m.version)
        except Exception as exc:  # noqa: BLE001 — one act's diff must not stop the others
            if record.outcomes.get(m.act_id) is None:
                _quarantine(record, m, "diff_error", f"{m.act_id} {m.version}: {type(exc).__name__}: {exc}")
            failed.append(f"{m.act_id}: {type(exc).__name__}: {exc}")
            continue
        seconds = round(time.perf_counter() - t0, 2)
        if table is None:
            per_act[m.act_id] = {"act_id": m.act_id, "version": m.version, "previous_version": "none",
                                 "summary": md, "dagster/row_count": 0, "seconds": seconds}
            continue
        counts = _diff_counts(table)
        context.log.info(f"{m.act_id} {prev} → {m.version}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
        per_act[m.act_id] = {
            "act_id": m.act_id, "version": m.version, "seconds": seconds, "previous_version": prev,
            **{f"{k}_articles": v for k, v in counts.items()},
            "dagster/row_count": table.num_rows, "summary": dg.MetadataValue.md(md[:20000])}
    _save(layout, record)
    _give_up_if_none_left(context, record, failed, "diff")
    return dg.MaterializeResult(metadata=_flatten(per_act, context.partition_key))


@dg.asset(key=PREFIX + ["published"], deps=[articles, chunks, diff], partitions_def=changesets, group_name=GROUP,
          description="Promotes each validated act version of the changeset and points its current.json at the "
                      "newest version; the changeset's record says what happened to every act.")
def published(context: dg.AssetExecutionContext, storage: CorpusStorage) -> dg.MaterializeResult:
    layout = storage.layout
    key = context.partition_key
    t0 = time.perf_counter()
    store = CorpusStore(layout)
    record = _record(layout, key)
    per_act: dict[str, dict] = {}
    failed: list[str] = []
    validation = _validation_markdown(context, key)
    for m in _active(record):
        t1 = time.perf_counter()
        staging = layout.staging_dir(m.act_id, m.version)
        source = _source_record(context, storage, m)
        was = store.manifest(layout.version_dir(m.act_id, m.version)) if layout.version_dir(m.act_id, m.version).is_dir() else {}
        try:
            if (staging / "articles.parquet").exists():  # something to promote: it carries its provenance
                store.stage_json(m.act_id, m.version, "source.json", source)
            target = publish_step(layout, act_id=m.act_id, version=m.version)
        except Exception as exc:  # noqa: BLE001 — the last good version keeps serving
            _quarantine(record, m, "publish_error", f"{m.act_id} {m.version}: {type(exc).__name__}: {exc}")
            failed.append(f"{m.act_id}: {type(exc).__name__}: {exc}")
            continue
        recorded = json.loads((target / "source.json").read_text()) if (target / "source.json").exists() else source
        manifest = store.manifest(target)
        stats = manifest.get("stats") or {}
        chunk_rows = store.read(m.act_id, m.version, "chunks", published_only=True).num_rows
        prev = store.previous_version(m.act_id, m.version)
        diff_file = target / f"diff_from_{prev}.parquet" if prev else None
        diff_counts = _diff_counts(store.read(m.act_id, m.version, f"diff_from_{prev}", published_only=True)) \
            if diff_file is not None and diff_file.exists() else {}
        serving = store.current_version(m.act_id) or "none"
        same = bool(was) and was.get("source_sha256") == manifest.get("source_sha256") \
            and was.get("parser_version") == manifest.get("parser_version")
        record.outcomes[m.act_id] = ActOutcome(m.act_id, m.version, "unchanged" if same else "published",
                                               source_sha=manifest.get("source_sha256") or "",
                                               units=int(stats.get("articles", 0)), chunks=chunk_rows,
                                               diff={k: v for k, v in diff_counts.items() if v},
                                               seconds=round(time.perf_counter() - t1, 3))
        context.log.info(f"{m.act_id} {m.version} published (source change date "
                         f"{recorded.get('change_date') or 'unknown'}); serving {serving}")
        change_ts = _timestamp_from_iso(recorded.get("change_date"))
        per_act[m.act_id] = {
            "act_id": m.act_id, "version": m.version, "serving_version": serving,
            "published_versions": ", ".join(store.published_versions(m.act_id)),
            "source_change_date": recorded.get("change_date") or "unknown",
            **({"source_changed_at": dg.MetadataValue.timestamp(change_ts)} if change_ts is not None else {}),
            "source_sha256": manifest.get("source_sha256") or "unknown",
            "articles": stats.get("articles", 0), "chunks": chunk_rows, "dagster/row_count": stats.get("articles", 0),
            "diff_from": prev or "none", **{f"diff_{k}": v for k, v in diff_counts.items()},
            "validation": dg.MetadataValue.md(validation),
            "published_at": manifest.get("published_at") or "unknown",
            "path": dg.MetadataValue.path(str(target))}
    _save(layout, record)
    _give_up_if_none_left(context, record, failed, "publish")
    counts = record.counts()
    md = _flatten(per_act, key, ("articles", "chunks"))
    md.update({"state": record.state, **{f"acts_{k}": v for k, v in counts.items()},
               "quarantine_reasons": ", ".join(f"{k} {v}" for k, v in sorted(record.reasons().items())) or "none",
               "record": dg.MetadataValue.path(str(record_path(layout, record.changeset))),
               "seconds": round(time.perf_counter() - t0, 2)})
    if len(record.changeset.members) > 1 or counts["quarantined"]:
        md["outcomes"] = _outcome_table(record)
    return dg.MaterializeResult(metadata=md)


def _outcome_table(record: ChangesetRecord) -> dg.MarkdownMetadataValue:
    rows = [(o.act_id, o.version, o.outcome, o.reason, o.units, o.chunks,
             ", ".join(f"{v} {k}" for k, v in o.diff.items()), (o.message or "")[:160])
            for o in sorted(record.outcomes.values(), key=lambda o: (o.outcome != "quarantined", o.act_id))][:40]
    return _md(rows, ("act", "version", "outcome", "reason", "articles", "chunks", "diff", "message"))


def _source_record(context: dg.AssetExecutionContext, storage: CorpusStorage, m: ActChange) -> dict:
    """Provenance of the version for ``source.json``: the ELI change date and URL recorded by this
    partition's latest ``raw_pdf`` materialization (the run tag of the sensor as a fallback), the
    landed file's URL and hash."""
    record = {"act_id": m.act_id, "eli": m.address, "version": m.version,
              "change_date": context.run.tags.get(CHANGE_DATE_TAG), "source_url": None, "source_sha256": None}
    landed = storage.landing().find(m.act_id, m.version)
    if landed is not None:
        record["source_url"], record["source_sha256"] = landed.source_url, landed.sha256
    found = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=raw_pdf.key, asset_partitions=[context.partition_key]), limit=1).records
    if found:
        md = found[0].asset_materialization.metadata  # type: ignore[union-attr]
        dates = md.get("source_change_dates")
        change = (dates.value or {}).get(m.act_id) if dates is not None else None
        if change and change != "unknown":
            record["change_date"] = change
    return record


def _validation_markdown(context: dg.AssetExecutionContext, key: str) -> str:
    """The latest result of each blocking check for this changeset (they gate this asset)."""
    rows = []
    for check in (articles_valid, chunks_valid):
        ck = next(iter(check.check_keys))
        rec = context.instance.get_latest_asset_check_evaluation_record(ck)
        evaluation = rec.event.dagster_event.event_specific_data if rec and rec.event and rec.event.dagster_event else None
        if evaluation is None or getattr(evaluation, "partition", None) != key:
            rows.append(f"| {ck.name} | not evaluated for {key} | | |")
            continue
        md = evaluation.metadata
        count = md.get("validation_expectations")
        failed = md.get("validation_failed")
        result = "passed" if evaluation.passed else f"failed ({evaluation.severity.value.lower()})"
        rows.append(f"| {ck.name} | {result} | {count.value if count else ''} | {failed.value if failed else ''} |")
    return "| check | result | expectations | failed |\n|---|---|---:|---:|\n" + "\n".join(rows)


@dg.asset(key=PREFIX + ["search_index"], deps=[published], partitions_def=changesets, group_name=GROUP,
          kinds={"lancedb", "elasticsearch"}, pool="index",
          description="Hybrid search index (BM25 on analysed text + dense vectors) of every act version the changeset "
                      "published, in the embedded LanceDB backend or, when a cluster is configured, Elasticsearch; "
                      "only chunks whose text changed are re-embedded.")
def search_index(context: dg.AssetExecutionContext, storage: CorpusStorage,
                 search_config: SearchConfig) -> dg.MaterializeResult:
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import index_step, throttled_progress

    layout = storage.layout
    key = context.partition_key
    record = _record(layout, key)
    store = CorpusStore(layout)
    members = [m for m in record.changeset.members
               if (record.outcomes[m.act_id].outcome in SETTLED if m.act_id in record.outcomes
                   else m.version in store.published_versions(m.act_id))]
    if not members:
        raise dg.Failure(f"{key}: no act version of the changeset is published: nothing to index")
    encoder = get_encoder(search_config.encoder)
    per_act: dict[str, dict] = {}
    for m in members:
        backend = search_config.open_backend(layout, act_id=m.act_id, encoder=encoder)
        report = index_step(layout, act_id=m.act_id, version=m.version, backend=backend, encoder=encoder,
                            progress=throttled_progress(context.log.info, "embedding {done}/{total} chunks"))
        context.log.info(f"{m.act_id} {report.version}: {report.documents} documents indexed, {report.embedded} "
                         f"embedded ({report.chunks_per_s:.1f} chunks/s), {report.cached} from cache")
        context.log.info(f"{m.act_id} {report.version}: loaded into {report.backend} {report.table}, "
                         f"serving via {report.alias}")
        per_act[m.act_id] = {
            "act_id": m.act_id, "version": m.version, "dagster/row_count": report.documents,
            "documents": report.documents, "vectors": report.vectors, "embedded_chunks": report.embedded,
            "cached_embeddings": report.cached, "chunks_per_s": round(report.chunks_per_s, 2),
            "embed_seconds": round(report.embed_seconds, 1), "build_seconds": round(report.build_seconds, 2),
            "encoder": encoder.id, "backend": report.backend, "table": report.table,
            "physical_index": report.table, "alias": report.alias,
            "serving_version": backend.serving_version(m.act_id) or "none"}
    return dg.MaterializeResult(metadata=_flatten(per_act, key, ("documents", "embedded_chunks")))


ASSETS = [raw_pdf, articles, chunks, diff, published, search_index]
CORPUS_ASSETS = [raw_pdf, articles, chunks, diff, published]
CHECKS = [articles_valid, chunks_valid]

refresh_job = dg.define_asset_job(
    "pl_statutes_refresh", selection=dg.AssetSelection.assets(*ASSETS), partitions_def=changesets,
    tags={SOURCE_TAG: "eli"},
    description="One Polish changeset (an ELI text state of an act) end to end: raw → parse → checks → chunks → "
                "diff → publish → index. The blocking checks stop publish/index for what fails them (quarantined "
                "in the changeset's record), so a bad version never replaces the served one.")
JOBS = [refresh_job]


@dataclass(frozen=True)
class ChangesetRef:
    """An (act, version) and its ``pl_changesets`` partition key."""
    act_id: str
    version: str
    key: str


def changeset_keys(layout: Layout, act_id: str, versions: list[str]) -> list[ChangesetRef]:
    """The partition keys of ``versions`` of a registry act (``2025-11-13`` of ``pl:kc`` → ``2025-11-13_kc``)."""
    from connectors.eli_listing import changeset_key

    act = registry(layout.home).get(act_id)
    return [ChangesetRef(act.id, v, changeset_key(v, act.slug)) for v in sorted(versions)]


def published_changeset_keys(layout: Layout) -> list[ChangesetRef]:
    """Every published Polish (act, version) as a changeset key (the weekly re-validation's list)."""
    from connectors.eli_listing import changeset_key

    store = CorpusStore(layout)
    root = layout.home / "corpus" / JURISDICTION
    out = []
    for d in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []:
        act_id = f"{JURISDICTION}:{d.name}"
        out += [ChangesetRef(act_id, v, changeset_key(v, d.name)) for v in store.published_versions(act_id)]
    return out


defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, jobs=JOBS)
