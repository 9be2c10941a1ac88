"""Registry rows the tests register in temporary act registries (``LEXPIPE_ACT_REGISTRY``), written
once: a German pair (the GG and an invented act) and the Kodeks karny, which the shipped
``schemas/acts.toml`` does not hold."""

from __future__ import annotations

GG_AND_XG = """
[[act]]
id = "de:gg"
jurisdiction = "de"
language = "de"
title = "Grundgesetz für die Bundesrepublik Deutschland"
citation = "GG"
source = "gesetze"
address = "gg"
sample_stem = "gg"
layout = "gesetze"
article_unit = "Art"

[[act]]
id = "de:xg"
jurisdiction = "de"
language = "de"
title = "Gesetz über Beispiele"
citation = "XG"
source = "gesetze"
address = "xg"
sample_stem = "xg"
layout = "gesetze"
article_unit = "§"
"""

KK = """
[[act]]
id = "pl:kk"
jurisdiction = "pl"
language = "pl"
title = "Kodeks karny"
citation = "k.k."
source = "eli"
address = "DU/1997/553"
display_address = "Dz. U. 1997 Nr 88 poz. 553"
official_title = "Ustawa z dnia 6 czerwca 1997 r. - Kodeks karny"
sample_stem = "D19970553Lj"
layout = "isap"
article_unit = "art"
paragraph_unit = "§"
"""
