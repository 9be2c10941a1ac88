"""Polish case law from SAOS as Dagster assets: group ``pl_cases``.

    cases/pl/saos ─[saos_quarantine_contract]→ cases/pl/chunks ─[pl_case_chunks_valid]→ cases/pl/search_index
          └──────────────────────────────────→ cases/pl/citation_links → cases/pl/cited_by

Thin bindings of ``connectors.saos`` (the crash-safe incremental sync, offline by default: the
shared dump pages served in-process like the live API), ``pipelines.case_law.pl`` (clean text,
sections, chunks, the case-chunks GX suite, stage → promote), ``pipelines.retrieval.case_index``
(the collection ``pl:cases``) and ``pipelines.citations.pl_links`` (citations linked to the act
version in force on the judgment's date, and per article the judgments citing it).

Why the links hang off the sync and not the chunks: they read the judgments' text and the
published statute versions, not the chunk table, so a refused chunk batch does not hold back the
citation tables (and a statute publication can refresh them alone: ``pl_citations_refresh``).

The nightly schedule runs one incremental pass (``sinceModificationDate`` = the previous pass's
start minus the overlap): an unchanged dump costs one request, and the downstream steps are
idempotent (same chunks, same collection version, embeddings from the cache).
"""


import json
import time
from collections import Counter
from typing import Any

import dagster as dg

from assets.metadata import gx_check_result, md_table as _md, reason_summary, run_settings
from assets.resources import CorpusStorage, ParseConfig, SearchConfig
from core.atomic import atomic_write_json
from core.layout import Layout

GROUP = "pl_cases"
SYNC_KEY = ["cases", "pl", "saos"]


def citations_dir(layout: Layout):
    """``$LEXPIPE_HOME/caselaw/pl/citations``: ``links.parquet``, ``cited_by.parquet`` + manifests."""
    return layout.case_citations("pl").parent


def _store(storage: CorpusStorage):
    from connectors.saos import JudgmentStore, SaosPaths

    return JudgmentStore(SaosPaths(storage.layout.home).store_root)


class SaosSyncConfig(dg.Config):
    """Per-run overrides; unset fields come from ``LEXPIPE_*`` / ``LEXPIPE_SAOS_*``."""

    offline: bool | None = None
    sample_dir: str | None = None
    max_pages: int | None = None  # stop after this many dump pages (the next run resumes)


@dg.asset(key=SYNC_KEY, group_name=GROUP, kinds={"parquet"},
          description="SAOS judgments (saos.org.pl dump API, or the offline sample pages): incremental, "
                      "crash-safe sync into the judgment store; malformed records quarantined with reasons.")
def saos_judgments(context: dg.AssetExecutionContext, storage: CorpusStorage,
                   config: SaosSyncConfig) -> dg.MaterializeResult:
    from connectors.saos import judgment_sync_from_settings

    settings = run_settings(storage.home, config.offline, config.sample_dir)
    sync = judgment_sync_from_settings(settings)
    t0 = time.perf_counter()
    report = sync.sync(max_pages=config.max_pages)
    seconds = round(time.perf_counter() - t0, 2)
    store = _store(storage)
    quarantine = store.quarantine()
    stored = store.judgments(columns=["judgment_id"]).num_rows
    context.log.info(f"{report.new} new, {report.updated} updated, {report.unchanged} unchanged, "
                     f"{report.quarantined} quarantined in {len(report.pages)} page(s), {seconds}s")
    cursor = json.loads(json.dumps(vars(report.cursor), default=str))
    return dg.MaterializeResult(metadata={
        "source": "offline sample" if settings.offline else sync.api.dump_endpoint,
        "complete": report.complete, "new_judgments": report.new, "updated_judgments": report.updated,
        "unchanged_judgments": report.unchanged, "quarantined_this_run": report.quarantined,
        "quarantined_total": quarantine.num_rows, "stored_judgments": stored, "dagster/row_count": stored,
        "quarantine_reasons": _md(reason_summary(quarantine.column("reasons").to_pylist()), ("problem", "records")),
        "pages": len(report.pages), "seconds": seconds, "cursor": dg.MetadataValue.json(cursor)})


def saos_quarantine_violations(store) -> tuple[list[str], list[str]]:
    """(quarantine ids without a reason, judgment ids both refused and stored and never replaced by
    a later valid fetch)."""
    quarantine = store.quarantine()
    no_reason = [q for q, reasons in zip(quarantine.column("quarantine_id").to_pylist(),
                                         quarantine.column("reasons").to_pylist())
                 if not reasons or not all(isinstance(r, str) and r.strip() for r in reasons)]
    refused: dict[str, Any] = {}
    for rid, kind, at in zip(quarantine.column("record_id").to_pylist(), quarantine.column("kind").to_pylist(),
                             quarantine.column("quarantined_at").to_pylist()):
        if kind == "judgment" and rid is not None:
            refused[rid] = max(at, refused.get(rid, at))
    stored = store.judgments(columns=["judgment_id", "fetched_at"])
    leaked = sorted((str(j) for j, f in zip(stored.column("judgment_id").to_pylist(),
                                            stored.column("fetched_at").to_pylist())
                     if str(j) in refused and f <= refused[str(j)]), key=int)
    return no_reason, leaked


