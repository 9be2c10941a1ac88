"""Polish statutes as Dagster assets: raw PDF → articles → chunks → diff → published.

Thin bindings only: the work happens in ``pipelines.statutes.pl.build``. Each consolidated text is a
partition (its text-state date) of a dynamic partitions definition. The blocking GX checks on
articles and chunks stop ``published`` from running, so a bad parse is never served.

Every asset reports what an operator needs on its page in the UI: the version, row counts, the
diff summary, validation results and seconds spent; ``published`` gathers them for the version it
promotes, together with the source change date the ELI API gave for it (also written as
``source.json`` beside the manifest). The ELI source itself is the external asset
``sources/pl_kc_eli``, observed by the ``source_watch`` sensor (``assets/sensors.py``).
"""

import json
import time
import warnings
from dataclasses import dataclass
from typing import Any

import dagster as dg

# Partitioned asset checks are "preview" in Dagster 1.13; we rely on them so every version's
# checks run with its partition key. Pinned Dagster version keeps the API stable for us.
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec")

from assets.resources import CorpusStorage, EliApi, ParseConfig, SearchConfig
from schemas.acts import Act, registry
from connectors.eli import EliError, EliSource, SampleEliSource, download_act, eli_for_act
from pipelines.statutes.store import CorpusStore
from pipelines.statutes.pl.build import chunk_step, diff_step, parse_step, publish_step
from pipelines.statutes.checks import check_articles, check_chunks  # the same checks gate the Prefect flow

GROUP_PREFIX = "pl_statutes"  # one asset group per act: pl_statutes_kc, pl_statutes_kpc, …
CHANGE_DATE_TAG = "lexpipe/source_change_date"  # set by the sensor on the runs it requests


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


@dataclass(frozen=True)
class PolishActAssets:
    """One Polish act's assets, checks, partitions and jobs. Names keep the Civil Code's from
    before the registry (``pl/kc/articles``, ``pl_kc_versions``, ``pl_kc_corpus_and_index``), so
    existing Dagster instances keep their history."""

    act: Act
    versions: dg.DynamicPartitionsDefinition
    source_key: dg.AssetKey
    raw_pdf: dg.AssetsDefinition
    articles: dg.AssetsDefinition
    chunks: dg.AssetsDefinition
    diff: dg.AssetsDefinition
    published: dg.AssetsDefinition
    search_index: dg.AssetsDefinition
    articles_valid: dg.AssetChecksDefinition
    chunks_valid: dg.AssetChecksDefinition
    corpus_job: Any
    main_job: Any

    @property
    def act_id(self) -> str:
        return self.act.id

    @property
    def corpus_assets(self) -> list[dg.AssetsDefinition]:
        return [self.raw_pdf, self.articles, self.chunks, self.diff, self.published]

    @property
    def assets(self) -> list[dg.AssetsDefinition]:
        return [*self.corpus_assets, self.search_index]

    @property
    def checks(self) -> list[dg.AssetChecksDefinition]:
        return [self.articles_valid, self.chunks_valid]


