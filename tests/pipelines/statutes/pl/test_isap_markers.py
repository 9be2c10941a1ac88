import datetime as dt

from pipelines.statutes.pl import isap_markers as m

RAW = "[§ 1. Old wording.]\n<§ 1. New wording.>\n<§ 1^1. Added.>\n§ 2. Unchanged."
NOTE = ["Nowe brzmienie § 1 w art. 647^1 wejdzie w życie z dn. 4.12.2025 r. (Dz. U. z 2025 r. poz. 1508)."]


def test_effective_dates_from_margin_notes():
    assert m.effective_dates(NOTE) == [dt.date(2025, 12, 4)]
    assert m.effective_dates(["Dodane § 1^1 i 1^2 w art. 647^1 wejdą w życie z dn. 27.11.2025 r."]) == [dt.date(2025, 11, 27)]
    assert m.effective_dates(["no date here"]) == []


def test_before_the_change_the_expiring_wording_is_in_force():
    text, pending, eff = m.readings(RAW, NOTE, dt.date(2025, 11, 13))
    assert text == "§ 1. Old wording.\n§ 2. Unchanged."
    assert pending == "§ 1. New wording.\n§ 1^1. Added.\n§ 2. Unchanged."
    assert eff == dt.date(2025, 12, 4)


def test_on_or_after_the_change_the_new_wording_is_in_force():
    text, pending, eff = m.readings(RAW, NOTE, dt.date(2025, 12, 4))
    assert text.startswith("§ 1. New wording.") and pending is None and eff == dt.date(2025, 12, 4)


def test_marker_spanning_lines_and_inline_marker():
    text, pending, _ = m.readings("<§ 1.> Zawarte przepisy.\n<§ 2. Nowy\nparagraf.>", [], dt.date(2025, 1, 1))
    assert text == "Zawarte przepisy." and pending == "§ 1. Zawarte przepisy.\n§ 2. Nowy\nparagraf."


def test_text_without_markers_is_untouched():
    assert m.readings("§ 1. Tekst [nie].", [], dt.date(2025, 1, 1))[1] is not None  # brackets are markers
    assert m.readings("§ 1. Tekst.", [], dt.date(2025, 1, 1)) == ("§ 1. Tekst.", None, None)


def test_nested_markers_follow_the_enclosing_marker():
    # k.p.c. 2023 art. 755^2 § 1: an expiring paragraph with its own pending wording inside
    raw = "[§ 1. Osoba stosująca [przemoc w rodzinie] <przemoc domową> zachowa.]\n<§ 1. Nowe brzmienie.>"
    assert m.current_reading(raw) == "§ 1. Osoba stosująca przemoc w rodzinie zachowa."
    assert m.future_reading(raw) == "§ 1. Nowe brzmienie."


def test_repair_resolves_typesetting_slips():
    # a closer nothing opened (k.p.c. 2024 art. 477^9 § 1) is dropped: no change, no pending reading
    assert m.repair("§ 1. Odwołania wnosi się w terminie miesiąca.>\n§ 2. Dalej.") == \
        "§ 1. Odwołania wnosi się w terminie miesiąca.\n§ 2. Dalej."
    assert m.readings("§ 1. Tekst.>", [], dt.date(2025, 1, 1)) == ("§ 1. Tekst.", None, None)
    # an opener nothing closes (k.p.c. 2023 art. 586 pkt 1a) closes at the end of its line
    fixed = m.repair("1) imię,\n<1a) nazwisko,\n2) adres.")
    assert fixed == "1) imię,\n<1a) nazwisko,>\n2) adres."
    assert m.current_reading(fixed) == "1) imię,\n2) adres."
    ok = "[§ 1. Stare.]\n<§ 1. Nowe.>"
    assert m.repair(ok) == ok and m.unmatched(ok) == ([], [])
