"""The HTML pages (``/ui/search``, ``/ui/units/{id}``) over the published k.c. versions: what they show
agrees with the JSON API and the read layer, errors are pages with the message, input is escaped."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from fastapi.testclient import TestClient

from core.settings import Settings
from corpus_fixtures import NEW, OLD
from lexpipe.api import create_app
from lexpipe.web.views import PAGE_SIZE, SearchParams, candidate_k, sup
from pipelines.reads import ReadService
from pipelines.retrieval.analyzers import get_analyzer
from pipelines.retrieval.service import SearchService

UNIT = "pl:kc:art:709^2"
OLD_TEXT = "Umowa leasingu powinna być zawarta na piśmie pod rygorem nieważności."
NEW_TEXT = "Umowa leasingu wymaga zachowania formy dokumentowej."
VOID = {"input", "meta", "link", "br", "img", "hr"}


class Node:
    def __init__(self, tag: str, attrs: dict, parent: "Node | None"):
        self.tag, self.attrs, self.parent, self.children = tag, attrs, parent, []

    def text(self) -> str:
        return " ".join("".join(c if isinstance(c, str) else c.text() for c in self.children).split())

    def inner(self) -> str:  # markup of the children, tags kept (for <mark>/<del>/<ins>)
        out = []
        for c in self.children:
            out.append(c if isinstance(c, str) else f"<{c.tag}>{c.inner()}</{c.tag}>")
        return "".join(out)

    def all(self, tag: str | None = None, **attrs) -> list["Node"]:
        found = []
        for c in self.children:
            if isinstance(c, Node):
                if (tag is None or c.tag == tag) and all(_has(c, k, v) for k, v in attrs.items()):
                    found.append(c)
                found.extend(c.all(tag, **attrs))
        return found

    def one(self, tag: str | None = None, **attrs) -> "Node":
        found = self.all(tag, **attrs)
        assert len(found) == 1, (tag, attrs, len(found))
        return found[0]


def _has(node: Node, key: str, value) -> bool:
    key = key.rstrip("_").replace("_", "-")
    if key == "class":
        return value in (node.attrs.get("class") or "").split()
    return node.attrs.get(key) == value if value is not True else key in node.attrs


class _Parser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#root", {}, None)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(html: str) -> Node:
    p = _Parser()
    p.feed(html)
    return p.root


@pytest.fixture(scope="module")
def service(corpus_home: Path) -> SearchService:
    return SearchService.from_settings(Settings(home=corpus_home, encoder="hashing"))


@pytest.fixture(scope="module")
def client(corpus_home: Path, service: SearchService) -> TestClient:
    return TestClient(create_app(service, reads=ReadService.at(corpus_home)))


def page(client: TestClient, url: str, code: int = 200, **params) -> Node:
    r = client.get(url, params=params) if params else client.get(url)  # params={} would drop url's query
    assert r.status_code == code, (url, params, r.status_code, r.text[:500])
    assert r.headers["content-type"].startswith("text/html")
    return parse(r.text)


def hits(doc: Node) -> list[Node]:
    return doc.one("ol", id="results").all("li", class_="hit")


def test_root_redirects_to_the_search_page_and_pages_stay_out_of_the_schema(client):
    r = client.get("/", follow_redirects=False)
    assert (r.status_code, r.headers["location"]) == (307, "/ui/search")
    paths = client.get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p == "/" or p.startswith("/ui")], sorted(paths)
    assert client.get("/ui/static/lexpipe.css").status_code == 200


def test_empty_search_page_is_a_labelled_get_form(client):
    doc = page(client, "/ui/search", lang="pl")
    assert doc.one("html").attrs["lang"] == "pl"
    form = doc.one("form", id="search-form")
    assert (form.attrs["role"], form.attrs["method"], form.attrs["action"]) == ("search", "get", "/ui/search")
    labels = {lab.attrs["for"] for lab in form.all("label")}
    for cid in ("q", "retriever", "act", "status", "as_of", "target"):
        assert cid in labels, cid
        assert form.one(id=cid).attrs["name"] == cid
    assert form.one("input", id="q").attrs["type"] == "search"
    assert form.one("input", id="as_of").attrs["type"] == "date"
    assert form.one("select", id="act").all("option")[0].attrs["value"] == ""
    assert form.one("button", id="search-submit").attrs["type"] == "submit"
    assert doc.one("a", class_="skip-link").attrs["href"] == "#main" and doc.one("main", id="main")
    assert doc.one(id="no-results") and not doc.all(id="results")


def test_search_page_lists_the_api_hits_with_inflected_terms_marked(client):
    api = client.get("/search", params={"q": "umowy leasingu", "k": PAGE_SIZE}).json()["hits"]
    doc = page(client, "/ui/search", q="umowy leasingu")
    shown = hits(doc)
    assert [h.attrs["data-article-id"] for h in shown] == [h["article_id"] for h in api]
    for li, want in zip(shown, api):
        assert (li.attrs["data-act-id"], li.attrs["data-version"], li.attrs["data-status"]) == \
            (want["act_id"], want["version"], want["status"])
        link = li.one("a", class_="hit-link")
        assert unquote(link.attrs["href"]) == f"/ui/units/{want['article_id']}?as_of={want['version']}"
        assert li.one("span", class_="hit-act").text() == "k.c."
        assert li.one("span", class_="hit-version").text().endswith(want["version"])
        parents = " › ".join(p.strip() for p in want["heading_path"].split("›")[:-1])
        assert li.one("span", class_="hit-path").text() == (parents or "Kodeks cywilny (k.c.)")
    target = next(li for li in shown if li.attrs["data-article-id"] == UNIT)
    assert target.one("p", class_="snippet").inner() == f"<mark>Umowa leasingu</mark> {NEW_TEXT.split(' ', 2)[2]}"
    # every snippet word whose BM25 term is a query term is marked
    analyzer = get_analyzer("pl")
    terms = set(analyzer.analyze("umowy leasingu"))
    for li in shown:
        snip = li.one("p", class_="snippet")
        marked = {t for m in snip.all("mark") for t in analyzer.analyze(m.text())}
        assert set(analyzer.analyze(snip.text())) & terms <= marked, li.attrs["data-article-id"]


def test_facet_counts_are_the_candidates_per_act_and_status(client, service):
    for params in ({"q": "umowa najmu"}, {"q": "umowa najmu", "page": "2"}, {"q": "uchylony", "retriever": "bm25"}):
        doc = page(client, "/ui/search", **params)
        sp = SearchParams(q=params["q"], retriever=params.get("retriever", "hybrid"), page=int(params.get("page", 1)))
        candidates = service.search(sp.q, k=candidate_k(sp), retriever=sp.retriever).hits
        acts = {li.attrs["data-act-id"]: int(li.attrs["data-count"]) for li in doc.one(id="facet-act").all("li")}
        statuses = {li.attrs["data-status"]: int(li.attrs["data-count"]) for li in doc.one(id="facet-status").all("li")}
        assert acts == {"pl:kc": len(candidates)}
        want = {}
        for h in candidates:
            want[h.status] = want.get(h.status, 0) + 1
        assert statuses == want and sum(statuses.values()) == len(candidates)
        assert str(len(candidates)) in doc.one(id="result-count").text()
    link = doc.one(id="facet-status").one("li", data_status="repealed").one("a").attrs["href"]
    assert parse_qs(urlsplit(link).query)["status"] == ["repealed"]


def test_filters_from_the_form_and_facet_links_are_applied(client):
    doc = page(client, "/ui/search", q="umowa", status="repealed", act="pl:kc")
    shown = hits(doc)
    assert shown and all(h.attrs["data-status"] == "repealed" for h in shown)
    assert "selected" in doc.one("select", id="status").one("option", value="repealed").attrs
    # the facet link applies its filter
    doc = page(client, "/ui/search", q="umowa")
    href = doc.one(id="facet-status").one("li", data_status="in_force").one("a").attrs["href"]
    filtered = page(client, href)
    assert all(h.attrs["data-status"] == "in_force" for h in hits(filtered))
    # as_of: the version in force then
    doc = page(client, "/ui/search", q="umowy leasingu", as_of="2025-01-01")
    assert {h.attrs["data-version"] for h in hits(doc)} == {OLD}
    assert all(h.one("a", class_="hit-link").attrs["href"].endswith("as_of=2025-01-01") for h in hits(doc))


def test_pages_are_the_api_pages_and_the_pager_links_them(client):
    first = page(client, "/ui/search", q="umowa leasingu")
    pager = first.one("nav", id="pager")
    assert pager.attrs.get("aria-label") and not pager.all("a", rel="prev")
    nxt = pager.one("a", rel="next").attrs["href"]
    assert parse_qs(urlsplit(nxt).query)["page"] == ["2"]
    second = page(client, nxt)
    api = client.get("/search", params={"q": "umowa leasingu", "k": PAGE_SIZE, "offset": PAGE_SIZE}).json()["hits"]
    assert [h.attrs["data-article-id"] for h in hits(second)] == [h["article_id"] for h in api]
    prev = second.one("nav", id="pager").one("a", rel="prev").attrs["href"]
    assert "page" not in parse_qs(urlsplit(prev).query)
    assert not set(h.attrs["data-article-id"] for h in hits(first)) & set(h["article_id"] for h in api)
    # beyond the stable depth the page still equals the API's page
    fifth = page(client, "/ui/search", q="umowa leasingu", page="5")
    api5 = client.get("/search", params={"q": "umowa leasingu", "k": PAGE_SIZE, "offset": 4 * PAGE_SIZE}).json()["hits"]
    assert [h.attrs["data-article-id"] for h in hits(fifth)] == [h["article_id"] for h in api5]


@pytest.mark.parametrize("params, status, message", [
    ({"q": "umowa", "as_of": "2025-13-01"}, 422, "as_of must be a real date YYYY-MM-DD, got '2025-13-01'"),
    ({"q": "umowa", "act": "pl:nope"}, 404, "unknown act 'pl:nope'"),
    ({"q": "umowa", "retriever": "magic"}, 422, "unknown retriever 'magic'"),
    ({"q": "umowa", "page": "0"}, 422, "page must be between 1 and"),
    ({"q": "umowa", "status": "valid"}, 422, "status must be one of in_force, repealed, pending, got 'valid'"),
])
def test_bad_search_input_is_a_page_with_the_api_status_and_message(client, params, status, message):
    doc = page(client, "/ui/search", status, **params)
    alert = doc.one("p", id="search-error")
    assert alert.attrs["role"] == "alert" and message in alert.text()
    if "page" not in params:  # the same refusal as the JSON API (which has no page parameter)
        api = client.get("/search", params=params)
        assert api.status_code == status, api.text
    assert doc.one("form", id="search-form")  # the form stays, to correct the input


def test_a_hostile_query_is_escaped_everywhere(client):
    q = '<script>alert("x")</script> umowa'
    r = client.get("/ui/search", params={"q": q})
    assert r.status_code == 200
    assert "<script>" not in r.text and "&lt;script&gt;" in r.text
    assert 'value="&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; umowa"' in r.text
    r = client.get("/ui/search", params={"q": "x", "as_of": '"><img src=x onerror=alert(1)>'})
    assert r.status_code == 422 and "<img" not in r.text


def test_language_from_the_parameter_the_act_and_accept_language(client):
    assert page(client, "/ui/search", q="umowa", lang="de").one("html").attrs["lang"] == "de"
    assert page(client, "/ui/search", q="umowa", act="pl:kc").one("html").attrs["lang"] == "pl"
    r = client.get("/ui/search", headers={"Accept-Language": "de-DE,de;q=0.9,en;q=0.5"})
    assert parse(r.text).one("html").attrs["lang"] == "de"
    r = client.get("/ui/search", headers={"Accept-Language": "fr"})
    assert parse(r.text).one("html").attrs["lang"] == "en"
    doc = page(client, f"/ui/units/{UNIT}")
    assert doc.one("html").attrs["lang"] == "pl" and doc.one("button", id="date-submit").text() == "Pokaż"


def test_unit_page_shows_the_wording_at_each_date(client):
    for as_of, version, text in ((OLD, OLD, OLD_TEXT), ("2025-06-30", OLD, OLD_TEXT), (NEW, NEW, NEW_TEXT)):
        doc = page(client, f"/ui/units/{UNIT}", as_of=as_of)
        art = doc.one("article", id="unit")
        assert (art.attrs["data-unit-id"], art.attrs["data-version"], art.attrs["data-as-of"],
                art.attrs["data-status"]) == (UNIT, version, as_of, "in_force")
        assert doc.one(id="unit-text").text() == text
        assert version in doc.one("p", id="unit-version").text()
        assert "709²" in art.one("h1").text()
        assert doc.one("input", id="unit-as-of").attrs["value"] == as_of


def test_unit_page_breadcrumbs_neighbours_and_children(client, corpus_home):
    doc = page(client, f"/ui/units/{UNIT}", as_of=NEW, lang="en")
    crumbs = doc.one("nav", id="breadcrumbs")
    assert crumbs.attrs.get("aria-label")
    items = crumbs.one("ol").all("li")
    assert "Kodeks cywilny" in items[0].text() and items[-1].text() == "Art. 709²"
    hrefs = [unquote(a.attrs["href"]) for a in crumbs.all("a")]
    assert hrefs[1].startswith("/ui/units/pl:kc:book:TRZECIA?") and "title:XVII^1" in hrefs[-1]
    assert items[-1].one("span").attrs["aria-current"] == "page"
    assert unquote(doc.one("a", id="prev-unit").attrs["href"]).startswith("/ui/units/pl:kc:art:709^1?as_of=")
    assert unquote(doc.one("a", id="next-unit").attrs["href"]).startswith("/ui/units/pl:kc:art:709^3?as_of=")
    assert doc.one("a", id="prev-unit").attrs["rel"] == "prev"
    assert not doc.all(id="children")  # an article without paragraphs
    title = page(client, "/ui/units/pl:kc:book:TRZECIA:title:XVII^1", as_of=NEW)
    kids = [unquote(a.attrs["href"]).split("?")[0] for a in title.one("ul", id="children").all("a")]
    want = ReadService.at(corpus_home).unit("pl:kc:book:TRZECIA:title:XVII^1", NEW).children
    assert kids == [f"/ui/units/{c}" for c in want] and f"/ui/units/{UNIT}" in kids
    assert not title.all(id="prev-unit")  # a structure unit has no article neighbours


def test_unit_timeline_lists_the_versions_with_a_word_diff(client):
    doc = page(client, f"/ui/units/{UNIT}", as_of=OLD)
    entries = doc.one("section", id="timeline").all("li", class_="timeline-version")
    assert [e.attrs["data-version"] for e in entries] == [OLD, NEW]
    assert entries[0].attrs.get("aria-current") == "true" and not entries[0].all(class_="diff")
    diff = entries[1].one("div", class_="diff")
    deleted = " ".join(d.text() for d in diff.all("del"))
    inserted = " ".join(i.text() for i in diff.all("ins"))
    assert deleted == "powinna być zawarta na piśmie pod rygorem nieważności."
    assert inserted == "wymaga zachowania formy dokumentowej."
    assert diff.text().startswith("Umowa leasingu")  # unchanged words are not marked
    assert unquote(entries[1].one("a").attrs["href"]) == f"/ui/units/{UNIT}?as_of={NEW}"


def test_pending_wording_is_shown_when_the_version_announces_one(client, corpus_home):
    reads = ReadService.at(corpus_home)
    idx = reads.reader.index("pl:kc", NEW)
    pending = [a for a, row in idx.articles.items() if row["text_pending"]]
    assert pending, "the NEW k.c. sample announces changes"
    u = reads.unit(pending[0], NEW)
    doc = page(client, f"/ui/units/{pending[0]}", as_of=NEW)
    section = doc.one("section", id="pending")
    assert u.pending_effective_date in section.text()
    paragraphs = [p.text() for p in section.one("div", class_="pending-text").all("p")]
    assert paragraphs == [sup(" ".join(line.split())) for line in u.text_pending.splitlines() if line.strip()]
    assert not page(client, f"/ui/units/{UNIT}", as_of=NEW).all(id="pending")


def test_cited_by_says_when_no_case_law_is_held(client):
    section = page(client, f"/ui/units/{UNIT}", as_of=NEW, lang="en").one("section", id="cited-by")
    assert "No case law is held" in section.text() and not section.all(class_="citing-judgment")


@pytest.mark.parametrize("unit_id, params, status, message", [
    ("pl:kc:art:99999", {}, 404, "unknown unit 'pl:kc:art:99999'"),
    ("pl:zz:art:1", {}, 404, "unknown act 'pl:zz'"),
    (UNIT, {"as_of": "2025-02-30"}, 422, "as_of must be a real date YYYY-MM-DD"),
    (UNIT, {"as_of": "1990-01-01"}, 404, "before the oldest held version"),
])
def test_unit_errors_are_pages_with_the_read_layer_message(client, unit_id, params, status, message):
    doc = page(client, f"/ui/units/{unit_id}", status, **params)
    alert = doc.one(role="alert")
    assert message in alert.text()
    api = client.get(f"/units/{unit_id}", params=params)
    assert api.status_code == status and api.json()["detail"] == alert.text()


def test_templates_are_compiled_once():
    from lexpipe.web.router import TEMPLATES, env

    assert env.auto_reload is False
    assert all(env.get_template(name) is env.get_template(name) for name in TEMPLATES)
    assert all(env.autoescape(name) is True for name in TEMPLATES)


def test_cited_by_lists_the_citing_judgments(corpus_home, service, tmp_path):
    """A home with the published corpus (linked) and a Polish citation table written by the asset's
    own functions: the unit page lists the judgments, newest first, with court and date."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    from core.layout import Layout
    from pipelines.citations.pl_links import CITATION_LINKS, cited_by

    (tmp_path / "corpus").symlink_to(corpus_home / "corpus")
    path = Layout(tmp_path).case_citations("pl")
    path.parent.mkdir(parents=True)
    base = {"citation_index": 0, "char_start": 0, "char_end": 5, "text": "art. 709^2 k.c.", "act_id": "pl:kc",
            "in_corpus": True, "unit_id": UNIT, "article_id": UNIT, "resolution": "exact",
            "resolved_to_version": OLD, "exact_version": True, "status": "in_force", "matched_id": UNIT,
            "changed_since": True, "serving_version": NEW}
    links = pa.Table.from_pylist([
        {**base, "judgment_id": 7, "judgment_date": dt.date(2011, 4, 29), "case_number": "I CSK 457/10",
         "court_type": "SUPREME"},
        {**base, "judgment_id": 8, "judgment_date": dt.date(2011, 6, 1), "case_number": "<b>V ACa 1/11</b>",
         "court_type": "COMMON"}], schema=CITATION_LINKS)
    pq.write_table(links, path.parent / "links.parquet")
    pq.write_table(cited_by(links), path)
    client = TestClient(create_app(service, reads=ReadService.at(tmp_path)))
    r = client.get(f"/ui/units/{UNIT}", params={"as_of": NEW, "lang": "en"})
    assert r.status_code == 200 and "<b>V ACa" not in r.text
    section = parse(r.text).one("section", id="cited-by")
    items = [li.text() for li in section.all("li", class_="citing-judgment")]
    assert items == ["<b>V ACa 1/11</b>, common court, 2011-06-01", "I CSK 457/10, Supreme Court, 2011-04-29"]
    assert "2 decisions, 2 citations" in section.text()
    assert [a.attrs["href"] for a in section.all("a")] == ["https://www.saos.org.pl/judgments/8",
                                                           "https://www.saos.org.pl/judgments/7"]