@dg.asset_check(asset=saos_judgments, blocking=True,
                description="Every quarantined SAOS record has a reason, and no refused judgment is served "
                            "from the store (unless a later, valid fetch replaced it).")
def saos_quarantine_contract(storage: CorpusStorage) -> dg.AssetCheckResult:
    no_reason, leaked = saos_quarantine_violations(_store(storage))
    problems = []
    if no_reason:
        problems.append(f"{len(no_reason)} quarantine row(s) without a reason: {no_reason[:5]}")
    if leaked:
        problems.append(f"{len(leaked)} refused judgment id(s) served from the store: {leaked[:10]}")
    return dg.AssetCheckResult(passed=not problems,
                               description="; ".join(problems) or "every quarantined record has a reason; none served",
                               metadata={"without_reason": len(no_reason), "refused_and_served": len(leaked)})


@dg.asset(key=["cases", "pl", "chunks"], deps=[saos_judgments], group_name=GROUP, kinds={"parquet"},
          description="Judgments cleaned from SAOS HTML, split into sections (komparycja, sentencja, "
                      "uzasadnienie, …) and token-bounded chunks that never cross a section; staged until "
                      "the case-chunks suite passes.")
def pl_case_chunks(context: dg.AssetExecutionContext, storage: CorpusStorage,
                   parse_config: ParseConfig) -> dg.MaterializeResult:
    from pipelines.case_law.pl.build import chunk_pl_judgments_step

    out = chunk_pl_judgments_step(storage.layout, _store(storage).judgments(),
                                  max_tokens=parse_config.chunk_max_tokens)
    for r in out.rejected:
        context.log.warning(f"judgment {r.get('case_id')} not chunked: {'; '.join(r['reasons'])}")
    context.log.info(f"{out.cases} judgments → {out.chunks} chunks in {out.seconds}s (staged)")
    return dg.MaterializeResult(metadata={
        "dagster/row_count": out.chunks, "judgments": out.cases, "chunks": out.chunks,
        "rejected_judgments": len(out.rejected), "seconds": out.seconds, "staged": str(out.path),
        "court_name_sources": dg.MetadataValue.json(out.court_name_sources),
        "chunks_per_section": _md(sorted(out.sections.items(), key=lambda kv: -kv[1]), ("section", "chunks"))})


@dg.asset_check(asset=pl_case_chunks, blocking=True,
                description="Great Expectations case-chunks suite on the staged Polish chunks: unique ids, "
                            "required metadata, known sections, no markup left, token bounds, every chunk's "
                            "text equal to its span of the cleaned judgment.")
def pl_case_chunks_valid(storage: CorpusStorage, parse_config: ParseConfig) -> dg.AssetCheckResult:
    from pipelines.case_law.pl.build import validate_staged_pl_chunks

    return gx_check_result(validate_staged_pl_chunks(storage.layout, max_tokens=parse_config.chunk_max_tokens))


@dg.asset(key=["cases", "pl", "search_index"], deps=[pl_case_chunks], group_name=GROUP,
          kinds={"lancedb", "elasticsearch"}, pool="index",
          description="The judgments as search collection pl:cases (the statutes' hybrid search, one hit per "
                      "judgment): validated chunks promoted, embedded (cache-aware) and loaded; serving "
                      "switches atomically after the load's count check.")
def pl_case_search_index(context: dg.AssetExecutionContext, storage: CorpusStorage,
                         search_config: SearchConfig) -> dg.MaterializeResult:
    from pipelines.case_law.pl.build import promote_pl_chunks, read_current_pl_chunks
    from pipelines.retrieval.case_index import PL_CASES_ACT, case_index_step
    from pipelines.retrieval.encoders import get_encoder

    promote_pl_chunks(storage.layout)
    encoder = get_encoder(search_config.encoder)
    backend = search_config.open_backend(storage.layout, act_id=PL_CASES_ACT, encoder=encoder)
    report = case_index_step(storage.layout, read_current_pl_chunks(storage.layout), backend=backend,
                             encoder=encoder, act_id=PL_CASES_ACT,
                             progress=lambda done, total: context.log.info(f"embedding {done}/{total} chunks"))
    context.log.info(f"{PL_CASES_ACT} {report.version}: {report.documents} chunks indexed, {report.embedded} "
                     f"embedded, {report.cached} from cache; serving via {report.alias}")
    return dg.MaterializeResult(metadata={
        "version": report.version, "dagster/row_count": report.documents, "documents": report.documents,
        "embedded_chunks": report.embedded, "cached_embeddings": report.cached,
        "embed_seconds": round(report.embed_seconds, 1), "encoder": encoder.id, "backend": report.backend,
        "serving_version": backend.serving_version(PL_CASES_ACT) or "none"})


@dg.asset(key=["cases", "pl", "citation_links"], deps=[saos_judgments], group_name=GROUP, kinds={"parquet"},
          description="Every statute citation of the judgments (spaCy rule-based extraction) linked to the unit "
                      "id and to the act version in force on the judgment's date (else the nearest held "
                      "version, flagged), with the unit's status there and whether it changed since.")
