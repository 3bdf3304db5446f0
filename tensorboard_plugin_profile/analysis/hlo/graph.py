"""The graph around one HLO op: its operands and users out to a chosen depth.

Nodes are instructions of the op's computation; a fusion node carries its fused
computation (nodes and edges) so the page can expand it in place. The walk stops
at ``MAX_NODES`` and says so.

Usage::

    g = neighbourhood(ModuleIndex(module), "fusion.3", depth=2)
    g["nodes"], g["edges"], g["truncated"]
"""

from __future__ import annotations

from collections import deque
from typing import Any, Optional

from ...common.errors import NotFound
from . import shapes
from .op_events import category
from .printer import ModuleIndex

MAX_NODES = 300
MAX_FUSED_NODES = 200  # larger fused computations are listed by name only


def _node(index: ModuleIndex, inst: Any, depth: int) -> dict:
    node = {
        "name": inst.name,
        "opcode": inst.opcode,
        "shape": shapes.shape_text(inst.shape),
        "category": category(inst),
        "tfOp": inst.metadata.op_name,
        "depth": depth,
    }
    if inst.opcode == "fusion" and inst.called_computation_ids:
        fused = index.computations.get(int(inst.called_computation_ids[0]))
        if fused is not None:
            node["fusion"] = _fused(index, fused)
    return node


def _fused(index: ModuleIndex, computation: Any) -> dict:
    out: dict = {"computation": computation.name, "size": len(computation.instructions)}
    if len(computation.instructions) <= MAX_FUSED_NODES:
        out["nodes"] = [
            {"name": i.name, "opcode": i.opcode, "shape": shapes.shape_text(i.shape)}
            for i in computation.instructions
        ]
        out["edges"] = _edges(index, computation.instructions)
    return out


def _edges(index: ModuleIndex, instructions: Any, keep: Optional[set] = None) -> list:
    edges = []
    for inst in instructions:
        if keep is not None and inst.name not in keep:
            continue
        for operand in inst.operand_ids:
            source = index.name(operand)
            if keep is None or source in keep:
                edges.append({"from": source, "to": inst.name})
    return edges


def users_of(computation: Any) -> dict:
    users: dict = {}
    for inst in computation.instructions:
        for operand in inst.operand_ids:
            users.setdefault(int(operand), []).append(inst)
    return users


def find_instruction(index: ModuleIndex, name: str) -> Any:
    for inst in index.instructions.values():
        if inst.name == name:
            return inst
    raise NotFound(f"No HLO op named {name!r} in module {index.module.name}.")


def neighbourhood(index: ModuleIndex, name: str, depth: int = 3) -> dict:
    center = find_instruction(index, name)
    computation = index.computation_of[int(center.id)]
    users = users_of(computation)
    seen = {int(center.id): 0}
    queue = deque([center])
    truncated = False
    while queue:
        inst = queue.popleft()
        level = seen[int(inst.id)]
        if level >= depth:
            continue
        near = [index.instructions[i] for i in inst.operand_ids if i in index.instructions]
        for other in near + users.get(int(inst.id), []):
            if int(other.id) in seen:
                continue
            if len(seen) >= MAX_NODES:
                truncated = True
                break
            seen[int(other.id)] = level + 1
            queue.append(other)
    chosen = [i for i in computation.instructions if int(i.id) in seen]
    names = {i.name for i in chosen}
    return {
        "module": index.module.name,
        "computation": computation.name,
        "center": center.name,
        "depth": depth,
        "nodes": [_node(index, i, seen[int(i.id)]) for i in chosen],
        "edges": _edges(index, chosen, names),
        "truncated": truncated,
    }


def op_list(index: ModuleIndex) -> list:
    """Every op of the module's non-fused computations, for the search box."""
    return [
        {"name": i.name, "opcode": i.opcode, "computation": c.name}
        for c in index.module.computations
        if not c.is_fusion_computation
        for i in c.instructions
    ]


def start_op(index: ModuleIndex, ops: Any) -> dict:
    """The op the graph viewer opens on: the module's op with the most self time in the
    profile (``ops``: ``op_events`` rows of this program), else the entry computation's root.
    ``{"name", "reason", "selfPs", "share"}``; the page says why it shows that op."""
    listed = {i["name"] for i in op_list(index)}
    if len(ops):
        timed = ops[ops["hlo_op"].isin(listed) & (ops["self_ps"] > 0)]
        if len(timed):
            best = timed.loc[timed["self_ps"].idxmax()]
            self_ps, total = int(best["self_ps"]), int(ops["self_ps"].sum())
            reason = "the op with the most self time in this module"
            return _start(str(best["hlo_op"]), reason, self_ps, self_ps / total if total else 0.0)
    module = index.module
    entry = next((c for c in module.computations if c.name == module.entry_computation_name), None)
    root = index.instructions.get(int(entry.root_id)) if entry is not None else None
    if root is not None:
        reason = "the root of the entry computation (no op of this module ran in the profile)"
        return _start(root.name, reason, 0, 0.0)
    return _start("", "the module has no ops", 0, 0.0)


def _start(name: str, reason: str, self_ps: int, share: float) -> dict:
    return {"name": name, "reason": reason, "selfPs": self_ps, "share": share}
