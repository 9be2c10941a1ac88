"""The pages' UI strings in Polish, German and English, and which of them a request gets.

The language is, in order: the ``lang`` parameter; the language of the acts asked for (``act=de:bgb``
→ German) or of the unit shown; the query's language (the case-law classifier's word lists); the
first supported ``Accept-Language``; English. Texts of the law are never translated, only the UI.
"""

from __future__ import annotations

LANGUAGES = ("pl", "de", "en")
DEFAULT = "en"

STRINGS: dict[str, dict[str, str]] = {
    "en": {
        "title": "lexpipe: search the law", "skip": "Skip to content", "search": "Search",
        "query": "Query", "query_placeholder": "e.g. umowa leasingu forma, Kaufvertrag Mangel",
        "retriever": "Retriever", "act": "Act", "all_acts": "All acts", "status": "Status", "any": "Any",
        "as_of": "In force on", "target": "Search in", "statutes": "Statutes", "cases": "Court decisions",
        "both": "Both", "in_force": "in force", "repealed": "repealed", "pending": "announced",
        "results": "Results", "result_count": "Showing {first}–{last} of the best {n} matches",
        "no_results": "Nothing found. Try other words, another date or fewer filters.",
        "enter_query": "Type a query to search the acts.", "facets": "Refine", "by_act": "By act",
        "by_status": "By status", "pages": "Result pages", "prev": "Previous", "next": "Next",
        "page": "Page {n}", "version": "version", "error": "Error", "breadcrumbs": "Location in the act",
        "unit_as_of": "Read on", "show": "Show", "read_from": "Read from the version of {v}",
        "next_version": "next held version: {v}", "newest": "this is the newest held version",
        "neighbours": "Neighbouring articles", "prev_unit": "Previous article", "next_unit": "Next article",
        "children": "Contents", "timeline": "Versions", "kind_added": "added", "kind_changed": "wording changed", "kind_repealed": "repealed", "kind_removed": "removed", "kind_editorial": "editorial change only",
        "unchanged": "unchanged", "absent": "not in this version", "read_at": "read as of {v}",
        "pending_heading": "Announced wording", "pending_from": "In force from {d}", "pending_applies":
        "The announced wording applies on the chosen date.", "cited_by": "Cited by court decisions",
        "cited_by_count": "{cases} decisions, {citations} citations", "cited_none": "No citing decisions are held.",
        "cited_not_held": "No case law is held for this act.", "not_found": "Not found",
        "bad_request": "Bad request", "invalid": "Cannot read this", "back_to_search": "Back to search",
        "language": "Language", "text": "Text", "repealed_note": "This unit is repealed.",
        "no_text": "This unit has no wording of its own.", "more_judgments": "and {n} more",
        "court_SUPREME": "Supreme Court", "court_COMMON": "common court",
        "court_CONSTITUTIONAL_TRIBUNAL": "Constitutional Tribunal",
        "court_NATIONAL_APPEAL_CHAMBER": "National Appeal Chamber", "diff": "Changes", "first_held": "oldest held version", "decided": "decided",
        "garbage_controls": "Nothing was searched: the query contains control characters ({detail}).",
        "garbage_no_words": "Nothing was searched: the query has no words, only symbols or emoji.",
        "garbage_stop_words": "Nothing was searched: the query has only words like “{detail}”, which no provision can match.",
        "garbage_mash": "Nothing was searched: the query does not look like words. Type your question in words.",
        "outside_corpus": "The answer is probably not in the acts lexpipe holds ({held}). The results below are the closest provisions, not an answer.",
        "outside_named": "Your question names {acts}, which lexpipe does not hold.",
        "outside_implied": "Similar questions are answered by {acts}, which lexpipe does not hold.",
        "confidence": "Confidence that the first result answers the question: {p} %",
    },
    "pl": {
        "title": "lexpipe: wyszukiwarka przepisów", "skip": "Przejdź do treści", "search": "Szukaj",
        "query": "Zapytanie", "query_placeholder": "np. umowa leasingu forma",
        "retriever": "Metoda wyszukiwania", "act": "Akt", "all_acts": "Wszystkie akty", "status": "Status",
        "any": "Dowolny", "as_of": "Stan prawny na dzień", "target": "Szukaj w", "statutes": "Przepisy",
        "cases": "Orzeczenia", "both": "Przepisy i orzeczenia", "in_force": "obowiązujący",
        "repealed": "uchylony", "pending": "zapowiedziany", "results": "Wyniki",
        "result_count": "Wyniki {first}–{last} spośród {n} najlepszych trafień",
        "no_results": "Nic nie znaleziono. Spróbuj innych słów, innej daty lub mniejszej liczby filtrów.",
        "enter_query": "Wpisz zapytanie, aby przeszukać akty.", "facets": "Zawęź", "by_act": "Według aktu",
        "by_status": "Według statusu", "pages": "Strony wyników", "prev": "Poprzednia", "next": "Następna",
        "page": "Strona {n}", "version": "wersja", "error": "Błąd", "breadcrumbs": "Położenie w akcie",
        "unit_as_of": "Stan na dzień", "show": "Pokaż", "read_from": "Odczytano z wersji z {v}",
        "next_version": "następna wersja: {v}", "newest": "to najnowsza posiadana wersja",
        "neighbours": "Sąsiednie artykuły", "prev_unit": "Poprzedni artykuł", "next_unit": "Następny artykuł",
        "children": "Zawartość", "timeline": "Wersje", "kind_added": "dodany", "kind_changed": "zmieniona treść", "kind_repealed": "uchylony", "kind_removed": "usunięty", "kind_editorial": "tylko zmiana redakcyjna",
        "unchanged": "bez zmian", "absent": "brak w tej wersji", "read_at": "stan na {v}",
        "pending_heading": "Zapowiedziane brzmienie", "pending_from": "Obowiązuje od {d}",
        "pending_applies": "Zapowiedziane brzmienie obowiązuje w wybranym dniu.",
        "cited_by": "Powołany w orzeczeniach", "cited_by_count": "{cases} orzeczeń, {citations} powołań",
        "cited_none": "Brak orzeczeń powołujących ten przepis.",
        "cited_not_held": "Brak orzecznictwa dla tego aktu.", "not_found": "Nie znaleziono",
        "bad_request": "Błędne zapytanie", "invalid": "Nie można odczytać", "back_to_search": "Wróć do wyszukiwania",
        "language": "Język", "text": "Treść", "repealed_note": "Ta jednostka jest uchylona.",
        "no_text": "Ta jednostka nie ma własnej treści.", "more_judgments": "i {n} więcej",
        "court_SUPREME": "Sąd Najwyższy", "court_COMMON": "sąd powszechny",
        "court_CONSTITUTIONAL_TRIBUNAL": "Trybunał Konstytucyjny",
        "court_NATIONAL_APPEAL_CHAMBER": "Krajowa Izba Odwoławcza", "diff": "Zmiany", "first_held": "najstarsza posiadana wersja", "decided": "orzeczenie",
        "garbage_controls": "Nie wyszukano: zapytanie zawiera znaki sterujące ({detail}).",
        "garbage_no_words": "Nie wyszukano: zapytanie nie zawiera słów, tylko symbole lub emoji.",
        "garbage_stop_words": "Nie wyszukano: zapytanie składa się tylko ze słów takich jak „{detail}”, do których nie pasuje żaden przepis.",
        "garbage_mash": "Nie wyszukano: zapytanie nie wygląda na słowa. Wpisz pytanie słowami.",
        "outside_corpus": "Odpowiedzi prawdopodobnie nie ma w aktach, które zawiera lexpipe ({held}). Poniższe wyniki to najbliższe przepisy, a nie odpowiedź.",
        "outside_named": "Pytanie wymienia akt, którego lexpipe nie zawiera: {acts}.",
        "outside_implied": "Podobne pytania rozstrzyga akt, którego lexpipe nie zawiera: {acts}.",
        "confidence": "Pewność, że pierwszy wynik odpowiada na pytanie: {p} %",
    },
    "de": {
        "title": "lexpipe: Gesetze durchsuchen", "skip": "Zum Inhalt springen", "search": "Suchen",
        "query": "Suchanfrage", "query_placeholder": "z. B. Kaufvertrag Mangel",
        "retriever": "Suchverfahren", "act": "Gesetz", "all_acts": "Alle Gesetze", "status": "Status",
        "any": "Beliebig", "as_of": "Rechtsstand am", "target": "Suchen in", "statutes": "Gesetze",
        "cases": "Entscheidungen", "both": "Gesetze und Entscheidungen", "in_force": "in Kraft",
        "repealed": "aufgehoben", "pending": "angekündigt", "results": "Ergebnisse",
        "result_count": "Treffer {first}–{last} von den {n} besten",
        "no_results": "Nichts gefunden. Andere Wörter, ein anderes Datum oder weniger Filter versuchen.",
        "enter_query": "Suchanfrage eingeben, um die Gesetze zu durchsuchen.", "facets": "Eingrenzen",
        "by_act": "Nach Gesetz", "by_status": "Nach Status", "pages": "Ergebnisseiten", "prev": "Zurück",
        "next": "Weiter", "page": "Seite {n}", "version": "Fassung", "error": "Fehler",
        "breadcrumbs": "Stelle im Gesetz", "unit_as_of": "Stand am", "show": "Anzeigen",
        "read_from": "Gelesen aus der Fassung vom {v}", "next_version": "nächste Fassung: {v}",
        "newest": "dies ist die neueste Fassung", "neighbours": "Benachbarte Vorschriften",
        "prev_unit": "Vorherige Vorschrift", "next_unit": "Nächste Vorschrift", "children": "Inhalt",
        "timeline": "Fassungen", "kind_added": "eingefügt", "kind_changed": "Wortlaut geändert", "kind_repealed": "aufgehoben", "kind_removed": "entfernt", "kind_editorial": "nur redaktionell geändert", "unchanged": "unverändert",
        "absent": "in dieser Fassung nicht enthalten", "read_at": "Stand {v} lesen",
        "pending_heading": "Angekündigte Fassung", "pending_from": "In Kraft ab {d}",
        "pending_applies": "Die angekündigte Fassung gilt am gewählten Tag.",
        "cited_by": "Zitiert in Entscheidungen", "cited_by_count": "{cases} Entscheidungen, {citations} Zitate",
        "cited_none": "Keine zitierenden Entscheidungen vorhanden.",
        "cited_not_held": "Für dieses Gesetz sind keine Entscheidungen vorhanden.", "not_found": "Nicht gefunden",
        "bad_request": "Fehlerhafte Anfrage", "invalid": "Nicht lesbar", "back_to_search": "Zurück zur Suche",
        "language": "Sprache", "text": "Wortlaut", "repealed_note": "Diese Vorschrift ist aufgehoben.",
        "no_text": "Diese Einheit hat keinen eigenen Wortlaut.", "more_judgments": "und {n} weitere",
        "court_SUPREME": "Oberstes Gericht (SN)", "court_COMMON": "ordentliches Gericht",
        "court_CONSTITUTIONAL_TRIBUNAL": "Verfassungsgericht",
        "court_NATIONAL_APPEAL_CHAMBER": "Landesberufungskammer (KIO)", "diff": "Änderungen", "first_held": "älteste vorhandene Fassung", "decided": "entschieden",
        "garbage_controls": "Nicht gesucht: Die Anfrage enthält Steuerzeichen ({detail}).",
        "garbage_no_words": "Nicht gesucht: Die Anfrage enthält keine Wörter, nur Symbole oder Emoji.",
        "garbage_stop_words": "Nicht gesucht: Die Anfrage besteht nur aus Wörtern wie „{detail}“, zu denen keine Vorschrift passt.",
        "garbage_mash": "Nicht gesucht: Die Anfrage sieht nicht nach Wörtern aus. Bitte die Frage in Worten stellen.",
        "outside_corpus": "Die Antwort steht wahrscheinlich nicht in den Gesetzen, die lexpipe enthält ({held}). Die Treffer unten sind die nächstliegenden Vorschriften, keine Antwort.",
        "outside_named": "Die Frage nennt ein Gesetz, das lexpipe nicht enthält: {acts}.",
        "outside_implied": "Ähnliche Fragen beantwortet ein Gesetz, das lexpipe nicht enthält: {acts}.",
        "confidence": "Sicherheit, dass der erste Treffer die Frage beantwortet: {p} %",
    },
}

