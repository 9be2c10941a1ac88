"""Statute citations in German court decisions: extraction (spaCy component), linking to corpus
unit ids, per-§ counts over the case store, and evaluation against the refex gold standard."""
