"""Per-instruction facts from a module's HLO: source location, category, expression.

Usage::

    info = source_info(instruction, module.stack_frame_index)  # {"fileName": ..} or {}
    index = InstructionIndex(hlo_proto)
    index.get("fusion.3")   # OpFacts(category="loop fusion", expression="...", ...)
"""

from __future__ import annotations

from typing import Any


def stack_frames(index: Any, frame_id: int) -> str:
    """``file:line:column`` lines from ``frame_id`` (1-based) up to the outermost caller."""
    lines = []
    while 0 < frame_id <= len(index.stack_frames):
        frame = index.stack_frames[frame_id - 1]
        frame_id = frame.parent_frame_id
        name, line, column = "", -1, -1
        location_id = frame.file_location_id
        if 0 < location_id <= len(index.file_locations):
            location = index.file_locations[location_id - 1]
            line, column = location.line, location.column
            if 0 < location.file_name_id <= len(index.file_names):
                name = index.file_names[location.file_name_id - 1]
        lines.append(f"{name}:{line}:{column}")
    return "\n".join(lines)


def source_info(instruction: Any, frame_index: Any) -> dict:
    """Upstream's ``SourceInfo`` of an instruction (empty when it has no source file)."""
    metadata = instruction.metadata
    stack = stack_frames(frame_index, metadata.stack_frame_id)
    if metadata.source_file:
        file, line = metadata.source_file, metadata.source_line
    elif stack:
        first = stack.split("\n", 1)[0].split(":")
        if len(first) < 2:
            return {}
        file = first[0]
        line = int(first[1]) if first[1].lstrip("-").isdigit() else 0
    else:
        return {}
    out = {"fileName": file, "lineNumber": line, "stackFrame": stack}
    return {k: v for k, v in out.items() if v not in (0, "")}
