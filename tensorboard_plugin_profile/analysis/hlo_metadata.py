"""What XLA recorded about each HLO instruction: framework op name and Python call stack.

JAX (and TF with XLA) store each compiled program's ``xla.HloProto`` on the
``/host:metadata`` plane. Every instruction's ``OpMetadata`` carries the
framework op name (``jit(train_step)/jit(main)/dot_general``: the name-scope
path) and the Python source: either ``source_file``/``source_line`` or, in newer
XLA, a ``stack_frame_id`` into the module's ``StackFrameIndexProto``, whose
frames chain to their callers.

We read the few fields we need straight from the wire format (no XLA protos):

    HloProto.hlo_module(1): HloModuleProto
        computations(3) → instructions(2): name(1), opcode(2), metadata(7)
            OpMetadata: op_type(1), op_name(2), source_file(3), source_line(4),
                        stack_frame_id(15)
        stack_frame_index(17): file_names(1), function_names(2),
            file_locations(3) {file_name_id(1), function_name_id(2), line(3)},
            stack_frames(4) {file_location_id(1), parent_frame_id(2)}   (ids 1-based)

Usage::

    table = instruction_metadata(space)     # memoised per Space
    table.loc[(32, "dot.1")]                 # op_type, op_name, opcode, frames
    table.frames                             # tuple of "file:line function", caller first
"""

from __future__ import annotations

from typing import Iterator

import pandas as pd

from ..xspace import schema
from ..xspace.model import Space
from .environment import _varint  # the one varint reader of the wire walkers
from .memo import memoized

COLUMNS = ("program_id", "instruction", "opcode", "op_type", "op_name", "frames")


def instruction_metadata(space: Space) -> pd.DataFrame:
    """One row per HLO instruction with metadata, indexed by (program_id, instruction)."""
    return memoized([space], "hlo_instruction_metadata", lambda: _read(space))


def _read(space: Space) -> pd.DataFrame:
    rows: list = []
    plane = space.plane(schema.METADATA_PLANE)
    if plane is not None:
        program_ids = plane.metadata_stat(schema.PROGRAM_ID)
        for metadata_id, proto in plane.metadata_stat(schema.HLO_PROTO_STAT).items():
            if not proto:
                continue
            data = proto.encode("latin-1") if isinstance(proto, str) else bytes(proto)
            program_id = int(program_ids.get(metadata_id, metadata_id))
            rows.extend((program_id,) + row for row in _module_rows(data))
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame = frame.drop_duplicates(["program_id", "instruction"])
    return frame.set_index(["program_id", "instruction"])


def _module_rows(data: bytes) -> Iterator[tuple]:
    """(instruction, opcode, op_type, op_name, frames) per instruction (one per proto).

    A fusion (or call) often carries no metadata of its own; it then takes that of
    the root instruction of the computation it calls, which is the op it computes.
    """
    for module in _fields(data, 1):
        frames = _stack_frames(module)
        instructions = []
        roots: dict = {}  # computation id -> its root instruction's (op_type, op_name, frames)
        for computation in _fields(module, 3):
            comp = _message(computation)
            root_id = _int(comp, 6)
            for raw in comp.get(2, []):
                fields = _message(raw)
                own = _own_metadata(fields, frames)
                instructions.append((fields, own))
                if _int(fields, 35) == root_id:
                    roots[_int(comp, 5)] = own
        for fields, own in instructions:
            if not own[1]:
                called = (roots.get(c) for c in _varints(fields.get(38, [])))
                own = next((r for r in called if r and r[1]), own)
            yield (_text(fields, 1), _text(fields, 2)) + own


def _own_metadata(fields: dict, frames: dict) -> tuple:
    metadata = _message(fields.get(7, [b""])[-1])
    frame_id = _int(metadata, 15)
    if frame_id:
        stack = frames.get(frame_id, ())
    else:
        source = _text(metadata, 3)
        stack = (f"{source}:{_int(metadata, 4)}",) if source else ()
    return (_text(metadata, 1), _text(metadata, 2), stack)


def _varints(values: list) -> list:
    """Repeated integers, packed (bytes) or not."""
    out: list = []
    for value in values:
        if isinstance(value, int):
            out.append(value)
            continue
        pos = 0
        while pos < len(value):
            number, pos = _varint(value, pos)
            out.append(number)
    return out


def _stack_frames(module: bytes) -> dict:
    """Frame id → call stack ("file:line function"), outermost caller first."""
    index = _fields(module, 17)
    if not index:
        return {}
    fields = _message(index[-1])
    files = [b.decode("utf-8", "replace") for b in fields.get(1, [])]
    functions = [b.decode("utf-8", "replace") for b in fields.get(2, [])]
    locations = []
    for raw in fields.get(3, []):
        loc = _message(raw)
        file = _lookup(files, _int(loc, 1))
        function = _lookup(functions, _int(loc, 2))
        locations.append(f"{file}:{_int(loc, 3)} {function}".rstrip())
    parents: dict = {}
    own: dict = {}
    for frame_id, raw in enumerate(fields.get(4, []), 1):
        frame = _message(raw)
        own[frame_id] = _lookup(locations, _int(frame, 1))
        parents[frame_id] = _int(frame, 2)
    stacks: dict = {}
    for frame_id in own:  # parents come first in the index, so one pass suffices
        parent = parents[frame_id]
        prefix = stacks.get(parent, ()) if 0 < parent < frame_id else ()
        stacks[frame_id] = prefix + (own[frame_id],)
    return stacks


def _lookup(items: list, one_based: int) -> str:
    return items[one_based - 1] if 0 < one_based <= len(items) else "?"


def _text(fields: dict, number: int) -> str:
    values = fields.get(number)
    return values[-1].decode("utf-8", "replace") if values else ""


def _int(fields: dict, number: int) -> int:
    values = fields.get(number)
    return values[-1] if values and isinstance(values[-1], int) else 0


def _fields(data: bytes, number: int) -> list:
    return [v for v in _message(data).get(number, []) if isinstance(v, bytes)]


def _message(data: bytes) -> dict:
    """Field number → values (varints as int, length-delimited as bytes)."""
    out: dict = {}
    pos, end = 0, len(data)
    try:
        while pos < end:
            tag, pos = _varint(data, pos)
            wire = tag & 7
            if wire == 0:
                value, pos = _varint(data, pos)
            elif wire == 2:
                length, pos = _varint(data, pos)
                value, pos = data[pos : pos + length], pos + length
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
                continue
            else:
                break  # groups or garbage: keep what was read so far
            out.setdefault(tag >> 3, []).append(value)
    except IndexError:
        pass
    return out
