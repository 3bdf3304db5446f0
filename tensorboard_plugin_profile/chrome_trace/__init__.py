"""Chrome-trace JSON profiles: TensorFlow ProfilerHook timelines and PyTorch profiler traces.

One reader for both (``read_chrome_trace``): the file is streamed (``stream.py``), its
events collected into interned columns (``collect.py``), turned into the XSpace decoder's
raw form (``raw.py``) and built into the same ``Space`` tables as an ``.xplane.pb``
(``tables.py``). ``Space.source_format`` says which kind it was; ``Space.extras`` holds the
file's top-level keys (PyTorch's ``deviceProperties``, ``distributedInfo``, ...).

File names (``names.py``: one matcher per format, which the format registry in
``store/formats.py`` hands to discovery) decide what is picked up: ``timeline-<step>.json``
and ``<worker>.<span>.pt.trace.json``, each optionally gzip-compressed; ``sniff.py`` skips a
listed file whose first bytes are no JSON trace.

Usage::

    space = read_chrome_trace("run/worker0.1.pt.trace.json.gz")
    space.source_format        # "pytorch"
"""

from .names import parse_trace_file_name
from .read import read_chrome_trace

__all__ = ["parse_trace_file_name", "read_chrome_trace"]
