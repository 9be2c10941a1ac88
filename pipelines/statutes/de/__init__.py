"""German federal statutes: bundestag/gesetze Markdown and gesetze-im-internet PDFs, the build steps."""
