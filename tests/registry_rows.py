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

# The Civil Code as schemas/acts.toml ships it, and the two other ISAP codes of the sample data
# (k.p.c., k.p.): with KK, a Polish registry written out in full, so a test does not depend on which
# rows the shipped file holds today.
KC = """
[[act]]
id = "pl:kc"
jurisdiction = "pl"
language = "pl"
title = "Kodeks cywilny"
citation = "k.c."
source = "eli"
address = "DU/1964/93"
display_address = "Dz. U. 1964 Nr 16 poz. 93"
official_title = "Ustawa z dnia 23 kwietnia 1964 r. - Kodeks cywilny"
sample_stem = "D19640093Lj"
layout = "isap"
article_unit = "art"
paragraph_unit = "§"
"""

KPC = """
[[act]]
id = "pl:kpc"
jurisdiction = "pl"
language = "pl"
title = "Kodeks postępowania cywilnego"
citation = "k.p.c."
source = "eli"
address = "DU/1964/296"
display_address = "Dz. U. 1964 Nr 43 poz. 296"
official_title = "Ustawa z dnia 17 listopada 1964 r. - Kodeks postępowania cywilnego"
sample_stem = "D19640296Lj"
layout = "isap"
article_unit = "art"
paragraph_unit = "§"
"""

KP = """
[[act]]
id = "pl:kp"
jurisdiction = "pl"
language = "pl"
title = "Kodeks pracy"
citation = "k.p."
source = "eli"
address = "DU/1974/141"
display_address = "Dz. U. 1974 Nr 24 poz. 141"
official_title = "Ustawa z dnia 26 czerwca 1974 r. - Kodeks pracy"
sample_stem = "D19740141Lj"
layout = "isap"
article_unit = "art"
paragraph_unit = "§"
"""

