"""Issue 17: the search and unit pages, proven in a real browser against the JSON API they sit on.

``lexpipe serve`` runs as a subprocess over a copy of the session corpus (the real Civil Code,
OLD and NEW published, hashing encoder); headless Chromium (the system package, as the Dagster UI
test) types queries, submits with the keyboard, filters, pages, opens a unit, switches its date and
checks what is *shown* against what the same server's JSON API (``/search``, ``/units/{id}``)
answers for the same parameters — a page that lists other articles, in another order, or another
wording fails. Then keyboard reach and labels, a phone-width viewport, the German interface, a
hostile query and bad dates. A screenshot of every key state goes to the module's tmp folder
(``$LEXPIPE_WEB_SCREENSHOTS`` to keep them elsewhere).

The page contract (ids, classes, data attributes) is docs/search-page.md's; a missing element
fails with the contract's name for it.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from corpus_fixtures import NEW, OLD  # tests/
from pipelines.retrieval.analyzers import get_analyzer
from search_world import (api, copy_home, facets, get, hits, normalise, query_params, start_serve, stop_serve,  # tests/ui
                          unit_path)
from ui_world import CHROMIUM_ARGS, save_screenshot  # tests/ui

expect.set_options(timeout=30_000)  # server-rendered pages: a wait ends as soon as the element is there

UNIT = "pl:kc:art:709^2"
OLD_TEXT = "Umowa leasingu powinna być zawarta na piśmie pod rygorem nieważności."
NEW_TEXT = "Umowa leasingu wymaga zachowania formy dokumentowej."
QUERIES = ("umowa leasingu", "umowy leasingu")  # the second inflected: "umowy" must be marked
CONTROLS = ("q", "retriever", "act", "status", "as_of", "target")
HOSTILE = "<script>alert(1)</script>"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 360, "height": 740}


@pytest.fixture(scope="module")
def web_url(request: pytest.FixtureRequest, tmp_path_factory, chromium: Path) -> Iterator[str]:
    """``lexpipe serve`` over a copy of the session corpus; stopped after the module. Depends on
    ``chromium`` first, so nothing is built when the browser is missing."""
    root = tmp_path_factory.mktemp("search_page")
    home = copy_home(request.getfixturevalue("corpus_home"), root)
    try:
        proc, base_url = start_serve(home, root / "lexpipe_serve.log")
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield base_url
    finally:
        stop_serve(proc)


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    env = os.environ.get("LEXPIPE_WEB_SCREENSHOTS")
    path = Path(env) if env else tmp_path_factory.mktemp("search_page_screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser_context(chromium: Path, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("search_page_profile")), executable_path=str(chromium),
            args=CHROMIUM_ARGS, headless=True, viewport=DESKTOP, locale="en-US")
        ctx.set_default_timeout(30_000)
        ctx.set_default_navigation_timeout(60_000)
        try:
            yield ctx
        finally:
            ctx.close()


@pytest.fixture
def web(browser_context) -> Iterator:
    """A fresh page per test; every dialog it opens is recorded (and dismissed): a script injected
    through a query would open one."""
    page = browser_context.new_page()
    page.set_viewport_size(DESKTOP)
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    try:
        yield page
    finally:
        page.close()


# -- helpers ---------------------------------------------------------------------------------------

def _search_with_keyboard(page, base_url: str, query: str) -> None:
    """Open the empty search page, type ``query`` into #q and press Enter; waits for the results."""
    page.goto(f"{base_url}/ui/search")
    box = page.locator("#search-form #q")
    expect(box, "contract: <input id='q'> inside <form id='search-form'>").to_be_visible()
    box.fill("")
    box.press_sequentially(query)
    with page.expect_navigation():
        box.press("Enter")
    assert query_params(page.url).get("q") == [query], f"the form did not submit q by GET: {page.url}"
    expect(page.locator("#results li.hit").first, "contract: <ol id='results'> with <li class='hit'>").to_be_visible()


