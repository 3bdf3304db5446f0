"""TensorBoard Profile plugin: turns profiler files into performance tools.

The packages follow the pipeline (docs/architecture.md): ``store`` finds and keeps profiles,
``xspace`` and ``chrome_trace`` decode them into columns, ``preprocessing`` prepares the
copy every tool reads, ``analysis`` and ``tools`` compute each tool's data, ``pod``
merges the hosts of a multi-host session from small per-host summaries, ``service``
caches and serves it, ``api`` answers with DataFrames and SQL (notebooks, scripts,
agents), ``web`` speaks HTTP and the command line, ``capture`` asks running profiler
servers for new profiles. ``common`` and ``kernels`` serve every stage.

In a notebook (docs/notebook.md)::

    import tensorboard_plugin_profile as tbp
    p = tbp.open("logs/")
    p.table("framework_op_stats")
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    # ``from tensorboard_plugin_profile import live`` (the documented way to trace from a
    # training script) without importing the web layer for everyone else.
    if name == "live":
        from .web import live

        return live
    # ``tbp.open(path)``: pandas and the service load on first use, not on import.
    if name in ("open", "Profile"):
        from .api import profile

        return profile.open_profile if name == "open" else profile.Profile
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