assert all(STRINGS[lang].keys() == STRINGS["en"].keys() for lang in LANGUAGES), "UI strings differ per language"


class Strings:
    """``t("key", n=3)``: the string in this language, formatted."""

    def __init__(self, lang: str):
        self.lang = lang if lang in STRINGS else DEFAULT
        self._s = STRINGS[self.lang]

    def __call__(self, key: str, **kw) -> str:
        text = self._s.get(key, STRINGS[DEFAULT].get(key, key))
        return text.format(**kw) if kw else text

    def court(self, court_type: str) -> str:
        """A SAOS court type in words, or as given when unknown."""
        return self._s.get(f"court_{court_type}", court_type)


def from_accept_language(header: str | None) -> str | None:
    """The first supported language of an ``Accept-Language`` header, by its q weights."""
    if not header:
        return None
    ranked = []
    for i, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        ranked.append((-q, i, tag.strip().lower().split("-", 1)[0]))
    for neg_q, _, code in sorted(ranked):
        if neg_q < 0 and code in LANGUAGES:
            return code
    return None


def choose(param: str | None, *, acts: list[str] = (), query: str | None = None,
           accept_language: str | None = None) -> str:
    """The UI language of a request (see the module doc)."""
    if param in LANGUAGES:
        return param
    prefixes = {a.split(":", 1)[0] for a in acts if a}
    if len(prefixes) == 1 and (p := prefixes.pop()) in LANGUAGES:
        return p
    if query:
        from pipelines.retrieval.query_classifier import detect_query_language

        found = detect_query_language(query, ("pl", "de"))
        if found:
            return found
    return from_accept_language(accept_language) or DEFAULT