@pytest.fixture(scope="module")
def gg_client(tmp_path_factory, sample_dir: Path) -> TestClient:
    """The Grundgesetz in its three sample versions, built by the German pipeline (no search index)."""
    from core.layout import Layout
    from pipelines.statutes.de.build import build_all

    home = tmp_path_factory.mktemp("gg_pages")
    build_all(Layout(home), sample_dir, acts=("de:gg",))
    return TestClient(create_app(reads=ReadService.at(home)))


def test_german_unit_page(gg_client):
    doc = page(gg_client, "/ui/units/de:gg:art:21", as_of="2021-01-01")
    assert doc.one("html").attrs["lang"] == "de"  # the act's language
    assert doc.one("button", id="date-submit").text() == "Anzeigen"
    assert doc.one("article", id="unit").one("h1").text() == "Art. 21 GG"
    kids = [unquote(a.attrs["href"]).split("?")[0] for a in doc.one("ul", id="children").all("a")]
    assert kids == [f"/ui/units/de:gg:art:21:abs:{n}" for n in (1, 2, 3, 4, 5)]
    versions = doc.one("section", id="timeline").all("li", class_="timeline-version")
    assert [v.attrs["data-version"] for v in versions] == ["2012-08-03", "2012-08-06", "2020-09-29"]
    assert versions[2].one("div", class_="diff").all("ins") and not versions[1].all(class_="diff")
    crumbs = [li.text() for li in doc.one("nav", id="breadcrumbs").all("li")]
    assert crumbs[0].startswith("Grundgesetz") and crumbs[1].startswith("Abschnitt II")
    absatz = page(gg_client, "/ui/units/de:gg:art:1:abs:1", as_of="2013-01-01", lang="en")
    assert absatz.one("html").attrs["lang"] == "en"
    assert absatz.one("h1").text() == "Art. 1 Abs. 1 GG"
    assert absatz.one(id="unit-text").text().startswith("(1) Die Würde des Menschen ist unantastbar.")
    assert absatz.one(id="unit-text").attrs["lang"] == "de"  # the law's text keeps its language


