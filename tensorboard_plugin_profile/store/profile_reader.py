"""One decoder per input format, picked by the file's name.

``read_profile(path)`` reads a path given by the user (CLI, notebooks); ``read_host_profile``
reads a file discovery listed, through ``logdir``'s checked open (never outside the logdir).

``.xplane.pb`` (optionally ``.gz``) files go to the XSpace decoder (``xspace/``); every other
profile file discovery hands out (ProfilerHook timelines, PyTorch traces, a single
``*.json[.gz]``) is a Chrome trace (``chrome_trace/``). Both return a ``Space``.

For the service, ``read_host_profile`` returns an XSpace already preprocessed
(``analysis.preprocessing``): every tool reads the preprocessed tables, so keeping the decoded
ones beside them would hold each event twice (docs/cold_path.md, "Memory").
"""

from __future__ import annotations

from typing import Any

from ..chrome_trace import read_chrome_trace
from ..preprocessing.preprocess import preprocess_decoded
from ..xspace import decode_xspace, read_xspace
from ..xspace.filebytes import FileBytes
from ..xspace.model import Space
from .logdir import open_host_file, read_host_file

XPLANE_SUFFIXES = (".xplane.pb", ".xplane.pb.gz")


def read_profile(path: str) -> Space:
    if path.endswith(XPLANE_SUFFIXES):
        return read_xspace(path)
    return read_chrome_trace(path)


def read_host_profile(host_file: Any, with_flows: bool = True) -> Space:
    """A listed host file (``logdir.HostFile``), opened and checked inside its logdir; an
    XSpace comes back preprocessed (without flows, which only the trace viewer reads, when
    ``with_flows`` is False), and its decoded tables are dropped."""
    if host_file.path.endswith(XPLANE_SUFFIXES):
        # FileBytes: the decoder gives the file's memory back as it walks it.
        data = read_host_file(host_file, FileBytes)
        return preprocess_decoded(decode_xspace(data, host_file.name), with_flows)
    return read_chrome_trace(host_file.path, opener=lambda: open_host_file(host_file))
