"""Cell-by-cell comparison of our DataTables with the upstream references."""

from __future__ import annotations

import functools
import math

from conftest import host_files

from tensorboard_plugin_profile.xspace import read_xspace

REL = 0.005
ABS = 1e-6


@functools.cache
def fixture_hosts(name: str) -> tuple:
    """(host name, Space) of every host of a fixture, decoded once per test run."""
    return tuple((p.name[: -len(".xplane.pb")], read_xspace(str(p))) for p in host_files(name))


def same_value(ours, ref) -> bool:
    if isinstance(ref, bool) or isinstance(ours, bool):
        return ours is ref
    if isinstance(ref, (int, float)) and isinstance(ours, (int, float)):
        if math.isnan(ref) or math.isnan(ours):
            return math.isnan(ref) and math.isnan(ours)
        return abs(ours - ref) <= max(ABS, REL * abs(ref))
    return ours == ref


def table_differences(ours: dict, ref: dict, where: str = "") -> list:
    """Human-readable differences between two DataTables (empty when they match)."""
    out = []
    if ours.get("cols") != ref.get("cols"):
        out.append(f"{where} columns differ: {ours.get('cols')} != {ref.get('cols')}")
        return out
    if ours.get("p") != ref.get("p"):
        keys = set(ours.get("p", {})) | set(ref.get("p", {}))
        for k in sorted(keys):
            a, b = ours.get("p", {}).get(k), ref.get("p", {}).get(k)
            if a != b:
                out.append(f"{where} p[{k}]: ours {a!r} != ref {b!r}")
    if len(ours["rows"]) != len(ref["rows"]):
        out.append(f"{where} row count: ours {len(ours['rows'])} != ref {len(ref['rows'])}")
    for i, (a, b) in enumerate(zip(ours["rows"], ref["rows"])):
        for j, (ca, cb) in enumerate(zip(a["c"], b["c"])):
            if not same_value(ca.get("v"), cb.get("v")):
                col = ref["cols"][j]["id"]
                out.append(f"{where} row {i} {col}: ours {ca.get('v')!r} != ref {cb.get('v')!r}")
    return out