def _form_state(page) -> dict[str, str]:
    """The retriever and target the page searched with (its selects), for the API comparison."""
    return {"retriever": page.locator("#retriever").input_value(), "target": page.locator("#target").input_value()}


def _api_ids(base_url: str, params: dict) -> list[dict]:
    status, body = api(base_url, "/search", params)
    assert status == 200, (params, body)
    return body["hits"]


def _compare_with_api(page, base_url: str, extra: dict | None = None, *, offset: int = 0) -> list[dict]:
    """The shown hits equal the API's /search hits for the page's own URL parameters: the same
    articles in the same order, with the same act, version and status."""
    shown = hits(page)
    assert shown, f"no li.hit on {page.url}"
    # a GET form submits its empty selections ("all acts", "any" status, no date) as name=; the page
    # reads them as no filter, the API refuses them: compare with the filters actually chosen
    params = {k: [x for x in v if x] for k, v in query_params(page.url).items() if k not in ("page", "lang")}
    params = {k: v for k, v in params.items() if v}
    params.update({k: [v] for k, v in _form_state(page).items() if k not in params})
    params.update(extra or {})
    want = _api_ids(base_url, {**params, "k": len(shown), "offset": offset})
    got = [h["article_id"] for h in shown]
    if got != [h["article_id"] for h in want]:
        deep = [h["article_id"] for h in _api_ids(base_url, {**params, "k": 100})][offset:offset + len(shown)]
        raise AssertionError(
            f"{page.url}: the page lists other articles than GET /search with the same parameters "
            f"(k={len(shown)}, offset={offset}); page {got}, API {[h['article_id'] for h in want]}; "
            f"the page {'equals' if got == deep else 'does not equal either'} the API's k=100 answer cut to "
            f"this page (the hybrid's candidate depth is max(100, 3·(k+offset)), so its order depends on k)")
    for s, w in zip(shown, want):
        assert (s["act_id"], s["version"], s["status"]) == (w["act_id"], w["version"], w["status"]), (s, w)
        assert s["href"] and urllib.parse.unquote(s["href"]).startswith(f"/ui/units/{w['article_id']}"), \
            f"contract: a.hit-link href='/ui/units/{{article_id}}?as_of=…', got {s['href']!r}"
        assert "as_of=" in s["href"], s["href"]
        for part in ("title", "act", "path", "shown_version", "shown_status", "snippet"):
            assert s[part], f"contract: hit {s['article_id']} shows no {part} (a.hit-link, .hit-act, .hit-path, " \
                            f".hit-version, .hit-status, p.snippet)"
        assert s["act"] in s["title"], f"contract: the title is the act's short name + the article: {s}"
        link_date = query_params(s["href"]).get("as_of", [None])[0]
        assert link_date in (w["version"], *params.get("as_of", [])), (s["href"], w["version"], params)
    if page.locator("#pager a[rel='next']").count():  # a next page only when the API has more
        assert _api_ids(base_url, {**params, "k": 1, "offset": offset + len(shown)}), "a next link without more hits"
    return shown


def _page_size(page) -> int:
    return len(hits(page))


def _no_horizontal_scroll(page, what: str) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{what}: scrollWidth {width} > {PHONE['width']} at phone width"


# -- tests -----------------------------------------------------------------------------------------

def test_root_redirects_to_the_search_page(web_url):
    status, headers, _ = get(web_url, "/", follow=False)
    assert status == 307, status
    assert urllib.parse.urlsplit(headers.get("location", headers.get("Location", ""))).path == "/ui/search", headers


