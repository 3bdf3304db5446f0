"""The memory viewer's buffer blocks: where each buffer sits in its allocation, when.

Every temporary allocation with a heap trace becomes a white container block; each
canonical logical buffer in it becomes a block from the step it is allocated to the
step it is freed, at its offset. Colours follow upstream's palette so a buffer has
the same colour in the peak charts and the blocks: buffers shown at the peak keep
their peak number, the others take the count of blocks drawn so far (upstream
skips blocks thinner than one unit of its 4096 x 4096 canvas, so we count the same).

Usage::

    blocks = buffer_blocks(proto, assignment, replay, number_of, memory_color)
"""

from __future__ import annotations

from typing import Any

from . import shapes
from .attribution import source_info

CANVAS = 4096  # upstream's drawing size in both directions
CONTAINER_COLOR = "#ffffff"
PALETTE = (
    "#e91e63",
    "#2196f3",
    "#81c784",
    "#4dd0e1",
    "#3f51b5",
    "#e53935",
    "#ff9100",
    "#b39ddb",
    "#90a4ae",
    "#26c6da",
    "#ad1457",
    "#03a9f4",
    "#2196f3",
    "#c2185b",
    "#795548",
    "#f9a825",
    "#00bfa5",
    "#880e4f",
    "#d500f9",
    "#ce93d8",
    "#ec407a",
    "#4caf50",
    "#ff8f00",
    "#ffca28",
    "#ab47bc",
    "#00e5ff",
    "#ff9800",
    "#40c4ff",
    "#1e88e5",
    "#9fa8da",
    "#bf360c",
    "#00b8d4",
    "#f57f17",
    "#64b5f6",
    "#e040fb",
    "#ffab91",
    "#4caf50",
    "#01579b",
    "#66bb6a",
    "#ef9a9a",
    "#558b2f",
    "#fb8c00",
    "#ff4081",
    "#00e676",
    "#388e3c",
    "#424242",
    "#6d4c41",
    "#c62828",
    "#616161",
    "#00897b",
    "#448aff",
    "#0d47a1",
    "#607d8b",
    "#673ab7",
    "#00c853",
    "#2e7d32",
    "#ffa726",
    "#5e35b1",
    "#ba68c8",
    "#8d6e63",
    "#00bcd4",
    "#ff6f00",
    "#f4511e",
    "#ff1744",
    "#9e9e9e",
    "#d81b60",
    "#4a148c",
    "#26a69a",
    "#689f38",
    "#7b1fa2",
    "#b0bec5",
    "#304ffe",
    "#f48fb1",
    "#ffd600",
    "#ffb74d",
    "#8bc34a",
    "#303f9f",
    "#5d4037",
    "#80cbc4",
    "#ffcc80",
    "#00acc1",
    "#3e2723",
    "#ff5252",
    "#ff7043",
    "#e91e63",
    "#ea80fc",
    "#e65100",
    "#d84315",
    "#212121",
    "#ff5722",
    "#1976d2",
    "#2962ff",
    "#bdbdbd",
    "#3949ab",
    "#69f0ae",
    "#d50000",
    "#ffd740",
    "#c0ca33",
    "#ff6e40",
    "#00b0ff",
    "#2979ff",
    "#e64a19",
    "#7c4dff",
    "#607d8b",
    "#009688",
    "#ffb300",
    "#c51162",
    "#ffc400",
    "#29b6f6",
    "#3d5afe",
    "#76ff03",
    "#cddc39",
    "#b388ff",
    "#5c6bc0",
    "#9e9d24",
    "#7cb342",
    "#ef5350",
    "#fdd835",
    "#ef6c00",
    "#4fc3f7",
    "#6200ea",
    "#004d40",
    "#ff8a65",
    "#ffab00",
    "#80deea",
    "#0097a7",
    "#7e57c2",
    "#ff6d00",
    "#1565c0",
    "#455a64",
    "#ffc107",
    "#4527a0",
    "#ff5722",
    "#f44336",
    "#f57c00",
    "#827717",
    "#a5d6a7",
    "#82b1ff",
    "#9c27b0",
    "#ff80ab",
    "#e1bee7",
    "#78909c",
    "#311b92",
    "#00695c",
    "#4e342e",
    "#3f51b5",
    "#651fff",
    "#9e9e9e",
    "#81d4fa",
    "#f8bbd0",
    "#b71c1c",
    "#0091ea",
    "#673ab7",
    "#a1887f",
    "#4db6ac",
    "#ffa000",
    "#6a1b9a",
    "#43a047",
    "#bcaaa4",
    "#546e7a",
    "#aeea00",
    "#e57373",
    "#ffccbc",
    "#006064",
    "#fbc02d",
    "#ffeb3b",
    "#8bc34a",
    "#039be5",
    "#8e24aa",
    "#80d8ff",
    "#009688",
    "#9ccc65",
    "#512da8",
    "#ffc107",
    "#757575",
    "#0277bd",
    "#ff3d00",
    "#33691e",
    "#03a9f4",
    "#00838f",
    "#ff8a80",
    "#283593",
    "#f50057",
    "#1a237e",
    "#90caf9",
    "#9c27b0",
    "#aa00ff",
    "#aed581",
    "#afb42b",
    "#9575cd",
    "#d32f2f",
    "#64dd17",
    "#f44336",
    "#795548",
    "#cddc39",
    "#ff9e80",
    "#7986cb",
    "#dd2c00",
    "#0288d1",
    "#ff9800",
    "#263238",
    "#00796b",
    "#42a5f5",
    "#8c9eff",
    "#1b5e20",
    "#ffab40",
    "#536dfe",
    "#00bcd4",
    "#f06292",
)


