"""The Elasticsearch 9 search backend: one index per language (acts and versions as fields),
publications made visible by one alias swap, and searches that answer like the embedded backend's."""
