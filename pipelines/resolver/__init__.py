"""Citation resolution: free text and a date → each statute citation, its units, their wording then.

    matches.py   the match kinds (exact, read_as, range_too_long, …, act_not_held, …) and their order
    language.py  both extractors (Polish, German), the text's language, overlapping spans merged
    lookup.py    held acts, the version in force at the date, per-version indexes (memoised per call)
    resolve.py   CitationResolver.resolve(text, as_of=, language=) → Resolution (.to_dict())
"""

from pipelines.resolver.resolve import (CitationResolver, CitedAct, CitedRange, Resolution, ResolvedCitation,
                                       UnitResolution)

__all__ = ["CitationResolver", "CitedAct", "CitedRange", "Resolution", "ResolvedCitation", "UnitResolution"]
