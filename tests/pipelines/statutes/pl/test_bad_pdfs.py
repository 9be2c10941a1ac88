"""Bad input for every ISAP act of the registry, not only the Civil Code: a PDF of another act, a
PDF whose article numbering goes backwards, a PDF cut short (bytes or pages).

Real sample PDFs from ``../shared/data/pl/isap`` (k.c., k.p.c., k.p., k.k.), changed in a temporary
folder; the acts come from a temporary registry written out row by row (``tests/registry_rows.py``),
so these tests do not depend on which Polish rows ``schemas/acts.toml`` ships. The whole pipeline
(Dagster, publishing, search) with the same files: ``tests/lexpipe/test_bad_acts.py``.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from pathlib import Path

import pytest

from core.layout import Layout
from pipelines.pdf_lines import PdfReadError, page_count, read_lines
from pipelines.statutes.pl.build import parse_step
from pipelines.statutes.pl.parser import StatuteParseError, parse_statute, printed_page_total
from pipelines.statutes.pl.tables import articles_table
from pipelines.validation import validate_table
from schemas.acts import ActRegistry
from schemas.expectations import articles_suite

from registry_rows import KC, KK, KP, KPC  # tests/, on sys.path via conftest
from pdf_pages import pages  # tests/, on sys.path via conftest

# one sample file per act: (file, title as page 1 prints it)
SAMPLES = {
    "pl:kc": ("D19640093Lj_2025-11-13.pdf", "Kodeks cywilny"),
    "pl:kpc": ("D19640296Lj_2024-02-16.pdf", "Kodeks postępowania cywilnego"),
    "pl:kp": ("D19740141Lj_2025-12-10.pdf", "Kodeks pracy"),
    "pl:kk": ("D19970553Lj_2026-07-28.pdf", "Kodeks karny"),
}


@pytest.fixture(scope="module")
def registry_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("registry") / "acts.toml"
    path.write_text(KC + KPC + KP + KK, encoding="utf-8")
    assert set(ActRegistry.load(path).ids()) == set(SAMPLES)
    return path


@pytest.fixture(autouse=True)
def polish_registry(registry_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEXPIPE_ACT_REGISTRY", str(registry_file))


def _sample(sample_dir: Path, act_id: str) -> Path:
    path = sample_dir / "pl" / "isap" / SAMPLES[act_id][0]
    if not path.exists():
        pytest.skip(f"{path.name} is not in the shared data")
    return path


def _version(path: Path) -> dt.date:
    return dt.date.fromisoformat(path.stem.rsplit("_", 1)[1])



# -- a PDF of another act --------------------------------------------------------------------------


@pytest.mark.parametrize("pdf_act,as_act", list(itertools.permutations(SAMPLES, 2)))
def test_a_pdf_of_another_act_is_refused_naming_the_file_and_both_acts(pdf_act, as_act, sample_dir, tmp_path):
    """Placed under another act's name (the file renamed as that act's sample), the PDF is refused
    from its first page: the error names the file, the act expected and the act page 1 prints."""
    real = _sample(sample_dir, pdf_act)
    placed = tmp_path / f"{Path(SAMPLES[as_act][0]).stem.split('_')[0]}_{_version(real)}.pdf"
    placed.symlink_to(real)
    with pytest.raises(StatuteParseError) as err:
        parse_statute(placed, _version(real), as_act)
    message = str(err.value)
    assert message.startswith(f"{placed}: not {SAMPLES[as_act][1]} ("), message
    assert f"the title {SAMPLES[pdf_act][1]!r}" in message, message


# -- article numbering that goes backwards ---------------------------------------------------------


@pytest.mark.parametrize("act_id", ["pl:kk", "pl:kp"])
def test_numbering_that_goes_backwards_fails_the_blocking_check_naming_the_articles(act_id, sample_dir, tmp_path):
    """Pages 61–80 moved before page 21 (every article still there once): the parse keeps document
    order, and the blocking ``articles_valid`` suite fails on ``sort_key`` naming the article that
    goes back and the one it follows — the same suite that passes on the real file."""
    real = _sample(sample_dir, act_id)
    n = page_count(real)
    order = [*range(0, 20), *range(60, 80), *range(20, 60), *range(80, n)]
    shuffled = tmp_path / real.name
    shuffled.write_bytes(pages(real, order))
    parsed = parse_statute(shuffled, _version(real), act_id)
    report = validate_table(articles_table(parsed), articles_suite(allow_pending=True), name="articles")
    assert not report.success
    failed = report.failed_expectation("expect_column_values_to_be_increasing", "sort_key")
    assert failed is not None, report.summary()
    assert [f.label() for f in report.failed] == ["expect_column_values_to_be_increasing(sort_key)"], report.summary()
    # the first article of page 21, after the last article of page 80
    first_back = next(a for a in parsed.articles if a.page_start == 41)  # page 21 is the 41st page now
    assert re.search(rf"{re.escape(first_back.id)} \(after {re.escape(act_id)}:art:\S+\)", report.summary()), \
        report.summary()


# -- a PDF cut short -------------------------------------------------------------------------------


@pytest.mark.parametrize("act_id", list(SAMPLES))
def test_a_pdf_cut_in_half_is_refused_naming_the_file(act_id, sample_dir, tmp_path):
    real = _sample(sample_dir, act_id)
    cut = tmp_path / real.name
    data = real.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(PdfReadError, match=rf"^{re.escape(str(cut))}: not a readable PDF"):
        parse_statute(cut, _version(real), act_id)


@pytest.mark.parametrize("name", sorted(p for p, _ in SAMPLES.values()) + ["D19640093Lj_2024-12-19.pdf",
                                                                         "D19640296Lj_2023-08-16.pdf",
                                                                         "D19740141Lj_2016-09-22.pdf"])
def test_the_running_header_counts_the_pages_of_every_sample(name, sample_dir):
    """"©Kancelaria Sejmu s. 1/148": what the first-version page check relies on, in every layout."""
    path = sample_dir / "pl" / "isap" / name
    if not path.exists():
        pytest.skip(f"{name} is not in the shared data")
    assert printed_page_total(read_lines(path, workers=1, pages=[0])) == page_count(path)


@pytest.mark.parametrize("act_id", ["pl:kk", "pl:kp"])
def test_the_first_pages_of_a_new_act_are_refused_naming_the_file(act_id, sample_dir, tmp_path):
    """A whole, readable PDF holding only the first 40 pages of a new act (nothing published to
    compare its article count with): the parse step refuses it, naming the source and both page
    counts, and stages nothing."""
    real = _sample(sample_dir, act_id)
    total = page_count(real)
    src = tmp_path / "sample" / real.name
    src.parent.mkdir()
    src.write_bytes(pages(real, list(range(40))))
    layout = Layout(tmp_path / "home")
    version = _version(real).isoformat()
    with pytest.raises(StatuteParseError) as err:
        parse_step(layout, act_id=act_id, version=version, pdf_path=src, source_sha256="0" * 64,
                   source_url=src.as_uri(), workers=1)
    message = str(err.value)
    assert message.startswith(f"{act_id} {version} from {src.as_uri()}: "), message
    assert f"the PDF has 40 pages but its running header counts {total}" in message, message
    assert "not published" in message
    assert not (layout.staging_dir(act_id, version) / "articles.parquet").exists()
    assert not layout.version_dir(act_id, version).exists()
