"""lexpipe: legal corpora kept fresh, structured, validated and searchable."""

__version__ = "0.1.0"
