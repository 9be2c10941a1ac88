"""Acts a query names (``act_mentions``) and what the search service does with them: a search
without an act filter whose query names indexed acts searches those acts only."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.retrieval.act_mentions import mentions, named_acts
from pipelines.retrieval.interface import Hit
from pipelines.retrieval.service import SearchService
from registry_rows import KC, KK, KP, KPC  # tests/, on sys.path via conftest

BGB = """
[[act]]
id = "de:bgb"
jurisdiction = "de"
language = "de"
title = "Bürgerliches Gesetzbuch"
citation = "BGB"
source = "gesetze"
address = "bgb"
sample_stem = "bgb"
layout = "gesetze"
"""


@pytest.fixture
def four_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "acts.toml"
    path.write_text(KC + KK + KPC + KP + BGB, encoding="utf-8")
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(path))


@pytest.mark.parametrize("query, acts", [
    ("Zgodnie z Kodeksem pracy, pracodawca jest obowiązany:", ("pl:kp",)),
    ("Zgodnie z Kodeksem postępowania cywilnego, pozew powinien:", ("pl:kpc",)),
    ("W świetle przepisów Kodeksu cywilnego umowa", ("pl:kc",)),
    ("w świetle k.p.c. sąd", ("pl:kpc",)),
    ("art. 22^1 k.c.", ("pl:kc",)),
    ("art. 5 K. P.", ("pl:kp",)),
    ("Zgodnie z Kodeksem karnym, kto", ("pl:kk",)),
    ("zgodnie z kodeksem cywilnym i art. 10 k.p.c.", ("pl:kc", "pl:kpc")),
    # not mentions: a longer code's name, a citation inside a longer citation, no act at all
    ("Zgodnie z Kodeksem karnym wykonawczym, skazany", ()),
    ("Zgodnie z Kodeksem postępowania karnego, oskarżony", ()),
    ("Kto jest konsumentem?", ()),
    ("Pracodawca nie zapłacił mi za nadgodziny", ()),
])
def test_named_acts(four_codes, query, acts):
    assert named_acts(query) == acts


def test_a_mention_spans_the_name(four_codes):
    (m,) = mentions("Zgodnie z Kodeksem pracy, pracodawca")
    assert (m.act_id, m.text) == ("pl:kp", "Kodeksem pracy")


class RecordingBackend:
    """Four Polish codes indexed; answers every search with one hit and records its act filter."""

    def __init__(self):
        self.seen: list[tuple[str, ...]] = []
        self.queries: list[str] = []

    def acts(self):
        return ["de:bgb", "pl:kc", "pl:kk", "pl:kp", "pl:kpc"]

    def search(self, request):
        self.seen.append(request.filters.act_ids)
        self.queries.append(request.query)
        act = request.filters.act_ids[0]
        return [Hit(f"{act}:art:1:c0", f"{act}:art:1", act, "2025-01-01", 1.0, 1)]


def test_a_named_act_narrows_an_unfiltered_search(four_codes):
    backend = RecordingBackend()
    service = SearchService(backend)
    page = service.search("Zgodnie z Kodeksem pracy, pracodawca jest obowiązany:", retriever="bm25")
    assert backend.seen[-1] == ("pl:kp",) and page.named_acts == ("pl:kp",)
    assert backend.queries[-1] == "pracodawca jest obowiązany:"  # the lead-in naming the act is left out
    # no act named: every Polish code, never the German one
    page = service.search("Kto jest konsumentem?", retriever="bm25")
    assert backend.seen[-1] == ("pl:kc", "pl:kk", "pl:kp", "pl:kpc") and page.named_acts == ()
    # detection off: every Polish code even though one is named
    service.search("Zgodnie z Kodeksem pracy, pracodawca", retriever="bm25", detect_acts=False)
    assert backend.seen[-1] == ("pl:kc", "pl:kk", "pl:kp", "pl:kpc")
    assert backend.queries[-1] == "Zgodnie z Kodeksem pracy, pracodawca"
    # an explicit act filter wins over the name in the query
    page = service.search("Zgodnie z Kodeksem pracy, pracodawca", retriever="bm25", acts=["pl:kc"])
    assert backend.seen[-1] == ("pl:kc",) and page.named_acts == ()
    assert backend.queries[-1] == "Zgodnie z Kodeksem pracy, pracodawca"  # names an act not searched: kept
    service.search("Zgodnie z Kodeksem pracy, pracodawca", retriever="bm25", acts=["pl:kp"])
    assert backend.queries[-1] == "pracodawca"


def test_a_named_act_that_is_not_indexed_is_ignored(four_codes):
    class OnlyKc(RecordingBackend):
        def acts(self):
            return ["pl:kc"]

    backend = OnlyKc()
    SearchService(backend).search("Zgodnie z Kodeksem pracy, pracodawca", retriever="bm25")
    assert backend.seen[-1] == ("pl:kc",)
