"""What a PyTorch trace says about where it ran: devices, distributed setup, workers."""

from __future__ import annotations

from ...xspace.model import Space

GIB = 1024**3


def gpu_info(space: Space, device: int) -> dict:
    """Name, memory and compute capability of one GPU from the trace's ``deviceProperties``."""
    props = space.extras.get("metadata", {}).get("deviceProperties") or []
    prop = next((p for p in props if isinstance(p, dict) and p.get("id") == device), None)
    if prop is None and 0 <= device < len(props) and isinstance(props[device], dict):
        prop = props[device]
    if not prop:
        return {}
    out = {}
    if prop.get("name") is not None:
        out["Name"] = str(prop["name"])
    if prop.get("totalGlobalMem") is not None:
        out["Memory"] = f"{round(float(prop['totalGlobalMem']) / GIB, 2)} GB"
    if prop.get("computeMajor") is not None and prop.get("computeMinor") is not None:
        out["Compute Capability"] = f"{prop['computeMajor']}.{prop['computeMinor']}"
    return out


def distributed_info(space: Space) -> dict:
    info = space.extras.get("metadata", {}).get("distributedInfo")
    return info if isinstance(info, dict) else {}