@pytest.mark.parametrize("query", QUERIES)
def test_keyboard_search_lists_the_api_hits_with_marks_and_facets(query, web, web_url, shots):
    """Typed and submitted with Enter: the API's articles in its order; the query's terms marked in
    the snippets (the inflected "umowy" too); result count and facet counts shown."""
    _search_with_keyboard(web, web_url, query)
    shown = _compare_with_api(web, web_url)
    assert UNIT in [h["article_id"] for h in _api_ids(web_url, {"q": query, "k": 50, **_form_state(web)})]

    # highlights: every snippet word whose analysed form is a query term is inside a <mark>, and
    # every mark is a form of a query word (same first four letters: "umow…", "leas…")
    analyzer = get_analyzer("pl")
    terms = set(analyzer.analyze(query))
    marks = [m.lower() for h in shown for m in h["marks"]]
    assert marks, f"contract: no <mark> in any p.snippet for {query!r}"
    for h in shown:
        words = set(analyzer.analyze(h["snippet"]))
        marked = {t for m in h["marks"] for t in analyzer.analyze(m)}
        assert (words & terms) <= marked, (h["article_id"], words & terms, h["marks"])
    stems = {w[:4] for w in query.split()}
    assert all(any(t[:4] in stems for t in analyzer.analyze(m)) for m in marks), (query, sorted(set(marks)))
    assert "leasingu" in marks and query.split()[0] in marks, f"{query!r}: its own words not marked: {set(marks)}"

    count = web.locator("#result-count")
    expect(count, "contract: <p id='result-count'>").to_be_visible()
    assert re.search(r"\d", count.inner_text()), count.inner_text()
    act_facets, status_facets = facets(web, "facet-act", "act-id"), facets(web, "facet-status", "status")
    assert "pl:kc" in act_facets, f"contract: #facet-act li[data-act-id='pl:kc'] missing: {act_facets}"
    assert status_facets, "contract: #facet-status li[data-status] missing"
    for f in (*act_facets.values(), *status_facets.values()):
        assert f["count"] is not None and f["count"].isdigit() and int(f["count"]) > 0, f
        assert f["href"], f"contract: facet items link (<a href>) to the filtered search: {f}"
    assert int(act_facets["pl:kc"]["count"]) >= len(shown)
    expect(web.locator("#facet-act li[data-act-id='pl:kc']")).to_contain_text(act_facets["pl:kc"]["count"])
    save_screenshot(web, shots, f"search_{query.replace(' ', '_')}")


def test_status_filter_and_facet_link_change_url_and_results(web, web_url, shots):
    """The status select (submitted with the button) and a status facet link each put the filter
    in the URL and list what the API lists with it."""
    _search_with_keyboard(web, web_url, "umowa")
    web.locator("#status").select_option("repealed")
    with web.expect_navigation():
        web.locator("#search-submit").click()
    assert query_params(web.url).get("status") == ["repealed"], web.url
    shown = _compare_with_api(web, web_url)
    assert {h["status"] for h in shown} == {"repealed"}, shown
    save_screenshot(web, shots, "search_filtered_repealed")

    _search_with_keyboard(web, web_url, "umowa")
    link = web.locator("#facet-status li[data-status='in_force'] a")
    expect(link, "contract: #facet-status li[data-status='in_force'] <a>").to_be_visible()
    count = int(web.locator("#facet-status li[data-status='in_force']").get_attribute("data-count"))
    with web.expect_navigation():
        link.click()
    assert query_params(web.url).get("status") == ["in_force"], web.url
    shown = _compare_with_api(web, web_url)
    assert {h["status"] for h in shown} == {"in_force"} and len(shown) <= count, (shown, count)

    web.goto(f"{web_url}/ui/search?q=umowa")
    web.locator("#act").select_option("pl:kc")
    with web.expect_navigation():
        web.locator("#search-submit").click()
    assert query_params(web.url).get("act") == ["pl:kc"], web.url
    assert {h["act_id"] for h in _compare_with_api(web, web_url)} == {"pl:kc"}

    web.goto(f"{web_url}/ui/search?q=umowa")
    with web.expect_navigation():
        web.locator("#facet-act li[data-act-id='pl:kc'] a").click()
    assert query_params(web.url).get("act") == ["pl:kc"], web.url
    _compare_with_api(web, web_url)


