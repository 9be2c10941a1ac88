"""The shared tool definitions: valid schemas, validation that names the field (and agrees with a
JSON Schema validator), the OpenAI and MCP exports, and every handler over the published k.c."""

from __future__ import annotations

import jsonschema
import pytest

from core.settings import Settings
from corpus_fixtures import NEW, OLD
from pipelines.answers.gaius_agent import SEARCH_TOOL
from pipelines.retrieval.service import MAX_K, MAX_QUERY_CHARS
from pipelines.tools import Services, ToolError, call, mcp_tool, openai_tool, tool, tools

NAMES = ["search", "get_unit", "law_at_date", "diff", "unit_history", "resolve_citation", "list_acts"]
OLD_709 = "Umowa leasingu powinna być zawarta na piśmie pod rygorem nieważności."
NEW_709 = "Umowa leasingu wymaga zachowania formy dokumentowej."


@pytest.fixture(scope="module")
def services(corpus_home) -> Services:
    return Services(settings=Settings(home=corpus_home, encoder="hashing"))


def test_seven_tools_with_valid_schemas():
    assert list(tools()) == NAMES
    for name, d in tools().items():
        jsonschema.Draft202012Validator.check_schema(d.input_schema)
        public = d.public_schema()
        jsonschema.Draft202012Validator.check_schema(public)
        assert "x-format-hint" not in str(public) and public["additionalProperties"] is False
        assert d.read_only and d.description and d.title
        assert all(c.isascii() or c in "…§" for c in d.description), f"{name}: description not in English"


def test_schema_bounds_are_the_http_apis():
    props = tool("search").input_schema["properties"]
    assert (props["k"]["minimum"], props["k"]["maximum"]) == (1, MAX_K)
    assert props["query"]["maxLength"] == MAX_QUERY_CHARS
    assert props["acts"]["items"]["pattern"] == r"^[a-z]{2}:[a-z0-9_]{1,40}$"
    assert tool("get_unit").input_schema["properties"]["as_of"]["pattern"] == r"^\d{4}-\d{2}-\d{2}$"


def test_exports_openai_and_mcp():
    oa = openai_tool("search")
    assert oa["type"] == "function" and oa["function"]["name"] == "search"
    assert set(oa["function"]["parameters"]["properties"]) >= {"query", "k", "acts", "as_of"}
    assert openai_tool("search", ("query",))["function"]["parameters"]["required"] == ["query"]
    with pytest.raises(ValueError, match="nope"):
        openai_tool("search", ("query", "nope"))
    m = mcp_tool("get_unit")
    assert m["inputSchema"]["required"] == ["unit_id"]
    assert m["annotations"]["readOnlyHint"] is True and m["annotations"]["destructiveHint"] is False


def test_gaius_agent_uses_the_shared_search_definition():
    assert SEARCH_TOOL == openai_tool("search", ("query",))
    assert SEARCH_TOOL["function"]["description"] == tool("search").description
    assert list(SEARCH_TOOL["function"]["parameters"]["properties"]) == ["query"]


BAD = [
    ("search", {}, "query"),
    ("search", {"query": "   "}, "query"),
    ("search", {"query": "x" * (MAX_QUERY_CHARS + 1)}, "query"),
    ("search", {"query": "umowa", "k": 0}, "k"),
    ("search", {"query": "umowa", "k": MAX_K + 1}, "k"),
    ("search", {"query": "umowa", "k": "10"}, "k"),
    ("search", {"query": "umowa", "k": True}, "k"),
    ("search", {"query": "umowa", "acts": ["kc"]}, "acts[0]"),
    ("search", {"query": "umowa", "acts": "pl:kc"}, "acts"),
    ("search", {"query": "umowa", "retriever": "magic"}, "retriever"),
    ("search", {"query": "umowa", "as_of": "13.11.2025"}, "as_of"),
    ("search", {"query": "umowa", "colour": "red"}, "colour"),
    ("get_unit", {"unit_id": "art 415"}, "unit_id"),
    ("get_unit", {"unit_id": "pl:kc:art:415", "as_of": "2025-1-1"}, "as_of"),
    ("law_at_date", {"act": "PL:KC"}, "act"),
    ("law_at_date", {"act": "pl:kc", "depth": 0}, "depth"),
    ("diff", {"act": "pl:kc", "from": 2024}, "from"),
    ("diff", {"act": "pl:kc", "limit": 0}, "limit"),
    ("resolve_citation", {"text": ""}, "text"),
    ("resolve_citation", {"text": "art. 415 k.c.", "language": "en"}, "language"),
    ("list_acts", {"jurisdiction": "fr"}, "jurisdiction"),
]


