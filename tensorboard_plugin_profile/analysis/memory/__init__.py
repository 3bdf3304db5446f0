"""Memory over time: allocator events of a host (``allocator``) and the tensor memory of a
ProfilerHook timeline (``timeline``).
"""
