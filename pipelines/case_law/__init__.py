"""Case law (court decisions): Legal HTML → clean text → sections → retrieval chunks.

Orchestrator-free steps over the CASES table written by ``connectors/case_store.py``:
:mod:`.html_text` (clean text with block offsets), :mod:`.sections` (Tenor, Tatbestand, …),
:mod:`.chunks` (token-bounded chunks that never cross a section; ``case_chunks``).
"""