def test_unit_page_prints_superscripts_in_the_body_as_in_its_headings(client):
    """Issue 26, point 5: the body printed ``§ 1^1`` (the corpus notation) under a heading ``§ 1¹``."""
    doc = page(client, "/ui/units/pl:kc:art:109^4", as_of=NEW)
    body = doc.one(id="unit-text").text()
    assert "§ 1¹. Prokura może obejmować" in body and "^" not in body
    assert "109⁴" in doc.one("h1").text()
    cross = page(client, "/ui/units/pl:kc:art:43^1", as_of=NEW).one(id="unit-text").text()
    assert "art. 33¹ § 1" in cross and "^" not in cross  # a cited article in the wording, too
    pending = page(client, "/ui/units/pl:kc:art:385^5", as_of=NEW).one(id="pending").text()
    assert "§ 1¹" in pending and "^" not in pending  # the announced wording's note ("Dodany § 1^1 …")


def test_a_named_unit_whose_heading_is_its_name_is_labelled_once():
    """Issue 26, point 5: the k.k.'s parts are named (CZĘŚĆ OGÓLNA) and their heading is that name."""
    from lexpipe.web.views import level_label

    assert level_label("pl:kk", "part", "OGÓLNA", "CZĘŚĆ OGÓLNA") == "Część OGÓLNA"
    assert level_label("pl:kc", "book", "PIERWSZA", "CZĘŚĆ OGÓLNA") == "Księga PIERWSZA CZĘŚĆ OGÓLNA"
    assert level_label("pl:kk", "chapter", "I", "Zasady odpowiedzialności karnej") == \
        "Rozdział I Zasady odpowiedzialności karnej"
