"""Do the two BGB sources say the same? bundestag/gesetze Markdown (~2021/22 text state) against the
gesetze-im-internet.de PDF (2024 text state).

Compared per § (article-level id ``de:bgb:par:573b``):

* **set of §§** — ids in both, only in one. A § only in the Markdown whose number falls inside a
  ``§§ 1889 bis 1921 (weggefallen)`` range of the PDF is repealed there, just not enumerated (a range
  does not say which lettered §§ 1901a … it covered), so it counts as present.
* **text** — :func:`~pipelines.german_statute_markdown.normalize_text` of the § text (one kind of
  quote, dash and space; markers kept) and the status must be equal. Titles are compared apart.

Differences between the sources are mostly real amendments between the two text states
(Vormundschafts- und Betreuungsrecht 2023, Stiftungsrecht 2023, MoPeG 2024, …). They are listed
with a word diff, and as a ``schemas.arrow.DIFF`` table built by :func:`pipelines.version_diff.diff_versions`
over the normalised ARTICLES tables (Markdown = old, PDF = new), so the same added / changed /
repealed / removed vocabulary as between two Polish versions applies.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import pyarrow as pa

from pipelines.german_statute_markdown import GermanStatute, articles_table, normalize_text, number_key
from pipelines.version_diff import diff_versions, word_diff


@dataclass
class SectionDifference:
    id: str
    number: str
    markdown_status: str
    pdf_status: str
    markdown_text: str  # normalised
    pdf_text: str  # normalised
    word_diff: str  # [-removed-]{+added+} markdown → pdf


@dataclass
class SourceComparison:
    act_id: str
    markdown_version: object
    pdf_version: object
    markdown_count: int
    pdf_count: int
    common: list[str]  # § numbers in both
    only_markdown: list[str]
    only_pdf: list[str]
    only_markdown_in_pdf_ranges: list[str]  # subset of only_markdown: inside a repealed §§ range of the PDF
    text_equal: int
    differing: list[SectionDifference]
    title_differences: list[tuple[str, str, str]] = field(default_factory=list)  # (number, md, pdf)
    diff: pa.Table | None = None  # schemas.arrow.DIFF, markdown → pdf
    _restructured: set[str] = field(default_factory=set)  # common §§ whose status or title differs

    @property
    def set_agreement(self) -> float:
        """Share of all §§ (union of both sources) present in both; §§ of a repealed range count."""
        union = len(self.common) + len(self.only_markdown) + len(self.only_pdf)
        return (len(self.common) + len(self.only_markdown_in_pdf_ranges)) / union if union else 1.0

    @property
    def text_agreement(self) -> float:
        """Share of common §§ with equal normalised text and status."""
        return self.text_equal / len(self.common) if self.common else 0.0

    @property
    def stable(self) -> list[str]:
        """Common §§ with the same status and the same title in both sources: not visibly
        restructured between the two text states (a new title or a repeal marks an amendment)."""
        return [n for n in self.common if n not in self._restructured]

    @property
    def stable_text_agreement(self) -> float:
        """Text agreement over :attr:`stable` §§ (a secondary figure: amendments that keep title and
        status still count as differences here)."""
        stable = self.stable
        differing = {d.number for d in self.differing}
        return sum(n not in differing for n in stable) / len(stable) if stable else 0.0

    def summary(self) -> dict:
        return {
            "act_id": self.act_id, "markdown_version": str(self.markdown_version),
            "pdf_version": str(self.pdf_version), "markdown_sections": self.markdown_count,
            "pdf_sections": self.pdf_count, "common": len(self.common),
            "only_markdown": len(self.only_markdown), "only_markdown_in_pdf_ranges": len(self.only_markdown_in_pdf_ranges),
            "only_pdf": len(self.only_pdf), "set_agreement": round(self.set_agreement, 4),
            "text_equal": self.text_equal, "text_differing": len(self.differing),
            "text_agreement": round(self.text_agreement, 4), "title_differences": len(self.title_differences),
            "stable_sections": len(self.stable), "stable_text_agreement": round(self.stable_text_agreement, 4),
        }

    def markdown_report(self, max_sections: int | None = None) -> str:
        s = self.summary()
        lines = [f"# {self.act_id}: Markdown ({self.markdown_version}) vs PDF ({self.pdf_version})", "",
                 f"§§: {s['markdown_sections']} Markdown, {s['pdf_sections']} PDF, {s['common']} in both; "
                 f"set agreement {s['set_agreement']:.2%}; text agreement {s['text_agreement']:.2%} "
                 f"({s['text_equal']}/{s['common']}); on the {s['stable_sections']} §§ with the same title and "
                 f"status {s['stable_text_agreement']:.2%}", "",
                 f"Only in the Markdown ({len(self.only_markdown)}; {len(self.only_markdown_in_pdf_ranges)} of them "
                 f"inside a repealed §§ range of the PDF): {', '.join(self.only_markdown) or '—'}", "",
                 f"Only in the PDF ({len(self.only_pdf)}): {', '.join(self.only_pdf) or '—'}", ""]
        for d in self.differing[:max_sections]:
            status = "" if d.markdown_status == d.pdf_status else f" ({d.markdown_status} → {d.pdf_status})"
            lines += [f"## § {d.number}{status}", "", d.word_diff or "(no text)", ""]
        return "\n".join(lines)


def _ranges(st: GermanStatute) -> list[tuple[tuple[int, str], tuple[int, str]]]:
    out = []
    seen = set()
    for s in st.sections:
        if s.range_label and s.range_label not in seen and s.status == "repealed" and " bis " in s.range_label:
            seen.add(s.range_label)
            first, _, last = s.range_label.split(" ", 1)[1].partition(" bis ")
            out.append((number_key(first), number_key(last)))
    return out


def _normalised_articles(st: GermanStatute) -> pa.Table:
    """ARTICLES table with normalised text and a hash over it: what the comparison sees."""
    t = articles_table(st)
    texts = [normalize_text(x) for x in t.column("text").to_pylist()]
    statuses = t.column("status").to_pylist()
    hashes = [hashlib.sha256(f"{x}\x00{s}".encode()).hexdigest() for x, s in zip(texts, statuses)]
    t = t.set_column(t.schema.get_field_index("text"), "text", pa.array(texts, pa.string()))
    return t.set_column(t.schema.get_field_index("content_hash"), "content_hash", pa.array(hashes, pa.string()))


def compare_sources(markdown: GermanStatute, pdf: GermanStatute) -> SourceComparison:
    """Compare the §§ of the same act from the two sources."""
    if markdown.act.act_id != pdf.act.act_id:
        raise ValueError(f"different acts: {markdown.act.act_id} ({markdown.source}) vs {pdf.act.act_id} ({pdf.source})")
    md = {s.number: s for s in markdown.sections if s.kind != "preamble"}
    pd = {s.number: s for s in pdf.sections if s.kind != "preamble"}
    common = sorted(md.keys() & pd.keys(), key=number_key)
    only_md = sorted(md.keys() - pd.keys(), key=number_key)
    only_pdf = sorted(pd.keys() - md.keys(), key=number_key)
    ranges = _ranges(pdf)
    in_ranges = [n for n in only_md if any(lo <= number_key(n) <= hi for lo, hi in ranges)]
    equal = 0
    differing: list[SectionDifference] = []
    titles: list[tuple[str, str, str]] = []
    restructured: set[str] = set()
    for n in common:
        a, b = md[n], pd[n]
        if a.status != b.status or normalize_text(a.title) != normalize_text(b.title):
            restructured.add(n)
        ta, tb = normalize_text(a.text), normalize_text(b.text)
        if ta == tb and a.status == b.status:
            equal += 1
        else:
            differing.append(SectionDifference(a.id, n, a.status, b.status, ta, tb, word_diff(ta, tb)))
        if a.title and b.title and normalize_text(a.title) != normalize_text(b.title):
            titles.append((n, a.title, b.title))
    diff = diff_versions(_normalised_articles(markdown), _normalised_articles(pdf))
    return SourceComparison(markdown.act.act_id, markdown.version, pdf.version, len(md), len(pd), common,
                            only_md, only_pdf, in_ranges, equal, differing, titles, diff, restructured)