@pytest.mark.parametrize("name,args,field", BAD, ids=[f"{n}-{f}-{i}" for i, (n, _, f) in enumerate(BAD)])
def test_bad_arguments_name_the_field(name, args, field):
    services = Services(settings=Settings(home="/nonexistent"))  # refused before any read
    with pytest.raises(ToolError) as err:
        call(services, name, args)
    assert err.value.field == field and str(err.value).startswith(f"{field}: ")
    if args.get("query") != "   ":  # whitespace-only is lexpipe's own rule (the service's too)
        assert not jsonschema.Draft202012Validator(tool(name).public_schema()).is_valid(args)


GOOD = [("search", {"query": "umowa leasingu", "k": 3, "acts": ["pl:kc"], "as_of": NEW, "retriever": "bm25"}),
        ("get_unit", {"unit_id": "pl:kc:art:709^2", "as_of": OLD}), ("law_at_date", {"act": "pl:kc", "depth": 3}),
        ("diff", {"act": "pl:kc", "from": OLD, "to": NEW, "include_editorial": True}),
        ("unit_history", {"unit_id": "pl:kc:art:709^2"}), ("resolve_citation", {"text": "art. 415 k.c."}),
        ("list_acts", {"jurisdiction": "pl", "held_only": False})]


@pytest.mark.parametrize("name,args", GOOD, ids=[n for n, _ in GOOD])
def test_good_arguments_pass_both_validators(name, args, services):
    assert jsonschema.Draft202012Validator(tool(name).public_schema()).is_valid(args)
    assert isinstance(call(services, name, args), dict)


def test_get_unit_old_and_new_wording(services):
    old = call(services, "get_unit", {"unit_id": "pl:kc:art:709^2", "as_of": "2025-01-01"})
    new = call(services, "get_unit", {"unit_id": "pl:kc:art:709^2", "as_of": NEW})
    assert (old["version"], old["next_version"], old["text"]) == (OLD, NEW, OLD_709)
    assert (new["version"], new["text"], new["status"]) == (NEW, NEW_709, "in_force")
    assert "Umowa leasingu" in new["path"] and new["act_id"] == "pl:kc" and "next_version" not in new


def test_law_at_date_names_the_version_in_force(services):
    before = call(services, "law_at_date", {"act": "pl:kc", "as_of": "2025-06-30", "depth": 1})
    after = call(services, "law_at_date", {"act": "pl:kc", "as_of": "2025-12-01"})
    assert (before["version"], before["next_version"], after["version"]) == (OLD, NEW, NEW)
    books = before["outline"]
    assert [b["level"] for b in books] == ["book"] * 4 and "children" not in books[0]
    assert sum(b["articles"] for b in books) == before["articles"] > 1000
    assert books[0]["first_article"] == "1" and after["outline"][0]["children"]


def test_diff_lists_709_2(services):
    d = call(services, "diff", {"act": "pl:kc", "from": OLD, "to": NEW})
    default = call(services, "diff", {"act": "pl:kc"})  # the newest against the one before it
    assert default == d and (d["from"], d["to"]) == (OLD, NEW)
    row = next(c for c in d["changes"] if c["unit_id"] == "pl:kc:art:709^2")
    assert row["change"] == "changed" and "{+wymaga zachowania formy dokumentowej.+}" in row["word_diff"]
    assert all(c["change"] != "editorial" for c in d["changes"])
    assert d["counts"]["changed"] >= 1
    limited = call(services, "diff", {"act": "pl:kc", "limit": 1})
    assert len(limited["changes"]) == 1 and limited["not_shown"] == len(d["changes"]) - 1


