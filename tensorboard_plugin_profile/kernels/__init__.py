"""Shared primitives on event columns: sequential passes compiled in C with numpy or
Python twins that give identical results (``passes``, ``graph_passes``), interval nesting,
per-distinct-name tests and the cold conversion's buffer pool; and ``compiled``, the one
place every stage asks whether to run a module's compiled twin.

May import ``common`` only; every later stage may import it.
"""
