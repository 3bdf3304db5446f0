"""Steps: markers and typed spans of each host (``events``, compiled walk in ``keys``),
their non-overlapping pieces (``sweep``), the step table (``step_db``), guessed steps for
profiles without markers (``guess``) and a Space's step database across hosts (``build``).
"""
