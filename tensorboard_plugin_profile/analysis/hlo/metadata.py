"""What XLA recorded about each HLO instruction: framework op name and Python call stack.

JAX (and TF with XLA) store each compiled program's ``xla.HloProto`` on the
``/host:metadata`` plane; ``hlo/modules.py`` parses them once per Space. Every
instruction's ``OpMetadata`` carries the framework op name
(``jit(train_step)/jit(main)/dot_general``: the name-scope path) and the Python
source: either ``source_file``/``source_line`` or, in newer XLA, a
``stack_frame_id`` into the module's ``StackFrameIndexProto``, whose frames chain
to their callers.

Usage::

    table = instruction_metadata(space)     # memoised per Space
    table.loc[(32, "dot.1")]                 # op_type, op_name, opcode, frames
    table.frames                             # tuple of "file:line function", caller first
"""

from __future__ import annotations

from typing import Any, Iterator

import pandas as pd

from ...common.errors import CorruptProfile
from ...common.memo import memoized
from ...xspace.model import Space
from .modules import program_modules

COLUMNS = ("program_id", "instruction", "opcode", "op_type", "op_name", "frames")


def instruction_metadata(space: Space) -> pd.DataFrame:
    """One row per HLO instruction with metadata, indexed by (program_id, instruction)."""
    return memoized([space], "hlo_instruction_metadata", lambda: _read(space))


def _read(space: Space) -> pd.DataFrame:
    try:
        modules = program_modules(space)
    except CorruptProfile:  # a damaged HLO: the views say "no source" rather than fail
        modules = {}
    rows = [
        (program_id,) + row for program_id, proto in modules.items() for row in _module_rows(proto)
    ]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame = frame.drop_duplicates(["program_id", "instruction"])
    return frame.set_index(["program_id", "instruction"])


def _module_rows(proto: Any) -> Iterator[tuple]:
    """(instruction, opcode, op_type, op_name, frames) per instruction of one HloProto.

    A fusion (or call) often carries no metadata of its own; it then takes that of
    the root instruction of the computation it calls, which is the op it computes.
    """
    module = proto.hlo_module
    frames = _stack_frames(module.stack_frame_index)
    instructions = []
    roots: dict = {}  # computation id -> its root instruction's (op_type, op_name, frames)
    for computation in module.computations:
        for instruction in computation.instructions:
            own = _own_metadata(instruction.metadata, frames)
            instructions.append((instruction, own))
            if instruction.id == computation.root_id:
                roots[computation.id] = own
    for instruction, own in instructions:
        if not own[1]:
            called = (roots.get(c) for c in instruction.called_computation_ids)
            own = next((r for r in called if r and r[1]), own)
        yield (instruction.name, instruction.opcode) + own


def _own_metadata(metadata: Any, frames: dict) -> tuple:
    if metadata.stack_frame_id:
        stack = frames.get(metadata.stack_frame_id, ())
    elif metadata.source_file:
        stack = (f"{metadata.source_file}:{metadata.source_line}",)
    else:
        stack = ()
    return (metadata.op_type, metadata.op_name, stack)


def _stack_frames(index: Any) -> dict:
    """Frame id → call stack ("file:line function"), outermost caller first (ids 1-based)."""
    files, functions = list(index.file_names), list(index.function_names)
    locations = [
        f"{_lookup(files, loc.file_name_id)}:{loc.line} {_lookup(functions, loc.function_name_id)}"
        .rstrip()
        for loc in index.file_locations
    ]
    stacks: dict = {}
    for frame_id, frame in enumerate(index.stack_frames, 1):
        parent = frame.parent_frame_id  # parents come first in the index: one pass suffices
        prefix = stacks.get(parent, ()) if 0 < parent < frame_id else ()
        stacks[frame_id] = prefix + (_lookup(locations, frame.file_location_id),)
    return stacks


def _lookup(items: list, one_based: int) -> str:
    return items[one_based - 1] if 0 < one_based <= len(items) else "?"
