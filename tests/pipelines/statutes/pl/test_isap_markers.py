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