def test_date_and_retriever_controls(web, web_url, shots):
    """``#as_of`` set to OLD searches the older version (the API's hits with as_of, each at OLD, 709^2
    with its older wording in the snippet); the retriever select searches with bm25."""
    _search_with_keyboard(web, web_url, "umowa leasingu forma")
    web.locator("#as_of").fill(OLD)
    with web.expect_navigation():
        web.locator("#search-submit").click()
    assert query_params(web.url).get("as_of") == [OLD], web.url
    shown = _compare_with_api(web, web_url)
    assert {h["version"] for h in shown} == {OLD}, shown
    old = next((h for h in shown if h["article_id"] == UNIT), None)
    assert old is not None and "piśmie" in old["snippet"], shown
    save_screenshot(web, shots, "search_as_of_old")
    web.locator("#retriever").select_option("bm25")
    with web.expect_navigation():
        web.locator("#search-submit").click()
    assert query_params(web.url).get("retriever") == ["bm25"], web.url
    _compare_with_api(web, web_url)


def test_pager_moves_to_the_next_page_of_api_hits(web, web_url, shots):
    _search_with_keyboard(web, web_url, "umowa leasingu")
    size = _page_size(web)
    nxt = web.locator("#pager a[rel='next']")
    expect(nxt, "contract: <nav id='pager'> with <a rel='next'> (more hits than one page)").to_be_visible()
    assert web.locator("#pager").get_attribute("aria-label"), "contract: #pager has an aria-label"
    assert web.locator("#pager a[rel='prev']").count() == 0, "page 1 has no previous page"
    first = [h["article_id"] for h in hits(web)]
    with web.expect_navigation():
        nxt.click()
    assert query_params(web.url).get("page") == ["2"], web.url
    second = _compare_with_api(web, web_url, offset=size)
    assert not set(first) & {h["article_id"] for h in second}, "page 2 repeats page 1's articles"
    expect(web.locator("#pager a[rel='prev']")).to_be_visible()
    save_screenshot(web, shots, "search_page_2")
    with web.expect_navigation():
        web.locator("#pager a[rel='prev']").click()
    assert [h["article_id"] for h in hits(web)] == first


def test_unit_page_reads_like_the_api_and_switches_date(web, web_url, shots):
    """709^2 opened from its hit: the wording, version and status the API reads at NEW; the date
    switch to OLD shows the older wording; the timeline holds both versions and a word diff."""
    _search_with_keyboard(web, web_url, "umowa leasingu forma dokumentowa")
    link = web.locator(f"#results li.hit[data-article-id='{UNIT}'] a.hit-link")
    if link.count():
        with web.expect_navigation():
            link.click()
    else:  # not on the first page for the hashing encoder: open it by its URL
        web.goto(f"{web_url}/ui/units/{urllib.parse.quote(UNIT, safe=':^')}?as_of={NEW}")
    unit = web.locator("article#unit")
    expect(unit, "contract: <article id='unit'>").to_be_visible()
    assert unit.get_attribute("data-unit-id") == UNIT
    status, want = api(web_url, unit_path(UNIT), {"as_of": unit.get_attribute("data-as-of") or NEW})
    assert status == 200, want
    assert unit.get_attribute("data-version") == want["version"] == NEW
    assert unit.get_attribute("data-status") == want["status"]
    assert normalise(web.locator("#unit-text").inner_text()) == normalise(want["text"]) == NEW_TEXT
    expect(web.locator("article#unit h1")).to_contain_text("709")
    expect(web.locator("#unit-version"), "contract: <p id='unit-version'>").to_contain_text(NEW)

    timeline = web.locator("#timeline li.timeline-version")
    assert sorted(timeline.evaluate_all("lis => lis.map(li => li.dataset.version)")) == [OLD, NEW], \
        "contract: #timeline li.timeline-version[data-version] for each held version"
    diff = web.locator("#timeline .diff")
    expect(diff.first, "contract: a .diff in the timeline for the change").to_be_visible()
    deleted = " ".join(diff.locator("del").all_inner_texts())
    inserted = " ".join(diff.locator("ins").all_inner_texts())
    assert "piśmie" in deleted and "dokumentowej" in inserted, (deleted, inserted)
    assert "leasingu" not in deleted + inserted, "word diff marks unchanged words"
    save_screenshot(web, shots, "unit_709_2_new", full_page=True)

    web.locator("#unit-as-of").fill(OLD)
    with web.expect_navigation():
        web.locator("#date-submit").click()
    assert query_params(web.url).get("as_of") == [OLD], web.url
    status, old = api(web_url, unit_path(UNIT), {"as_of": OLD})
    assert unit.get_attribute("data-version") == old["version"] == OLD
    assert normalise(web.locator("#unit-text").inner_text()) == normalise(old["text"]) == OLD_TEXT
    expect(web.locator("#unit-version")).to_contain_text(OLD)
    expect(web.locator("#unit-version")).to_contain_text(NEW)  # the next version is named
    save_screenshot(web, shots, "unit_709_2_old", full_page=True)


