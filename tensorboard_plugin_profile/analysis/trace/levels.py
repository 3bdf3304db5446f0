"""Pixel sizes of the trace index's levels of detail, shared by events and flow arrows.

A zoomed-out window query merges events narrower than one pixel and skips arrows whose
events are all that narrow. Both the index (``trace_index``) and its flow table
(``trace_flows``) precompute, per pixel size 1 ns·4^k, what survives at that size; the
window query picks the largest precomputed size not above its own pixel. The two tables
must use the same sizes, so they come from here.
"""

from __future__ import annotations

from typing import Iterator

LEVEL_BASE_PS = 1000
LEVEL_FACTOR = 4


def pixel_sizes(up_to: int) -> Iterator[int]:
    """LEVEL_BASE_PS · LEVEL_FACTOR^k for k = 0, 1, ... while not above ``up_to``."""
    pixel = LEVEL_BASE_PS
    while pixel <= up_to:
        yield pixel
        pixel *= LEVEL_FACTOR
