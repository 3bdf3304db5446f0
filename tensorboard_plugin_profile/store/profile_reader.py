"""Reading one profile file into a ``Space``, by the decoder its format's entry names.

``read_profile(path)`` reads a path given by the user (CLI, notebooks); ``read_host_profile``
reads a file discovery listed, through the checked open of ``safe_open.py`` (never outside
the logdir).

The format registry (``store/formats.py``) picks the entry by the file's name: ``.xplane.pb``
(optionally ``.gz``) files go to the XSpace decoder (``xspace/``); every other profile file
discovery hands out (ProfilerHook timelines, PyTorch traces, a single ``*.json[.gz]``) is a
Chrome trace (``chrome_trace/``). Both return a ``Space``.

For the service, ``read_host_profile`` returns an XSpace already preprocessed
(``preprocessing``): every tool reads the preprocessed tables, so keeping the decoded ones
beside them would hold each event twice (docs/cold_path.md, "Stage by stage").
"""

from __future__ import annotations

import os
from typing import Any

from ..xspace.model import Space
from .formats import reader_for


def read_profile(path: str) -> Space:
    return reader_for(os.path.basename(path)).read_path(path)


def read_host_profile(host_file: Any, with_flows: bool = True) -> Space:
    """A listed host file (``logdir.HostFile``), opened and checked inside its logdir; an
    XSpace comes back preprocessed (without flows, which only the trace viewer reads, when
    ``with_flows`` is False), and its decoded tables are dropped."""
    return reader_for(host_file.name).read_listed(host_file, with_flows)
