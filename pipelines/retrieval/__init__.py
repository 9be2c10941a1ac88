"""Retrieval over the published corpus: analysers, encoders, backends, fusion, evaluation."""