def test_unit_history(services):
    h = call(services, "unit_history", {"unit_id": "pl:kc:art:709^2"})
    assert h["held_versions"] == [OLD, NEW] and h["present_in"] == [OLD, NEW]
    assert [(c["from"], c["to"], c["change"]) for c in h["changes"]] == [(OLD, NEW, "changed")]
    assert "[-powinna" in h["changes"][0]["word_diff"]
    assert call(services, "unit_history", {"unit_id": "pl:kc:art:415"})["changes"] == []


def test_list_acts(services):
    acts = call(services, "list_acts", {})["acts"]
    assert [a["act_id"] for a in acts] == ["pl:kc"]  # only k.c. is published in the fixture
    assert acts[0]["versions"] == [OLD, NEW] and acts[0]["served_version"] == NEW and acts[0]["citation"] == "k.c."
    everything = call(services, "list_acts", {"held_only": False})["acts"]
    assert len(everything) > 1 and "de:bgb" in {a["act_id"] for a in everything}


def test_search_returns_hits(services):
    r = call(services, "search", {"query": "umowa leasingu forma dokumentowa", "k": 5, "acts": ["pl:kc"]})
    assert r["versions"] == {"pl:kc": NEW} and 1 <= len(r["hits"]) <= 5
    assert "pl:kc:art:709^2" in [h["article_id"] for h in r["hits"]]
    hit = r["hits"][0]
    assert hit["rank"] == 1 and hit["act_id"] == "pl:kc" and hit["snippet"] and hit["heading_path"]
    old = call(services, "search", {"query": "umowa leasingu na piśmie pod rygorem nieważności", "k": 5,
                                    "acts": ["pl:kc"], "as_of": "2025-01-01", "retriever": "bm25"})
    assert old["versions"] == {"pl:kc": OLD}
    assert next(h for h in old["hits"] if h["article_id"] == "pl:kc:art:709^2")["snippet"] == OLD_709


def test_resolve_citation(services):
    r = call(services, "resolve_citation", {"text": "Odpowiedzialność wynika z art. 415 k.c.", "as_of": NEW})
    (cit,) = r["citations"]
    assert cit["act_id"] == "pl:kc" and cit["match"] == "exact" and cit["text"] == "art. 415 k.c."
    assert cit["units"][0]["unit_id"] == "pl:kc:art:415" and "szkodę" in cit["units"][0]["text"]
    assert r["counts"] == {"exact": 1}


@pytest.mark.parametrize("name,args,field,words", [
    ("get_unit", {"unit_id": "pl:xx:art:1"}, "unit_id", "unknown act 'pl:xx'"),
    ("get_unit", {"unit_id": "pl:kc:art:99999"}, None, "unknown unit"),
    ("get_unit", {"unit_id": "pl:kc:art:1", "as_of": "2025-02-30"}, "as_of", "real date"),
    ("get_unit", {"unit_id": "pl:kc:art:1", "as_of": "1990-01-01"}, None, "before the oldest held version"),
    ("law_at_date", {"act": "pl:zz"}, "act", "known acts"),
    ("law_at_date", {"act": "de:bgb"}, "act", "no version of it is published"),
    ("diff", {"act": "pl:kc", "from": "2030-01-01"}, "from", "held: 2024-12-19, 2025-11-13"),
    ("diff", {"act": "pl:kc", "from": NEW, "to": OLD}, "from", "older than"),
    ("diff", {"act": "pl:kc", "to": OLD}, "to", "oldest held version"),
    ("search", {"query": "umowa", "acts": ["pl:zz"]}, "acts", "unknown act 'pl:zz'"),
    ("search", {"query": "umowa", "acts": ["pl:kc"], "as_of": "2025-13-01"}, "as_of", "real date"),
    ("resolve_citation", {"text": "art. 415 k.c.", "as_of": "2025-02-30"}, "as_of", "real date"),
])
def test_reads_the_corpus_cannot_answer_are_tool_errors(services, name, args, field, words):
    with pytest.raises(ToolError, match=words) as err:
        call(services, name, args)
    assert err.value.field == field
