"""The seam between the Chrome-trace reader and the shared table builder.

``space_from_raw`` hands the reader's raw form to the XSpace decoder's table builder and
marks what is Chrome-trace specific; when the decoder's raw form changes, the reader's
``raw.py`` and this function follow.
"""

from __future__ import annotations

import dataclasses

from ..xspace import decode
from ..xspace.model import Space


def space_from_raw(raw: dict, source: str, source_format: str, extras: dict) -> Space:
    space = decode.space_from_raw(raw, source)
    # Chrome traces carry no TraceMe grouping: XSpace preprocessing does not apply.
    return dataclasses.replace(
        space, preprocessed=True, source_format=source_format, extras=extras, nbytes=space.nbytes
    )
