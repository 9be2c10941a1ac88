"""Polish judgments (SAOS): ``textContent`` → clean text → sections → chunks → ``pl:cases``.

:mod:`.text` (clean text with block offsets, the German cleaner's :class:`CleanText`),
:mod:`.sections` (komparycja, sentencja, uzasadnienie, rozważania, zdanie odrębne, …),
:mod:`.build` (``CASE_CHUNKS`` rows, the staged/promoted chunk table under
``$LEXPIPE_HOME/caselaw/pl/chunks``).
"""