def test_unit_page_announced_wording_and_no_case_law(web, web_url):
    """Art. 385^5 at NEW announces a new wording (ISAP's < >): #pending shows it with its date, as
    the API reads it. 709^2 announces none: no #pending. The session corpus holds no case law:
    no citing judgment is listed."""
    pending = "pl:kc:art:385^5"
    _, want = api(web_url, unit_path(pending), {"as_of": NEW})
    assert want["text_pending"] and want["pending_effective_date"], want
    web.goto(f"{web_url}/ui/units/{urllib.parse.quote(pending, safe=':^')}?as_of={NEW}")
    section = web.locator("section#pending")
    expect(section, "contract: <section id='pending'> when the version announces a wording").to_be_visible()
    expect(section).to_contain_text(want["pending_effective_date"])
    assert normalise(want["text_pending"]) in normalise(section.inner_text()), section.inner_text()
    assert "^" not in section.inner_text()  # the note's § 1^1 printed § 1¹, as the wording and headings
    assert web.locator("li.citing-judgment").count() == 0
    web.goto(f"{web_url}/ui/units/{urllib.parse.quote(UNIT, safe=':^')}?as_of={NEW}")
    assert web.locator("section#pending").count() == 0
    assert web.locator("li.citing-judgment").count() == 0


def test_unit_breadcrumbs_and_neighbours(web, web_url):
    web.goto(f"{web_url}/ui/units/{urllib.parse.quote(UNIT, safe=':^')}?as_of={NEW}")
    crumbs = web.locator("nav#breadcrumbs ol li")
    expect(crumbs.first, "contract: <nav id='breadcrumbs'><ol><li>").to_be_visible()
    assert web.locator("nav#breadcrumbs").get_attribute("aria-label")
    _, unit = api(web_url, unit_path(UNIT), {"as_of": NEW})
    shown = normalise(" ".join(crumbs.all_inner_texts()))
    for level in unit["path"]:  # book TRZECIA, title XVII^1: numbers and headings
        assert level["heading"] in shown or level["heading"].lower() in shown.lower(), (level, shown)

    nxt = web.locator("a#next-unit[rel='next']")
    expect(nxt, "contract: <a id='next-unit' rel='next'>").to_be_visible()
    with web.expect_navigation():
        nxt.click()
    nxt_id = web.locator("article#unit").get_attribute("data-unit-id")
    assert nxt_id and nxt_id != UNIT and nxt_id.startswith("pl:kc:art:"), nxt_id
    prev = web.locator("a#prev-unit[rel='prev']")
    expect(prev, "contract: <a id='prev-unit' rel='prev'>").to_be_visible()
    with web.expect_navigation():
        prev.click()
    assert web.locator("article#unit").get_attribute("data-unit-id") == UNIT, "prev of next is not the unit"

    # the title's crumb opens the structure page, which lists the unit among its children
    title_link = web.locator("nav#breadcrumbs ol li a").filter(has_text=unit["path"][-1]["heading"])
    expect(title_link.first, f"no breadcrumb link to {unit['path'][-1]['id']}").to_be_visible()
    with web.expect_navigation():
        title_link.first.click()
    assert web.locator("article#unit").get_attribute("data-unit-id") == unit["path"][-1]["id"]
    children = web.locator("ul#children a")
    expect(children.first, "contract: <ul id='children'> on a structure unit").to_be_visible()
    hrefs = [urllib.parse.unquote(h or "") for h in children.evaluate_all("as => as.map(a => a.getAttribute('href'))")]
    assert any(f"/ui/units/{UNIT}" in h for h in hrefs), hrefs


