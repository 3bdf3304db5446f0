"""TensorBoard Profile plugin: turns profiler files into performance tools.

The packages follow the pipeline (docs/architecture.md): ``store`` finds and keeps profiles,
``xspace`` and ``chrome_trace`` decode them into columns, ``preprocessing`` prepares the
copy every tool reads, ``analysis`` and ``tools`` compute each tool's data, ``pod``
merges the hosts of a multi-host session from small per-host summaries, ``service``
caches and serves it, ``web`` speaks HTTP and the command line, ``capture`` asks running
profiler servers for new profiles. ``common`` and ``kernels`` serve every stage.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    # ``from tensorboard_plugin_profile import live`` (the documented way to trace from a
    # training script) without importing the web layer for everyone else.
    if name == "live":
        from .web import live

        return live
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
