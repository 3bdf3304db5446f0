"""The front doors: HTTP routes shared by the TensorBoard plugin and the standalone server,
the plugin and its loader, live tracing, and the ``tbprof`` command line.

The last stage: may import everything; nothing imports it (but ``__main__``).
"""
