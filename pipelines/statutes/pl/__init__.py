"""Polish statutes: ISAP unified-text PDFs (``parser``), their tables and the build steps."""
