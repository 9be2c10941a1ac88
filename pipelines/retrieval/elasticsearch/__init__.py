"""The Elasticsearch 9 search backend: versioned chunk indices behind aliases, and searches that
answer like the embedded backend's."""
