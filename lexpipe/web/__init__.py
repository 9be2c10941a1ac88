"""Server-rendered HTML pages over the same services as the JSON API: the search page and the unit
page (``router.py``), their view models (``views.py``), UI strings in pl/de/en (``i18n.py``),
Jinja2 templates and one stylesheet (no JavaScript build; the pages work without JavaScript)."""
