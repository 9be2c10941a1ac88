"""Bad input across several Polish acts (issue 14, point 8), through the real ``lexpipe`` commands.

A temporary registry holds the Civil Code and the Kodeks karny (``tests/registry_rows.py``). The
Civil Code is published and indexed (a copy of the session's ``published_corpus``); the k.k. sample
folder offers four bad versions next to the real ``D19970553Lj_2026-07-28.pdf``:

* 2026-08-01 — the Kodeks pracy PDF placed as the k.k. sample (another act),
* 2026-08-02 — the real k.k. with pages 61–80 moved before page 21 (numbering goes backwards),
* 2026-08-03 — the first half of the real k.k.'s bytes (a truncated download),
* 2026-08-04 — the real k.k.'s first 40 pages only (a whole PDF that lost its end).

``lexpipe run --acts pl:kk`` runs them twice: for a new act (no k.k. published yet) and once
2026-07-28 serves. Each bad version is refused or blocked with a reason naming the file, nothing of
it is published, and every other act (and the k.k.'s served version) still answers searches.
Unknown act ids in the CLI and the API are refused before anything runs, naming the known ids.
The runs are real ``lexpipe`` processes; the searches call the same CLI's ``main`` in this process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from core.layout import Layout
from schemas.acts import DEFAULT_REGISTRY

from registry_rows import KC, KK  # tests/, on sys.path via conftest
from pdf_pages import pages  # tests/, on sys.path via conftest

GOOD = "2026-07-28"  # the real k.k. sample
OTHER_ACT, BACKWARDS, TRUNCATED, FIRST_PAGES = "2026-08-01", "2026-08-02", "2026-08-03", "2026-08-04"
BAD = (OTHER_ACT, BACKWARDS, TRUNCATED, FIRST_PAGES)
KC_SERVED = "2025-11-13"  # what published_corpus serves
KK_PDF = "D19970553Lj_{}.pdf"


def with_rows(shipped: str, *rows: str) -> str:
    """``shipped`` (a registry file's text) without its rows of the ids ``rows`` define, then
    ``rows``: the shipped German rows stay, and a Polish row is ours whether or not the shipped
    file has one for the act."""
    ids = {i for row in rows for i in re.findall(r'^id = "([^"]+)"', row, re.M)}
    blocks = re.split(r"(?m)^(?=\[\[act\]\])", shipped)
    return "".join(b for b in blocks if not any(f'id = "{i}"' in b for i in ids)).rstrip() + "\n" + "".join(rows)


def _lexpipe(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lexpipe.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=900)



def _samples(root: Path, sample_dir: Path) -> Path:
    """The k.k. sample folder: the real PDF (a link) and the four bad versions (bytes written
    under the k.k.'s name, so the file the errors name is the one placed)."""
    isap = sample_dir / "pl" / "isap"
    real = isap / KK_PDF.format(GOOD)
    other = isap / "D19740141Lj_2025-12-10.pdf"
    if not (real.exists() and other.exists()):
        pytest.skip("the k.k. or k.p. sample PDF is not in the shared data")
    folder = root / "samples" / "pl" / "isap"
    folder.mkdir(parents=True)
    (folder / KK_PDF.format(GOOD)).symlink_to(real)
    n = len(pdfium.PdfDocument(str(real)))
    data = real.read_bytes()
    bad = {OTHER_ACT: other.read_bytes(),
           BACKWARDS: pages(real, [*range(0, 20), *range(60, 80), *range(20, 60), *range(80, n)]),
           TRUNCATED: data[: len(data) // 2],
           FIRST_PAGES: pages(real, list(range(40)))}
    for version, content in bad.items():
        (folder / KK_PDF.format(version)).write_bytes(content)
    return root / "samples"


class World:
    """One home per scenario, the runs that built it and the environment to ask it with."""

    def __init__(self, root: Path, registry: Path, samples: Path, corpus_home: Path, name: str) -> None:
        self.root = root / name
        self.home = self.root / "home"
        shutil.copytree(corpus_home, self.home, symlinks=True)
        self.env = {**os.environ, "LEXPIPE_ACT_REGISTRY": str(registry), "LEXPIPE_HOME": str(self.home),
                    "DAGSTER_HOME": str(self.root / "dagster_home"), "LEXPIPE_ENCODER": "hashing",
                    "LEXPIPE_SAMPLE_DIR": str(samples), "LEXPIPE_OFFLINE": "true"}
        self.layout = Layout(self.home)
        self.runs: list[subprocess.CompletedProcess] = []

    def run(self, versions: tuple[str, ...]) -> subprocess.CompletedProcess:
        args = ["run", "--acts", "pl:kk", "--no-benchmarks"] + [a for v in versions for a in ("--version", v)]
        self.runs.append(_lexpipe(args, self.env, self.root))
        return self.runs[-1]

    def search(self, act: str, query: str, monkeypatch: pytest.MonkeyPatch, capsys) -> subprocess.CompletedProcess:
        """``lexpipe search`` in this process (its ``main``, the world's environment): a search opens
        no Dagster code, and a subprocess paid ~6 s of imports per search."""
        from lexpipe.cli import main

        for key, value in self.env.items():
            if key.startswith(("LEXPIPE_", "DAGSTER_")):
                monkeypatch.setenv(key, value)
        capsys.readouterr()
        rc = main(["search", query, "--act", act, "--retriever", "bm25", "--json", "--k", "5"])
        out = capsys.readouterr()
        return subprocess.CompletedProcess(["lexpipe", "search"], rc, out.out, out.err)

    def reason(self, version: str) -> str:
        """What ``lexpipe run`` printed under its table for a version that did not publish: from
        "pl:kk <version> " to the next such line or the "serving:" line."""
        out = self.runs[-1].stdout
        m = re.search(rf"(?ms)^pl:kk {version} (.*?)(?=^pl:kk \d{{4}}-|^serving:)", out)
        assert m, f"no reason printed for {version}:\n{out[-4000:]}"
        return m.group(1).strip()


@pytest.fixture(scope="module")
def worlds(tmp_path_factory, sample_dir: Path, published_corpus) -> dict[str, World]:
    root = tmp_path_factory.mktemp("bad_acts")
    registry = root / "acts.toml"
    registry.write_text(with_rows(DEFAULT_REGISTRY.read_text(encoding="utf-8"), KC, KK), encoding="utf-8")
    samples = _samples(root, sample_dir)
    new = World(root, registry, samples, published_corpus.home, "new")  # k.k. not published yet
    new.run(BAD)
    served = World(root, registry, samples, published_corpus.home, "served")  # k.k. 2026-07-28 serves
    good = served.run((GOOD,))
    assert good.returncode == 0, good.stdout[-3000:] + good.stderr[-3000:]
    served.run(BAD)
    return {"new": new, "served": served}


SCENARIOS = ("new", "served")

# what the reason names besides the file, per version and scenario
EXPECTED = {
    (OTHER_ACT, "new"): ["FAILED: pl__statutes__articles: ", "StatuteParseError", "not Kodeks karny (Dz. U. 1997 Nr 88 poz. 553)", "the title 'Kodeks pracy'"],
    (BACKWARDS, "new"): ["BLOCKED: articles_valid: pl:kk ", "expect_column_values_to_be_increasing(sort_key)"],
    (TRUNCATED, "new"): ["FAILED: pl__statutes__raw_pdf: ", "no %%EOF", "(truncated?)"],
    (FIRST_PAGES, "new"): ["FAILED: pl__statutes__articles: ", "the PDF has 40 pages but its running header counts 148"],
    (FIRST_PAGES, "served"): ["BLOCKED: articles_valid: pl:kk ", "expect_table_row_count_to_be_between"],
}


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("version", BAD)
def test_a_bad_version_is_refused_naming_the_file_and_not_published(worlds, scenario, version):
    world = worlds[scenario]
    assert world.runs[-1].returncode == 1, world.runs[-1].stdout[-3000:] + world.runs[-1].stderr[-3000:]
    reason = world.reason(version)
    assert KK_PDF.format(version) in reason, reason  # the file placed, by name
    for fragment in EXPECTED.get((version, scenario)) or EXPECTED[(version, "new")]:
        assert fragment in reason, reason
    if version == BACKWARDS:  # the article that goes back, and the one it follows
        assert re.search(r"pl:kk:art:\S+ \(after pl:kk:art:\S+\)", reason), reason
    assert not world.layout.version_dir("pl:kk", version).exists()
    current = world.layout.current_file("pl:kk")
    if scenario == "new":
        assert not current.exists()
    else:
        assert json.loads(current.read_text())["version"] == GOOD
        assert json.loads(current.read_text())["published_versions"] == [GOOD]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_other_act_keeps_serving(worlds, scenario, published_corpus, monkeypatch, capsys):
    world = worlds[scenario]
    current = world.layout.current_file("pl:kc")
    assert current.read_text() == Layout(published_corpus.home).current_file("pl:kc").read_text()
    found = world.search("pl:kc", "umowa leasingu forma dokumentowa", monkeypatch, capsys)
    assert found.returncode == 0, found.stderr[-2000:]
    page = json.loads(found.stdout)
    assert page["versions"] == {"pl:kc": KC_SERVED}
    assert page["hits"] and all(h["article_id"].startswith("pl:kc:") for h in page["hits"])


def test_the_act_keeps_serving_its_last_good_version(worlds, monkeypatch, capsys):
    found = worlds["served"].search("pl:kk", "Kto zabiera w celu przywłaszczenia cudzą rzecz ruchomą", monkeypatch,
                                    capsys)
    assert found.returncode == 0, found.stderr[-2000:]
    page = json.loads(found.stdout)
    assert page["versions"] == {"pl:kk": GOOD}
    assert "pl:kk:art:278" in [h["article_id"] for h in page["hits"][:3]]


def test_a_new_act_with_only_bad_versions_is_not_searchable(worlds, monkeypatch, capsys):
    found = worlds["new"].search("pl:kk", "kradzież", monkeypatch, capsys)
    assert found.returncode == 2 and "unknown act 'pl:kk'" in found.stderr, found.stderr[-2000:]


# -- unknown act ids ---------------------------------------------------------------------------------


@pytest.fixture
def registry_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    registry = tmp_path / "acts.toml"
    registry.write_text(with_rows(DEFAULT_REGISTRY.read_text(encoding="utf-8"), KC, KK), encoding="utf-8")
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(registry))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    monkeypatch.setenv("LEXPIPE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LEXPIPE_ENCODER", "hashing")
    return tmp_path


@pytest.mark.parametrize("argv", [
    ["run", "--acts", "pl:xx"], ["run", "--acts", "pl:kk,pl:xx"], ["search", "umowa", "--act", "pl:xx"],
    ["search", "umowa", "--act", "pl:kc", "--act", "pl:xx"], ["index", "--act", "pl:xx"],
    ["prefect", "refresh", "--act", "pl:xx"],
])
def test_an_unknown_act_id_in_the_cli_is_refused_before_anything_runs(argv, registry_env, capsys):
    from lexpipe.cli import main

    home = registry_env / "home"
    assert main([*argv, "--home", str(home)]) == 2
    err = capsys.readouterr().err
    assert "unknown act id 'pl:xx'" in err, err
    assert "pl:kc" in err and "pl:kk" in err and "de:bgb" in err, err  # the ids the registry holds
    assert not home.exists() and not (registry_env / "dagster_home").exists()  # nothing ran


@pytest.mark.parametrize("flow", ["refresh", "benchmark", "answers"])
def test_a_prefect_flow_on_one_act_is_refused_without_it(flow, registry_env, capsys):
    """No act is assumed (issue 24): the flow names its act, or nothing runs."""
    from lexpipe.cli import main

    assert main(["prefect", flow, "--home", str(registry_env / "home")]) == 2
    assert "--act is required" in capsys.readouterr().err
    assert not (registry_env / "home").exists()


def test_index_is_refused_without_an_act(registry_env, capsys):
    from lexpipe.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["index", "--home", str(registry_env / "home")])
    assert exc.value.code == 2 and "--act" in capsys.readouterr().err
    assert not (registry_env / "home").exists()


def test_prefect_refresh_refuses_an_act_it_cannot_refresh(registry_env, capsys):
    from lexpipe.cli import main

    assert main(["prefect", "refresh", "--act", "de:bgb", "--home", str(registry_env / "home")]) == 2
    err = capsys.readouterr().err
    assert "'de:bgb' is not an act of source 'eli'" in err and "pl:kc, pl:kk" in err, err
    assert not (registry_env / "home").exists()


@pytest.fixture
def client(registry_env):
    from fastapi.testclient import TestClient

    from lexpipe.api import create_app
    from pipelines.retrieval.analyzers import get_analyzer
    from pipelines.retrieval.embedded_backend import EmbeddedBackend
    from pipelines.retrieval.encoders import HashingEncoder
    from pipelines.retrieval.index_build import index_root
    from pipelines.retrieval.service import SearchService

    backend = EmbeddedBackend(index_root(Layout(registry_env / "home")), encoder=HashingEncoder(),
                              analyzer=get_analyzer("pl"))
    return TestClient(create_app(SearchService(backend)))


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("acts", [["pl:xx"], ["pl:kc", "pl:xx"]])
def test_an_unknown_act_id_in_the_api_is_a_404_naming_the_known_ids(client, method, acts):
    if method == "GET":
        r = client.get("/search", params={"q": "umowa", "act": acts})
    else:
        r = client.post("/search", json={"q": "umowa", "act": acts})
    assert r.status_code == 404 and r.json()["field"] == "act", r.text  # an unknown act is 404 everywhere
    detail = r.json()["detail"]
    assert detail.startswith("unknown act 'pl:xx'; known acts: "), detail
    assert all(a in detail for a in ("pl:kc", "pl:kk", "de:bgb", "de:cases")), detail


@pytest.mark.parametrize("jurisdiction", ["pl", "fr"])
def test_load_refuses_a_jurisdiction_without_a_whole_law_source(jurisdiction, registry_env, capsys):
    """``lexpipe load`` reads a gesetze-style repository: only German law has one. Another
    jurisdiction is refused by name before anything is written (Polish acts come one changeset at a
    time through ``lexpipe run``)."""
    from lexpipe.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["load", jurisdiction, "--home", str(registry_env / "home")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"invalid choice: '{jurisdiction}'" in err and "'de'" in err, err
    assert not (registry_env / "home").exists() and not (registry_env / "dagster_home").exists()
