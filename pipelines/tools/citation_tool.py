"""``resolve_citation``: the statute citations of a text ("art. 415 k.c.", "§ 823 Abs. 1 BGB"), each
resolved to its unit ids at a date with the wording then (:class:`pipelines.resolver.CitationResolver`).

What an agent checks its own citations with before answering. The resolver's result is returned
as it builds it (``Resolution.to_dict``), empty fields left out.
"""

from __future__ import annotations

from typing import Any

from pipelines.tools.definitions import ToolDefinition
from pipelines.tools.fields import AS_OF, JURISDICTIONS, MAX_CITATION_CHARS, obj
from pipelines.tools.read_tools import compact, day
from pipelines.tools.services import Services


_KEEP = ("held", "expanded")  # flags whose False is the answer (the act is not held; the range is not listed)


def _compact_tree(node: Any) -> Any:
    if isinstance(node, dict):
        out = compact({k: _compact_tree(v) for k, v in node.items()})
        return {k: (node[k] if k in _KEEP and k in node else out[k]) for k in node if k in out or k in _KEEP}
    if isinstance(node, list):
        return [_compact_tree(v) for v in node]
    return node


def resolve_citation(services: Services, args: dict[str, Any]) -> dict[str, Any]:
    when = day(args["as_of"])
    result = services.resolver.resolve(args["text"], as_of=when, language=args["language"]).to_dict()
    counts = {k: n for k, n in result.pop("counts").items() if n}
    return {**_compact_tree(result), "counts": counts}


RESOLVE_CITATION = ToolDefinition(
    name="resolve_citation", title="Resolve statute citations in a text",
    description=("Find the statute citations in a text (e.g. 'art. 415 k.c.', 'art. 5 § 2 pkt 1 k.p.c.', "
                 "'art. 27 ustawy o prawach konsumenta', '§ 823 Abs. 1 BGB') and resolve each to unit ids at a date: "
                 "whether the corpus holds the unit then (match: exact, read_as, range_too_long, range_backwards, "
                 "not_in_version, partial, not_found, not_covered, act_not_held, ambiguous, no_act), its status and "
                 "its wording in force; 'act' names the act cited (title, date, address, held or not). Use it to "
                 "check citations before relying on them."),
    input_schema=obj({"text": {"type": "string", "minLength": 1, "maxLength": MAX_CITATION_CHARS,
                               "description": "text with one or more citations, e.g. 'art. 415 k.c.'"},
                      "as_of": AS_OF,
                      "language": {"type": "string", "enum": list(JURISDICTIONS),
                                   "description": "the text's language (default: guessed from the text)"}},
                     ("text",)),
    handler=resolve_citation)