def act_assets(act: Act) -> PolishActAssets:
    """The asset family of one registry act: raw PDF → articles → chunks → diff → published →
    search index, partitioned by version (the text-state date), with its blocking checks."""
    ACT_ID = act.id
    PREFIX = [act.jurisdiction, act.slug]
    # one group per act: with four codes one graph of 24 nodes is unreadable (the UI zooms out
    # to names only); each act's graph stays the six-step lineage an operator reads
    GROUP = f"{GROUP_PREFIX}_{act.slug}"
    versions = dg.DynamicPartitionsDefinition(name=f"{act.key}_versions")
    SOURCE_KEY = dg.AssetKey(["sources", f"{act.key}_eli"])  # the ELI act, observed by the source_watch sensor



    def _source_change_date(context: dg.AssetExecutionContext, source: EliSource, version: str) -> str | None:
        """The ELI ``changeDate`` of this version: from the sensor's run tag, else asked of the source
        (the live API only knows its current version; an older one gets None, never a wrong date)."""
        tagged = context.run.tags.get(CHANGE_DATE_TAG)
        if tagged:
            return tagged
        try:
            meta = (source.metadata(eli_for_act(ACT_ID), version) if isinstance(source, SampleEliSource)
                    else source.metadata(eli_for_act(ACT_ID)))
        except (EliError, KeyError) as exc:
            context.log.warning(f"{ACT_ID} {version}: no change date from the source ({exc})")
            return None
        return meta.change_date if meta.version == version else None


    @dg.asset(key=PREFIX + ["raw_pdf"], deps=[SOURCE_KEY], partitions_def=versions, group_name=GROUP, kinds={"pdf"},
              description=f"The ISAP unified-text PDF of the {act.title}, landed in the immutable raw zone.")
    def raw_pdf(context: dg.AssetExecutionContext, storage: CorpusStorage, eli: EliApi) -> dg.MaterializeResult:
        version = context.partition_key
        t0 = time.perf_counter()
        source = eli.source(storage.layout.raw)
        landed = download_act(source, storage.landing(), eli_for_act(ACT_ID), ACT_ID, version)
        change_date = _source_change_date(context, source, version)
        context.log.info(f"{ACT_ID} {version}: {'landed' if landed.created else 'already landed'} "
                         f"{landed.sha256[:12]} ({landed.size:,} bytes) from {landed.source_url}; "
                         f"source change date {change_date or 'unknown'}")
        return dg.MaterializeResult(metadata={
            "version": version, "source_change_date": change_date or "unknown",
            "sha256": landed.sha256, "bytes": landed.size, "source_url": landed.source_url,
            "new_file": landed.created, "seconds": round(time.perf_counter() - t0, 2),
            "path": dg.MetadataValue.path(str(landed.path))})


    @dg.asset(key=PREFIX + ["articles"], deps=[raw_pdf], partitions_def=versions, group_name=GROUP,
              kinds={"parquet"}, description="Articles with hierarchy path, paragraphs, status and both "
                                             "readings of announced changes (schemas.arrow.ARTICLES).")
    def articles(context: dg.AssetExecutionContext, storage: CorpusStorage,
                 parse_config: ParseConfig) -> dg.MaterializeResult:
        version = context.partition_key
        landed = storage.landing().find(ACT_ID, version)
        if landed is None:
            raise dg.Failure(f"no raw PDF landed for {ACT_ID} {version}: materialize raw_pdf first")
        out = parse_step(storage.layout, act_id=ACT_ID, version=version, pdf_path=landed.path,
                         source_sha256=landed.sha256, source_url=landed.source_url, workers=parse_config.workers)
        table = CorpusStore(storage.layout).read(ACT_ID, version, "articles")
        context.log.info(f"{ACT_ID} {version}: {out.article_count} articles from {out.pages} pages "
                         f"in {out.seconds:.1f}s{' (reused, no parsing)' if out.reused else ''}")
        return dg.MaterializeResult(metadata={
            "version": version, "source_sha256": out.source_sha256,
            "article_count": out.article_count, "pages": out.pages, "parse_seconds": round(out.seconds, 2),
            "reused_previous_parse": out.reused, **{f"count_{k}": v for k, v in out.stats.items() if k not in ("articles", "pages")},
            "dagster/row_count": out.article_count,
            "preview": _preview(table, ["id", "status", "path_text", "text"]),
            # where the table lives once published (the staging folder is renamed into it)
            "path": dg.MetadataValue.path(str(storage.layout.version_dir(ACT_ID, version) / "articles.parquet"))})


    @dg.asset_check(asset=articles, blocking=True, partitions_def=versions,
                    description="Great Expectations suite schemas.expectations.articles_suite")
    def articles_valid(context: dg.AssetCheckExecutionContext, storage: CorpusStorage,
                       parse_config: ParseConfig) -> dg.AssetCheckResult:
        version = context.partition_key
        checked = check_articles(storage.layout, act_id=ACT_ID, version=version,
                                 tolerance=parse_config.article_count_tolerance)
        report, prev = checked.report, checked.previous_version
        context.log.info(report.summary())
        description = report.summary()
        if not report.success:  # name the file the failing articles came from
            landed = storage.landing().find(ACT_ID, version)
            description = f"{ACT_ID} {version} from {landed.source_url if landed else 'unknown source'}: {description}"
        return dg.AssetCheckResult(passed=report.success, description=description,
                                   metadata={**report.to_metadata(), "version": version, "previous_version": prev or "none"})


    @dg.asset(key=PREFIX + ["chunks"], deps=[articles], partitions_def=versions, group_name=GROUP,
              kinds={"parquet", "spacy"}, description="Retrieval chunks: whole articles, long ones split at sentences.")
    def chunks(context: dg.AssetExecutionContext, storage: CorpusStorage, parse_config: ParseConfig) -> dg.MaterializeResult:
        t0 = time.perf_counter()
        table = chunk_step(storage.layout, act_id=ACT_ID, version=context.partition_key,
                           max_tokens=parse_config.chunk_max_tokens)
        tokens = table["token_count"].to_pylist()
        context.log.info(f"{ACT_ID} {context.partition_key}: {table.num_rows} chunks, max {max(tokens)} tokens")
        return dg.MaterializeResult(metadata={
            "version": context.partition_key, "seconds": round(time.perf_counter() - t0, 2),
            "dagster/row_count": table.num_rows, "max_tokens": max(tokens), "mean_tokens": round(sum(tokens) / len(tokens), 1),
            "split_articles": sum(c > 1 for c in table["chunk_count"].to_pylist()) // 1,
            "preview": _preview(table, ["chunk_id", "token_count", "heading_path", "text"])})


    @dg.asset_check(asset=chunks, blocking=True, partitions_def=versions,
                    description="Great Expectations suite schemas.expectations.chunks_suite")
    def chunks_valid(context: dg.AssetCheckExecutionContext, storage: CorpusStorage,
                     parse_config: ParseConfig) -> dg.AssetCheckResult:
        report = check_chunks(storage.layout, act_id=ACT_ID, version=context.partition_key,
                              max_tokens=parse_config.chunk_max_tokens)
        context.log.info(report.summary())
        return dg.AssetCheckResult(passed=report.success, description=report.summary(),
                                   metadata={**report.to_metadata(), "version": context.partition_key})


    @dg.asset(key=PREFIX + ["diff"], deps=[articles], partitions_def=versions, group_name=GROUP, kinds={"parquet"},
              description="Articles added, changed, repealed or removed since the previous published version.")
    def diff(context: dg.AssetExecutionContext, storage: CorpusStorage) -> dg.MaterializeResult:
        t0 = time.perf_counter()
        prev, table, md = diff_step(storage.layout, act_id=ACT_ID, version=context.partition_key)
        seconds = round(time.perf_counter() - t0, 2)
        if table is None:
            return dg.MaterializeResult(metadata={"version": context.partition_key, "previous_version": "none",
                                                  "summary": md, "dagster/row_count": 0, "seconds": seconds})
        counts = _diff_counts(table)
        context.log.info(f"{ACT_ID} {prev} → {context.partition_key}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
        return dg.MaterializeResult(metadata={
            "version": context.partition_key, "seconds": seconds,
            "previous_version": prev, **{f"{k}_articles": v for k, v in counts.items()},
            "dagster/row_count": table.num_rows, "summary": dg.MetadataValue.md(md[:20000])})


    @dg.asset(key=PREFIX + ["published"], deps=[articles, chunks, diff], partitions_def=versions, group_name=GROUP,
              description="Promotes the validated version and points current.json at the newest version.")
    def published(context: dg.AssetExecutionContext, storage: CorpusStorage) -> dg.MaterializeResult:
        version = context.partition_key
        t0 = time.perf_counter()
        store = CorpusStore(storage.layout)
        source = _source_record(context, version)
        staging = storage.layout.staging_dir(ACT_ID, version)
        if (staging / "articles.parquet").exists():  # something to promote: it carries its provenance
            store.stage_json(ACT_ID, version, "source.json", source)
        target = publish_step(storage.layout, act_id=ACT_ID, version=version)
        recorded = json.loads((target / "source.json").read_text()) if (target / "source.json").exists() else source
        manifest = store.manifest(target)
        stats = manifest.get("stats") or {}
        chunk_rows = store.read(ACT_ID, version, "chunks", published_only=True).num_rows
        prev = store.previous_version(ACT_ID, version)
        diff_file = target / f"diff_from_{prev}.parquet" if prev else None
        diff_counts = _diff_counts(store.read(ACT_ID, version, f"diff_from_{prev}", published_only=True)) \
            if diff_file is not None and diff_file.exists() else {}
        serving = store.current_version(ACT_ID) or "none"
        context.log.info(f"{ACT_ID} {version} published (source change date {recorded.get('change_date') or 'unknown'}); "
                         f"serving {serving}")
        change_ts = _timestamp_from_iso(recorded.get("change_date"))
        return dg.MaterializeResult(metadata={
            "version": version, "serving_version": serving,
            "published_versions": ", ".join(store.published_versions(ACT_ID)),
            "source_change_date": recorded.get("change_date") or "unknown",
            **({"source_changed_at": dg.MetadataValue.timestamp(change_ts)} if change_ts is not None else {}),
            "source_sha256": manifest.get("source_sha256") or "unknown",
            "articles": stats.get("articles", 0), "chunks": chunk_rows, "dagster/row_count": stats.get("articles", 0),
            "diff_from": prev or "none", **{f"diff_{k}": v for k, v in diff_counts.items()},
            "validation": dg.MetadataValue.md(_validation_markdown(context, version)),
            "published_at": manifest.get("published_at") or "unknown",
            "seconds": round(time.perf_counter() - t0, 2),
            "path": dg.MetadataValue.path(str(target))})


    def _source_record(context: dg.AssetExecutionContext, version: str) -> dict:
        """Provenance of the version for ``source.json``: the ELI change date and URL recorded by this
        partition's latest ``raw_pdf`` materialization (the run tag of the sensor as a fallback)."""
        record = {"act_id": ACT_ID, "eli": eli_for_act(ACT_ID), "version": version,
                  "change_date": context.run.tags.get(CHANGE_DATE_TAG), "source_url": None, "source_sha256": None}
        found = context.instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=raw_pdf.key, asset_partitions=[version]), limit=1).records
        if found:
            md = found[0].asset_materialization.metadata  # type: ignore[union-attr]
            change = md.get("source_change_date")
            if change is not None and change.value != "unknown":
                record["change_date"] = change.value
            for key, name in (("source_url", "source_url"), ("sha256", "source_sha256")):
                if md.get(key) is not None:
                    record[name] = md[key].value
        return record


    def _validation_markdown(context: dg.AssetExecutionContext, version: str) -> str:
        """The latest result of each blocking check for this version (they gate this asset)."""
        rows = []
        for check in (articles_valid, chunks_valid):
            key = next(iter(check.check_keys))
            rec = context.instance.get_latest_asset_check_evaluation_record(key)
            evaluation = rec.event.dagster_event.event_specific_data if rec and rec.event and rec.event.dagster_event else None
            if evaluation is None or getattr(evaluation, "partition", None) != version:
                rows.append(f"| {key.name} | not evaluated for {version} | | |")
                continue
            md = evaluation.metadata
            count = md.get("validation_expectations")
            failed = md.get("validation_failed")
            rows.append(f"| {key.name} | {'passed' if evaluation.passed else 'failed'} | "
                        f"{count.value if count else ''} | {failed.value if failed else ''} |")
        return "| check | result | expectations | failed |\n|---|---|---:|---:|\n" + "\n".join(rows)


    @dg.asset(key=PREFIX + ["search_index"], deps=[published], partitions_def=versions, group_name=GROUP,
              kinds={"lancedb", "elasticsearch"}, pool="index",
              description="Hybrid search index (BM25 on analysed text + dense vectors) of the version, in the "
                          "embedded LanceDB backend or, when a cluster is configured, Elasticsearch; only chunks "
                          "whose text changed are re-embedded.")
    def search_index(context: dg.AssetExecutionContext, storage: CorpusStorage,
                     search_config: SearchConfig) -> dg.MaterializeResult:
        from pipelines.retrieval.encoders import get_encoder
        from pipelines.retrieval.index_build import index_step, throttled_progress

        encoder = get_encoder(search_config.encoder)
        backend = search_config.open_backend(storage.layout, act_id=ACT_ID, encoder=encoder)
        report = index_step(storage.layout, act_id=ACT_ID, version=context.partition_key, backend=backend,
                            encoder=encoder, progress=throttled_progress(context.log.info, "embedding {done}/{total} chunks"))
        context.log.info(f"{ACT_ID} {report.version}: {report.documents} documents indexed, {report.embedded} embedded "
                         f"({report.chunks_per_s:.1f} chunks/s), {report.cached} from cache")
        context.log.info(f"{ACT_ID} {report.version}: loaded into {report.backend} {report.table}, serving via {report.alias}")
        return dg.MaterializeResult(metadata={
            "version": context.partition_key, "dagster/row_count": report.documents,
            "documents": report.documents, "vectors": report.vectors, "embedded_chunks": report.embedded,
            "cached_embeddings": report.cached, "chunks_per_s": round(report.chunks_per_s, 2),
            "embed_seconds": round(report.embed_seconds, 1), "build_seconds": round(report.build_seconds, 2),
            "encoder": encoder.id, "backend": report.backend, "table": report.table,
            "physical_index": report.table, "alias": report.alias,
            "serving_version": backend.serving_version(ACT_ID) or "none"})

    corpus = [raw_pdf, articles, chunks, diff, published]
    return PolishActAssets(
        act=act, versions=versions, source_key=SOURCE_KEY, raw_pdf=raw_pdf, articles=articles, chunks=chunks,
        diff=diff, published=published, search_index=search_index, articles_valid=articles_valid,
        chunks_valid=chunks_valid,
        corpus_job=dg.define_asset_job(f"{act.key}_corpus", selection=dg.AssetSelection.assets(*corpus),
                                       partitions_def=versions),
        main_job=dg.define_asset_job(f"{act.key}_corpus_and_index",
                                     selection=dg.AssetSelection.assets(*corpus, search_index),
                                     partitions_def=versions))


# one family per Polish act of the registry (read when the code location loads)
ACTS: dict[str, PolishActAssets] = {a.id: act_assets(a) for a in registry().of_source("eli")}


def family(act_id: str) -> PolishActAssets:
    """The asset family of a Polish registry act (KeyError naming the loaded ones)."""
    try:
        return ACTS[act_id]
    except KeyError:
        raise KeyError(f"no Polish asset family for {act_id!r}; loaded: {', '.join(ACTS)}") from None


ASSETS = [a for f in ACTS.values() for a in f.assets]
CHECKS = [c for f in ACTS.values() for c in f.checks]
JOBS = [j for f in ACTS.values() for j in (f.corpus_job, f.main_job)]

defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, jobs=JOBS)