def pl_citation_links(context: dg.AssetExecutionContext, storage: CorpusStorage) -> dg.MaterializeResult:
    from pipelines.case_law.case_build import write_parquet
    from pipelines.citations.pl_links import citation_links, resolution_counts

    t0 = time.perf_counter()
    judgments = _store(storage).judgments()
    links = citation_links(judgments, storage.layout)
    path = citations_dir(storage.layout) / "links.parquet"
    write_parquet(path, links)
    counts = resolution_counts(links)
    seconds = round(time.perf_counter() - t0, 2)
    acts = Counter(a for a in links.column("act_id").to_pylist() if a)
    atomic_write_json(path.with_suffix(".json"), {"judgments": judgments.num_rows, "links": links.num_rows,
                                                  "resolution": counts, "seconds": seconds})
    context.log.info(f"{judgments.num_rows} judgments → {links.num_rows} cited units: {counts} in {seconds}s")
    return dg.MaterializeResult(metadata={
        "dagster/row_count": links.num_rows, "judgments": judgments.num_rows, "seconds": seconds,
        **{f"resolved_{k}": v for k, v in counts.items()}, "path": str(path),
        "acts": _md(acts.most_common(15), ("act", "cited units"))})


@dg.asset_check(asset=pl_citation_links,
                description="Every citation of a held act resolved to a published version with a status; "
                            "spans lie inside the judgment text.")
def pl_citation_links_resolved(storage: CorpusStorage) -> dg.AssetCheckResult:
    import pyarrow.parquet as pq

    links = pq.read_table(citations_dir(storage.layout) / "links.parquet").to_pylist()
    bad = [r for r in links if r["resolution"] in ("exact", "nearest") and (not r["resolved_to_version"] or not r["status"])]
    spans = [r for r in links if not 0 <= r["char_start"] < r["char_end"]]
    return dg.AssetCheckResult(passed=not bad and not spans, metadata={
        "unresolved_in_corpus": len(bad), "bad_spans": len(spans), "links": len(links)},
        description=f"{len(bad)} held-act link(s) without a version, {len(spans)} bad span(s)")


@dg.asset(key=["cases", "pl", "cited_by"], deps=[pl_citation_links], group_name=GROUP, kinds={"parquet"},
          description="Per article, the judgments that cite it (counts, ids, case numbers, date range): the "
                      "reader's way from the law to the case law, and a retrieval prior.")
def pl_cited_by(context: dg.AssetExecutionContext, storage: CorpusStorage) -> dg.MaterializeResult:
    import pyarrow.parquet as pq

    from pipelines.case_law.case_build import write_parquet
    from pipelines.citations.pl_links import cited_by

    table = cited_by(pq.read_table(citations_dir(storage.layout) / "links.parquet"))
    path = citations_dir(storage.layout) / "cited_by.parquet"
    write_parquet(path, table)
    top = table.slice(0, 15).to_pylist()
    held = [r for r in table.to_pylist() if r["in_corpus"]][:15]
    return dg.MaterializeResult(metadata={
        "dagster/row_count": table.num_rows, "cited_articles": table.num_rows,
        "in_corpus_articles": int(sum(table.column("in_corpus").to_pylist())), "path": str(path),
        "most_cited": _md([(r["unit_id"], r["cases"], r["citations"]) for r in top], ("article", "judgments", "citations")),
        "most_cited_held": _md([(r["unit_id"], r["cases"], r["citations"], r["verified"]) for r in held],
                               ("article", "judgments", "citations", "in held version"))})


ASSETS = [saos_judgments, pl_case_chunks, pl_case_search_index, pl_citation_links, pl_cited_by]
CHECKS = [saos_quarantine_contract, pl_case_chunks_valid, pl_citation_links_resolved]
pl_cases_job = dg.define_asset_job(
    "pl_cases_refresh", selection=dg.AssetSelection.groups(GROUP),
    description="SAOS sync → chunks (validated) → pl:cases index, and the citation links and cited-by tables.")
pl_citations_job = dg.define_asset_job(
    "pl_citations_refresh", selection=dg.AssetSelection.assets(pl_citation_links, pl_cited_by),
    description="Re-link the stored judgments' citations to the published statute versions (after a publication).")


@dg.schedule(job=pl_cases_job, cron_schedule="40 2 * * *", execution_timezone="Europe/Warsaw",
             default_status=dg.DefaultScheduleStatus.RUNNING,
             description="Nightly 02:40: one incremental SAOS pass (sinceModificationDate) through to pl:cases "
                         "and the citation tables.")
def pl_cases_nightly_schedule(context: dg.ScheduleEvaluationContext):
    day = (context.scheduled_execution_time.date().isoformat() if context.scheduled_execution_time else "manual")
    return dg.RunRequest(run_key=f"saos:{day}", tags={"lexpipe/source": "saos"})


JOBS = [pl_cases_job, pl_citations_job]
SCHEDULES = [pl_cases_nightly_schedule]

defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, jobs=JOBS, schedules=SCHEDULES)
