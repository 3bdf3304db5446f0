"""Preprocessing: one host's decoded XSpace → the grouped, annotated copy every tool reads.

Entry point ``preprocess.preprocess(space)``; the steps (TraceMe mutators, flows, step
grouping, GPU derived lines) and ``PlaneEdit``, which builds the copy, are described in
docs/preprocessing.md.
"""
