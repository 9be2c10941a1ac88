"""Per-article representations as Dagster assets: group ``representations``.

    index/representations/pl   exam 2012–2020 and LQAD questions, SAOS citation sentences (embedded)
    index/representations/de   GerLayQA dev questions (BM25 only)

Thin bindings of ``pipelines.retrieval.representations.build``. Each store is built after the
language's acts are published (it reads which articles exist from the published corpus), offline
(every source is a file under the sample directory), and written by one rename: a search reads the
old store or the new one. The search service's last stage (``pipelines.retrieval.lay_search``) reads
it; without it searches answer as before, without a confidence.

``representations_refresh`` builds both, launched from the Dagster UI (``lexpipe ui``) or by
``lexpipe representations`` once a language's acts are published; it is cheap to repeat: texts
already embedded come from the embedding cache. ``lexpipe run`` does not run it: from an empty cache the Polish store embeds
~9,400 texts, ~10 min at 12–16 texts/s, which ``make run``'s 15-min budget cannot hold, so a
``make run`` home searches without the last stage (no confidence, no out-of-corpus flag).
"""


import dagster as dg

from assets.resources import BenchmarkConfig, CorpusStorage, SearchConfig

GROUP = "representations"


def _build(context: dg.AssetExecutionContext, storage: CorpusStorage, search_config: SearchConfig,
           benchmark_config: BenchmarkConfig, lang: str) -> dg.MaterializeResult:
    from pathlib import Path

    from core.settings import get_settings
    from pipelines.retrieval.encoders import get_encoder
    from pipelines.retrieval.representations.build import build_representations

    sample_dir = Path(benchmark_config.sample_dir) if benchmark_config.sample_dir else get_settings().sample_dir
    encoder = get_encoder(search_config.encoder) if lang == "pl" else None
    report = build_representations(storage.layout, sample_dir, lang=lang, encoder=encoder,
                                   progress=lambda d, m: context.log.info(f"embedding representations {d}/{m}")
                                   if d == m or d % 1024 == 0 else None)
    if report is None:
        context.log.info(f"no {lang} representations: no published act of the language they are about")
        return dg.MaterializeResult(metadata={"rows": 0})
    for note in report.notes:
        context.log.info(note)
    context.log.info(f"{lang} representations: {report.rows} rows {report.per_kind}; embedded {report.embedded}, "
                     f"cached {report.cached}; {report.seconds:.1f} s")
    return dg.MaterializeResult(metadata={"rows": report.rows, "per_kind": dg.MetadataValue.json(report.per_kind),
                                          "embedded": report.embedded, "cached": report.cached,
                                          "seconds": round(report.seconds, 1), "path": str(report.path)})


@dg.asset(key=["index", "representations", "pl"], group_name=GROUP, kinds={"parquet"},
          description="What is known *about* each held Polish article: exam questions of 2012–2020, LQAD-PL "
                      "questions and SAOS citation sentences (never exam 2021–2023 or the SAOS evaluation pages), "
                      "analysed and embedded, for the search's last stage.")
def pl_representations(context: dg.AssetExecutionContext, storage: CorpusStorage, search_config: SearchConfig,
                       benchmark_config: BenchmarkConfig) -> dg.MaterializeResult:
    return _build(context, storage, search_config, benchmark_config, "pl")


@dg.asset(key=["index", "representations", "de"], group_name=GROUP, kinds={"parquet"},
          description="GerLayQA dev questions with the BGB §§ that answer them, for the German search's "
                      "nearest-question leg (BM25 only).")
def de_representations(context: dg.AssetExecutionContext, storage: CorpusStorage, search_config: SearchConfig,
                       benchmark_config: BenchmarkConfig) -> dg.MaterializeResult:
    return _build(context, storage, search_config, benchmark_config, "de")


representations_job = dg.define_asset_job("representations_refresh", selection=dg.AssetSelection.groups(GROUP),
                                          description="Rebuild the representation stores from the published "
                                                      "corpus and the training material.")

defs = dg.Definitions(assets=[pl_representations, de_representations], jobs=[representations_job])
