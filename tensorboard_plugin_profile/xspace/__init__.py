"""XSpace decoding: bytes → per-plane event tables (see ``model.py``)."""

from .decode import decode_xspace, read_xspace
from .model import Plane, Space

__all__ = ["Plane", "Space", "decode_xspace", "read_xspace"]
