"""Statutes, any jurisdiction: one node model, the versioned corpus store, diffs and checks.

Each jurisdiction is a package beside this file (``pl/``, ``de/``) with the same module names
where it can: ``parser`` / ``markdown`` / ``pdf`` read sources, ``build`` runs the steps.
"""