def test_keyboard_reach_and_labels(web, web_url):
    """Tab: the skip link first, then the query box. Every form control has a label that names it
    (``get_by_label`` finds exactly that control); the date form's too."""
    web.goto(f"{web_url}/ui/search")
    web.keyboard.press("Tab")
    first = web.evaluate("() => ({tag: document.activeElement.tagName, href: document.activeElement.getAttribute('href')})")
    assert first["tag"] == "A" and (first["href"] or "").startswith("#"), f"first Tab stop is not a skip link: {first}"
    web.keyboard.press("Enter")  # follow the skip link: past the header (brand, language links)
    web.keyboard.press("Tab")
    assert web.evaluate("document.activeElement.id") == "q", "the query box is not the Tab stop after the skip link"
    for cid in CONTROLS:
        label = web.locator(f"label[for='{cid}']")
        assert label.count() == 1, f"contract: <label for='{cid}'>"
        text = normalise(label.inner_text())
        assert text, f"<label for='{cid}'> is empty"
        assert web.get_by_label(text, exact=True).get_attribute("id") == cid, (cid, text)
    assert normalise(web.locator("#search-submit").inner_text()) or web.locator("#search-submit").get_attribute(
        "aria-label"), "the submit button has no accessible name"
    web.goto(f"{web_url}/ui/units/{urllib.parse.quote(UNIT, safe=':^')}?as_of={NEW}")
    text = normalise(web.locator("label[for='unit-as-of']").inner_text())
    assert web.get_by_label(text, exact=True).get_attribute("id") == "unit-as-of"


def test_phone_width_has_no_horizontal_scroll(web, web_url, shots):
    web.set_viewport_size(PHONE)
    web.goto(f"{web_url}/ui/search?q={urllib.parse.quote('umowa leasingu')}")
    expect(web.locator("#results li.hit").first).to_be_visible()
    _no_horizontal_scroll(web, "search results")
    save_screenshot(web, shots, "phone_search")
    web.goto(f"{web_url}/ui/units/{urllib.parse.quote(UNIT, safe=':^')}?as_of={NEW}")
    expect(web.locator("article#unit")).to_be_visible()
    _no_horizontal_scroll(web, "unit page")
    save_screenshot(web, shots, "phone_unit")


