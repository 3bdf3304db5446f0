"""Host-plane builders for the memory and tf.data tests (see ``xspace_builder``)."""

from __future__ import annotations

from xspace_builder import HostPlane, Uint

__all__ = ["HostPlane", "Uint"]
