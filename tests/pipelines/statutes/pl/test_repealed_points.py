"""A point printed "(uchylony)" ends a list item: the next "N) " at the margin is the next point.

k.k. art. 39 (2026-07-28) prints "4) (uchylony)", "5) (uchylony)", "6) (uchylony)", "7) świadczenie
pieniężne;" one per line; points 5–7 used to be glued onto point 4 (a list item had to end with
":", ";", ",", "." or a conjunction), so ``pl:kk:art:39:pt:7`` did not exist. Same for k.p.c. art. 17,
825, k.p. art. 69 lit. c, k.k. art. 32, 34 (found by bench/containment.py).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pipelines.pdf_lines import Line
from pipelines.statutes.pl.parser import ActSpec, parse_statute


def _line(text: str, x0: float, y: float, bold: bool = False) -> Line:
    return Line(1, y, x0, 12.0, bold, "body", text)


FRONT = [("Dz. U. 2019 poz. 1234", 200, True), ("U S T AWA", 230, True), ("z dnia 4 lutego 2019 r.", 200, False),
         ("o przykładach", 220, True), ("Rozdział 1", 240, False), ("Przepisy ogólne", 220, True)]
BODY = [  # margin 56.6, article heads at 82.2 (the k.k. layout)
    ("Art. 39. Środkami karnymi są:", 82.2, True),
    ("3) zakaz prowadzenia pojazdów;", 56.6, False),
    ("4) (uchylony)", 56.6, False),
    ("5) (uchylony)", 56.6, False),
    ("6) (uchylony)", 56.6, False),
    ("7) świadczenie pieniężne;", 56.6, False),
    ("8) podanie wyroku do publicznej wiadomości;", 56.6, False),
    ("Art. 69. Do stosunku pracy stosuje się przepisy dotyczące:", 82.2, True),
    ("2) rozpatrywania sporów w części dotyczącej orzekania:", 56.6, False),
    ("a) o bezskuteczności wypowiedzeń,", 56.6, False),
    ("b) (uchylona)", 56.6, False),
    ("c) o przywracaniu do pracy.", 56.6, False),
    ("Art. 70. Kara trwa najkrócej miesiąc, najdłużej 2 lata (uchylony)", 82.2, True),
    ("1) nie jest punktem, bo nie ma listy.", 56.6, False),
]


def test_points_after_a_repealed_point():
    lines = [_line(t, x, 760 - 20 * i, b) for i, (t, x, b) in enumerate(FRONT)]
    lines += [_line(t, x, 640 - 20 * i, b) for i, (t, x, b) in enumerate(BODY)]
    spec = ActSpec("pl:x", "o przykładach", "u.p.", "DU/2019/1234", "Dz. U. 2019 poz. 1234")
    arts = {a.number: a for a in parse_statute(Path("x.pdf"), dt.date(2025, 1, 1), spec, pages=[lines]).articles}
    assert [u.number for u in arts["39"].units] == ["3", "4", "5", "6", "7", "8"]
    assert [u.status for u in arts["39"].units][1:5] == ["repealed", "repealed", "repealed", "in_force"]
    assert next(u for u in arts["39"].units if u.number == "7").text == "7) świadczenie pieniężne;"
    assert [u.id for u in arts["69"].units] == ["pl:x:art:69:pt:2", "pl:x:art:69:pt:2:lit:a",
                                                "pl:x:art:69:pt:2:lit:b", "pl:x:art:69:pt:2:lit:c"]
    # outside a list a wrapped line starting "1) " stays running text
    assert arts["70"].units == []