def buffer_blocks(proto: Any, assignment: Any, run: Any, number_of: dict, color: int) -> list:
    from .buffers import category, is_indefinite

    traces = proto.buffer_assignment.heap_simulator_traces
    allocs = [
        a
        for a in assignment.allocations_of(color)
        if not is_indefinite(a) and int(a.index) in assignment.trace_of_alloc
    ]
    total_y = sum(int(a.size) for a in allocs)
    total_x = max(
        (len(traces[assignment.trace_of_alloc[int(a.index)]].events) for a in allocs), default=0
    )
    if not total_y or not total_x:
        return []
    scale_x, scale_y = CANVAS / total_x, CANVAS / total_y
    drawn = 0
    blocks: list = []
    offset = 0
    for alloc in allocs:
        name = category(alloc)
        blocks.append(_block(-1, name, offset, int(alloc.size), 0, total_x, name, CONTAINER_COLOR))
        drawn += total_x * scale_x >= 1 and int(alloc.size) * scale_y >= 1
        for assigned in alloc.assigned:
            buffer = assignment.buffers.get(int(assigned.logical_buffer_id))
            if buffer is None or not buffer.span:
                continue
            width = buffer.span[1] - buffer.span[0]
            hue = PALETTE[number_of.get(buffer.id, drawn) % len(PALETTE)]
            block = _block(
                buffer.id,
                buffer.name_with_index(),
                offset + buffer.offset,
                buffer.size,
                buffer.span[0],
                buffer.span[1],
                name,
                hue,
            )
            block["tfOpName"] = buffer.instruction.metadata.op_name
            source = source_info(buffer.instruction, proto.hlo_module.stack_frame_index)
            if source:
                block["sourceInfo"] = source
            block["shapeString"] = shapes.shape_text(buffer.shape)
            block["unpaddedSize"] = buffer.unpadded
            blocks.append({k: v for k, v in block.items() if v not in (0, "", None)})
            drawn += width * scale_x >= 1 and buffer.size * scale_y >= 1
        offset += int(alloc.size)
    return blocks


def _block(buffer_id, name, offset, size, start, end, group, hue) -> dict:
    block = {
        "logicalBufferId": buffer_id,
        "name": name,
        "offset": offset,
        "size": size,
        "startStep": start,
        "endStep": end,
        "category": group,
        "color": hue,
    }
    return {k: v for k, v in block.items() if v not in (0, "", None)}
