"""The trace index: a columnar index of a preprocessed trace for windowed queries.

``trace_index`` builds it (with ``trace_flows`` for flow arrows and ``levels`` for the
pixel sizes both precompute), ``trace_window`` answers one time window, ``trace_search``
finds events by name or argument (regexes bounded by ``safe_regex``, which runs them in a
``_regex_worker`` subprocess). See docs/trace_viewer.md.
"""
