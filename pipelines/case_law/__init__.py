"""Case law (court decisions): Legal HTML → clean text → sections → retrieval chunks.

Orchestrator-free steps over the CASES table written by ``connectors/case_store.py``:
:mod:`.html_text` (clean text with block offsets), :mod:`.sections` (Tenor, Tatbestand, …),
:mod:`.chunks` (token-bounded chunks that never cross a section; ``case_chunks``).
Polish judgments (SAOS) over the ``SAOS_JUDGMENTS`` table: :mod:`.pl` (the same steps, the same
``CASE_CHUNKS`` rows, staged and promoted under ``caselaw/pl/chunks`` by :mod:`.case_build`).
"""
