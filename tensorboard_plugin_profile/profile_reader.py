"""One decoder per input format: ``read_profile(path)`` picks it by the file's name.

``.xplane.pb`` (optionally ``.gz``) files go to the XSpace decoder (``xspace/``); every other
profile file discovery hands out (ProfilerHook timelines, PyTorch traces, a single
``*.json[.gz]``) is a Chrome trace (``chrome_trace/``). Both return a ``Space``.
"""

from __future__ import annotations

from .chrome_trace import read_chrome_trace
from .xspace import read_xspace
from .xspace.model import Space

XPLANE_SUFFIXES = (".xplane.pb", ".xplane.pb.gz")


def read_profile(path: str) -> Space:
    if path.endswith(XPLANE_SUFFIXES):
        return read_xspace(path)
    return read_chrome_trace(path)
