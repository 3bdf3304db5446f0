"""The seam between the Chrome-trace reader and the shared table builder.

``space_from_raw`` is the one place that knows how the XSpace decoder turns a raw form
into ``Plane`` tables; when the decoder's raw form changes, only this function follows.
"""

from __future__ import annotations

from ..xspace import decode
from ..xspace.model import Space


def space_from_raw(raw: dict, source: str, source_format: str, extras: dict) -> Space:
    time_base_ns = decode._time_base_ns(raw["planes"])
    planes = [decode._build_plane(i, p, time_base_ns) for i, p in enumerate(raw["planes"])]
    space = Space(
        source=source,
        planes=planes,
        hostnames=raw["hostnames"],
        errors=raw["errors"],
        warnings=raw["warnings"],
        time_base_ns=time_base_ns,
        # Chrome traces carry no TraceMe grouping: XSpace preprocessing does not apply.
        preprocessed=True,
        source_format=source_format,
        extras=extras,
    )
    space.nbytes = decode._estimate_nbytes(space)
    return space
