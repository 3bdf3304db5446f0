"""Operations: host and device op metrics (``metrics``), per-host OpStats and their
combination (``op_stats``), GPU kernel reports (``kernels``), executed ops with their name
scope and call stack (``attribution``) aggregated over a tree (``op_tree``), and the TF stats
of a ProfilerHook timeline (``timeline``).
"""
