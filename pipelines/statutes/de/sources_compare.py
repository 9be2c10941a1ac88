"""Do the two BGB sources say the same? bundestag/gesetze Markdown (~2021/22 text state) against the
gesetze-im-internet.de PDF (2024 text state).

Compared per § (article-level id ``de:bgb:par:573b``):

* **set of §§** — ids in both, only in one. A § only in the Markdown whose number falls inside a
  ``§§ 1889 bis 1921 (weggefallen)`` range of the PDF is repealed there, just not enumerated (a range
  does not say which lettered §§ 1901a … it covered), so it counts as present.
* **text** — :func:`~pipelines.statutes.de.structure.normalize_text` of the § text (one kind of
  quote, dash and space; markers kept) and the status must be equal. Titles are compared apart.

Every differing § is classified by :mod:`pipelines.statutes.de.sources_classify` as an amendment (the
law changed between the text states: Vormundschafts- und Betreuungsrecht 2023, Stiftungsrecht 2023,
MoPeG 2024, …), an editorial variant (the two source files print the same words in another form:
"Ort"/"Orte") or parser residue (what our parsers could have produced from identical text). The
figures that matter therefore come in three: agreement over all §§ in both (the issue's figure),
agreement over the §§ *not amended* (what parsing and normalisation can reach), and the residue
count. Differences are also a ``schemas.arrow.DIFF`` table over the ARTICLES tables (Markdown = old,
PDF = new), so the same added / changed / repealed / removed vocabulary as between two Polish
versions applies (:func:`pipelines.statutes.de.build.diff_german`: the published diff asset's
rules, including ``editorial``; the table also holds §§ whose title alone changed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from pipelines.statutes.de.sources_classify import (
    AMENDMENT, EDITORIAL, KINDS, REFORMS, RESIDUE, SectionClass, classify_section, reform_of,
)
from pipelines.statutes.de.build import diff_german
from pipelines.statutes.de.model import GermanStatute, number_key
from pipelines.statutes.de.structure import normalize_text
from pipelines.statutes.de.tables import articles_table
from pipelines.statutes.diff import word_diff


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
    classes: list[SectionClass] = field(default_factory=list)  # one per entry of ``differing``, same order

    def of_kind(self, kind: str) -> list[SectionClass]:
        """Differing common §§ of one class (``amendment`` | ``editorial`` | ``residue``)."""
        return [c for c in self.classes if c.kind == kind]

    @property
    def not_amended(self) -> int:
        """Common §§ whose text or status was not amended between the two text states."""
        return len(self.common) - len(self.of_kind(AMENDMENT))

    @property
    def not_amended_agreement(self) -> float:
        """Text agreement over the §§ not amended: what parsers and normalisation can reach; the
        shortfall is editorial variants of the sources plus parser residue."""
        return self.text_equal / self.not_amended if self.not_amended else 0.0

    def per_reform(self) -> list[dict]:
        """Per known reform: amended common §§ inside its ranges, §§ only in the PDF (inserted) and
        only in the Markdown (repealed within a range, or removed) inside them, and amended §§
        outside every range whose new text newly cites one of its §§ (``cites``: consequential
        amendments such as § 630d "§ 1901a" → "§ 1827"). The last row collects the rest."""
        names = [r.name for r in REFORMS] + ["(no known reform)"]
        rows = {n: {"reform": n, "amended": 0, "inserted": 0, "removed": 0, "cites": 0} for n in names}

        def add(number: str, column: str) -> None:
            r = reform_of(number)
            rows[r.name if r else names[-1]][column] += 1

        for c in self.of_kind(AMENDMENT):
            if c.reform is None and c.cites is not None:
                rows[c.cites.name]["cites"] += 1
            else:
                add(c.number, "amended")
        for n in self.only_pdf:
            add(n, "inserted")
        for n in self.only_markdown:
            add(n, "removed")
        for r in rows.values():
            r["total"] = r["amended"] + r["inserted"] + r["removed"] + r["cites"]
        return list(rows.values())

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
            **{kind: len(self.of_kind(kind)) for kind in KINDS},
            "not_amended": self.not_amended, "not_amended_agreement": round(self.not_amended_agreement, 4),
            "max_text_agreement": round(self.not_amended / len(self.common), 4) if self.common else 0.0,
        }

    def markdown_report(self, max_sections: int | None = None) -> str:
        """The readable listing: figures, amendments per reform, then every differing § by class
        with a short word diff of the hunks that decided its class (``max_sections`` per class)."""
        s = self.summary()
        lines = [f"# {self.act_id}: Markdown ({self.markdown_version}) vs PDF ({self.pdf_version})", "",
                 f"§§: {s['markdown_sections']} Markdown, {s['pdf_sections']} PDF, {s['common']} in both; "
                 f"set agreement {s['set_agreement']:.2%}; text agreement {s['text_agreement']:.2%} "
                 f"({s['text_equal']}/{s['common']}); on the {s['stable_sections']} §§ with the same title and "
                 f"status {s['stable_text_agreement']:.2%}", "",
                 f"Differing §§ by class: {s[AMENDMENT]} amendment, {s[EDITORIAL]} editorial, {s[RESIDUE]} "
                 f"parser residue. Agreement over the {s['not_amended']} §§ not amended: "
                 f"{s['not_amended_agreement']:.2%} ({s['text_equal']}/{s['not_amended']}); the highest "
                 f"agreement over all §§ in both that the amendments leave possible: {s['max_text_agreement']:.2%}.",
                 "", "Classes are decided from the word diff alone (`pipelines/statutes/de/sources_classify.py`). "
                 "Per reform: amended §§ inside its ranges, §§ inserted/removed there, and amended §§ outside "
                 "every range that newly cite one of its §§ (consequential amendments).", "",
                 "| reform | act | in force | amended | inserted | removed | cites its §§ | total |",
                 "|---|---|---|---:|---:|---:|---:|---:|"]
        acts = {r.name: (r.act, str(r.in_force)) for r in REFORMS}
        for r in self.per_reform():
            act, when = acts.get(r["reform"], ("", ""))
            lines.append(f"| {r['reform']} | {act} | {when} | {r['amended']} | {r['inserted']} | {r['removed']} "
                         f"| {r['cites']} | {r['total']} |")
        lines += ["", f"Only in the Markdown ({len(self.only_markdown)}; {len(self.only_markdown_in_pdf_ranges)} of "
                      f"them inside a repealed §§ range of the PDF): {', '.join(self.only_markdown) or '—'}", "",
                  f"Only in the PDF ({len(self.only_pdf)}): {', '.join(self.only_pdf) or '—'}", ""]
        headings = {AMENDMENT: "Amendments", EDITORIAL: "Editorial variants (same words, another form)",
                    RESIDUE: "Parser residue"}
        for kind in KINDS:
            group = self.of_kind(kind)
            lines += [f"## {headings[kind]} ({len(group)})", ""]
            if kind == AMENDMENT:  # by reform, then consequential ones by the reform they cite, then the rest
                order = [r.name for r in REFORMS]
                group = sorted(group, key=lambda c: (0, order.index(c.reform.name)) if c.reform else
                               (1, order.index(c.cites.name)) if c.cites else (2, 0))
            for c in group[:max_sections]:
                status = f" ({c.status_change})" if c.status_change else ""
                where = (f" — {c.reform.name}" if c.reform else f" — cites §§ of {c.cites.name}" if c.cites
                         else " — no known reform" if kind == AMENDMENT else "")
                lines.append(f"- **§ {c.number}**{status}{where} [{', '.join(c.reasons)}]: {c.evidence()}")
            lines.append("" if group else "none\n")
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
    classes = [classify_section(d.number, d.markdown_text, d.pdf_text, d.markdown_status, d.pdf_status,
                                title=normalize_text(pd[d.number].title)) for d in differing]
    diff = diff_german(articles_table(markdown), articles_table(pdf))
    return SourceComparison(markdown.act.act_id, markdown.version, pdf.version, len(md), len(pd), common,
                            only_md, only_pdf, in_ranges, equal, differing, titles, diff, restructured, classes)