def test_german_interface(web, web_url, shots):
    """``lang=de``: <html lang="de"> and German labels (none the same as the English page's)."""
    web.goto(f"{web_url}/ui/search?lang=en")
    english = {c: normalise(web.locator(f"label[for='{c}']").inner_text()) for c in CONTROLS}
    assert web.locator("html").get_attribute("lang") == "en"
    web.goto(f"{web_url}/ui/search?lang=de&q={urllib.parse.quote('umowa leasingu')}")
    assert web.locator("html").get_attribute("lang") == "de"
    german = {c: normalise(web.locator(f"label[for='{c}']").inner_text()) for c in CONTROLS}
    same = [c for c in CONTROLS if german[c] == english[c] and c != "as_of"]
    assert len(same) <= 1, f"labels not translated: {[(c, german[c]) for c in same]}"
    words = normalise(web.locator("body").inner_text()).lower()
    assert re.search(r"\b(suche|suchen|gesetz|gesetze|stand|alle|treffer)\b", words), words[:500]
    save_screenshot(web, shots, "search_german")

    # without lang: the query's language (a Polish question → pl), else the browser's Accept-Language
    # (the context's locale is en-US; Chromium sends its own Accept-Language on navigations whatever
    # set_extra_http_headers says, so a German browser is simulated by rewriting the header in a route)
    web.goto(f"{web_url}/ui/search?" + urllib.parse.urlencode({"q": "Zgodnie z Kodeksem cywilnym, umowa leasingu"}))
    assert web.locator("html").get_attribute("lang") == "pl"
    web.route("**/ui/**", lambda route: route.continue_(
        headers={**route.request.headers, "accept-language": "de-DE,de;q=0.9,en;q=0.5"}))
    web.goto(f"{web_url}/ui/search")
    assert web.locator("html").get_attribute("lang") == "de"
    web.goto(f"{web_url}/ui/units/{urllib.parse.quote(UNIT, safe=':^')}?as_of={NEW}")
    assert web.locator("html").get_attribute("lang") == "pl", "a Polish unit: the act's language first"


def test_hostile_query_is_shown_escaped(web, web_url):
    web.goto(f"{web_url}/ui/search")
    box = web.locator("#q")
    box.fill(HOSTILE)
    with web.expect_navigation():
        box.press("Enter")
    web.wait_for_load_state("load")
    assert web.dialogs == [], f"a dialog fired: {web.dialogs}"
    assert web.locator("#q").input_value() == HOSTILE
    assert web.locator("script", has_text="alert(1)").count() == 0, "the query became a script element"
    _, _, raw = get(web_url, "/ui/search", {"q": HOSTILE})
    html = raw.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html


def test_bad_dates_show_an_alert_not_a_crash(web, web_url):
    """A search date the API refuses (422, malformed input: docs/api.md): the page answers with the
    API's status and its message in role=alert. A unit page: 422 for a bad date, 404 for an unknown
    unit, each with a role=alert message."""
    params = {"q": "umowa", "as_of": "2025-02-30"}
    api_status, api_body = api(web_url, "/search", params)
    assert api_status == 422 and api_body["field"] == "as_of", api_body
    res = web.goto(f"{web_url}/ui/search?{urllib.parse.urlencode(params)}")
    assert res.status == api_status, res.status
    alert = web.locator("#search-error[role='alert']")
    expect(alert, "contract: <p id='search-error' role='alert'>").to_be_visible()
    assert normalise(api_body["detail"]) in normalise(alert.inner_text()), (api_body, alert.inner_text())

    res = web.goto(f"{web_url}/ui/units/{urllib.parse.quote(UNIT, safe=':^')}?as_of=2025-02-30")
    assert res.status == 422, res.status
    expect(web.locator("[role='alert']").first).to_be_visible()
    res = web.goto(f"{web_url}/ui/units/pl:kc:art:99999?as_of={NEW}")
    assert res.status == 404, res.status
    expect(web.locator("[role='alert']").first).to_be_visible()


def test_empty_and_no_hit_states(web, web_url):
    """No query: the form, no result list, no error. A filter nothing matches (no pending wording
    in the Civil Code's held versions: the API lists no hits either): the no-results message."""
    res = web.goto(f"{web_url}/ui/search")
    assert res.status == 200, res.status
    expect(web.locator("#search-form")).to_be_visible()
    assert web.locator("#results li.hit").count() == 0 and web.locator("#search-error").count() == 0
    params = {"q": "umowa", "status": "pending"}
    assert _api_ids(web_url, params) == []
    res = web.goto(f"{web_url}/ui/search?{urllib.parse.urlencode(params)}")
    assert res.status == 200, res.status
    expect(web.locator("#no-results"), "contract: <p id='no-results'> when nothing matches").to_be_visible()
    assert web.locator("#results li.hit").count() == 0
