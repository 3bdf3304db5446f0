"""Small helpers every stage may use: typed errors, memory sizes, JSON output, request
parameters, progress, per-Space memos and the protobuf wire format.

Owns nothing of the pipeline; imports nothing else of this package (the first stage,
with ``protobuf`` and ``demo``: tests/test_layers.py).
"""
