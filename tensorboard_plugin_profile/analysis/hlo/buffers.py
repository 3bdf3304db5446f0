"""The memory viewer: replays a module's buffer assignment as upstream does.

XLA's buffer assignment (in the ``HloProto``) lists the logical buffers, the
allocations they are packed into and the heap simulator's trace of ALLOC / FREE /
SHARE_WITH events in program order. Replaying that trace gives the heap size after
every step, the peak and the buffers alive at the peak; allocations with an
indefinite lifetime (parameters, outputs, constants, thread-local) are added on
top. The result is upstream's ``PreprocessResult`` as proto-JSON (lowerCamelCase,
int64 as strings, default values left out).

Usage::

    result = preprocess(hlo_proto, memory_color=0)   # dict, json.dumps-able
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from ...common.errors import CorruptProfile
from ...protobuf import hlo_pb2
from . import colors, shapes
from .attribution import source_info
from .cxx_sort import introsort_order

MIB = float(1 << 20)
SMALL_BUFFER_BYTES = 16 * 1024  # peak buffers below this are summed into one "small" entry
_ALLOC, _FREE, _SHARE = (
    hlo_pb2.HeapSimulatorTrace.Event.ALLOC,
    hlo_pb2.HeapSimulatorTrace.Event.FREE,
    hlo_pb2.HeapSimulatorTrace.Event.SHARE_WITH,
)


def _mib(n: int) -> float:
    return n / MIB


def is_indefinite(alloc: Any) -> bool:
    # Upstream 2.24 no longer counts thread-local allocations as indefinite.
    return bool(alloc.is_entry_computation_parameter or alloc.is_constant or alloc.maybe_live_out)


def category(alloc: Any) -> str:
    if alloc.is_entry_computation_parameter:
        return "Parameter"
    if alloc.maybe_live_out:
        return "Output"
    if alloc.is_thread_local:
        return "Thread-local"
    if alloc.is_constant:
        return "Constant"
    return "Temporary"


def is_reusable(alloc: Any) -> bool:
    return not alloc.is_thread_local and not alloc.is_tuple


@dataclasses.dataclass(eq=False)
class Buffer:
    """One logical buffer with its allocation, instruction and replay state."""

    proto: Any
    alloc: Any
    instruction: Any
    offset: int
    shape: Any
    span: Optional[list] = None
    refs: int = 0
    canonical: Optional[Buffer] = None
    closed: bool = False

    @property
    def id(self) -> int:
        return int(self.proto.id)

    @property
    def size(self) -> int:
        return int(self.proto.size)

    @property
    def unpadded(self) -> int:
        return shapes.unpadded_bytes(self.shape)

    def root(self) -> Buffer:
        return self.canonical.root() if self.canonical else self

    def inc(self) -> int:
        if self.canonical:
            return self.canonical.inc()
        self.refs += 1
        return self.refs

    def dec(self) -> int:
        if self.canonical:
            return self.canonical.dec()
        self.refs -= 1
        return self.refs

    def name_with_index(self) -> str:
        index = list(self.proto.defined_at.shape_index)
        name = self.instruction.name
        return f"{name}{{{','.join(str(i) for i in index)}}}" if index else name


class Assignment:
    """Lookup tables over one HloProto's buffer assignment."""

    def __init__(self, proto: Any):
        self.proto = proto
        assignment = proto.buffer_assignment
        instructions = {int(i.id): i for c in proto.hlo_module.computations for i in c.instructions}
        logical = {int(b.id): b for b in assignment.logical_buffers}
        self.allocations = sorted(assignment.buffer_allocations, key=lambda a: a.index)
        self.buffers: dict = {}
        for alloc in self.allocations:
            for assigned in alloc.assigned:
                lb = logical.get(int(assigned.logical_buffer_id))
                inst = instructions.get(int(lb.defined_at.instruction_id)) if lb else None
                if lb is None or inst is None:
                    continue
                shape = shapes.subshape(inst.shape, lb.defined_at.shape_index)
                self.buffers[int(lb.id)] = Buffer(lb, alloc, inst, int(assigned.offset), shape)
        # The trace's own allocation index is unreliable: use its first buffer's.
        self.trace_of_alloc: dict = {}
        for i, trace in enumerate(assignment.heap_simulator_traces):
            if trace.events and int(trace.events[0].buffer_id) in self.buffers:
                alloc = self.buffers[int(trace.events[0].buffer_id)].alloc
                self.trace_of_alloc[int(alloc.index)] = i

    def allocations_of(self, color: int) -> list:
        return [a for a in self.allocations if int(a.color) == color]

    def trace_index(self, color: int) -> int:
        for alloc in self.allocations_of(color):
            if not is_indefinite(alloc) and int(alloc.index) in self.trace_of_alloc:
                return self.trace_of_alloc[int(alloc.index)]
        best, best_count = -1, 0
        for i, trace in enumerate(self.proto.buffer_assignment.heap_simulator_traces):
            count = sum(
                1
                for e in trace.events
                if int(e.buffer_id) in self.buffers
                and int(self.buffers[int(e.buffer_id)].proto.color) == color
            )
            if count > best_count:
                best, best_count = i, count
        return best

    def indefinite_buffers(self, color: int) -> list:
        """Per indefinite allocation, its largest logical buffer."""
        out = []
        for alloc in self.allocations_of(color):
            if not is_indefinite(alloc):
                continue
            best, best_size = None, 0
            for assigned in alloc.assigned:
                buffer = self.buffers.get(int(assigned.logical_buffer_id))
                if buffer is not None and buffer.size > best_size:
                    best, best_size = buffer, buffer.size
            if best is not None:
                out.append(best)
        return out


@dataclasses.dataclass
class Replay:
    """The heap over program order, from one heap-simulator trace."""

    heap: list = dataclasses.field(default_factory=list)
    unpadded: list = dataclasses.field(default_factory=list)
    names: list = dataclasses.field(default_factory=list)
    peak: int = 0
    peak_unpadded: int = 0
    peak_position: int = 0
    peak_buffers: list = dataclasses.field(default_factory=list)
    peak_display: dict = dataclasses.field(default_factory=dict)
    seen: dict = dataclasses.field(default_factory=dict)


def replay(assignment: Assignment, color: int) -> Replay:
    out = Replay()
    index = assignment.trace_index(color)
    traces = assignment.proto.buffer_assignment.heap_simulator_traces
    if not 0 <= index < len(traces):
        return out
    events = traces[index].events
    live: list = []  # canonical buffer ids in allocation order
    display: dict = {}
    heap = unpadded = 0
    seen_allocs = set()

    def grow(buffer: Buffer, init_span: bool) -> None:
        nonlocal heap, unpadded
        live.append(buffer.id)
        heap += buffer.size
        unpadded += buffer.unpadded
        if heap > out.peak:
            out.peak, out.peak_unpadded = heap, unpadded
            out.peak_position = len(out.heap) - 1
            out.peak_buffers, out.peak_display = list(live), dict(display)
        if init_span:
            buffer.span = [len(out.heap) - 1, len(events) - 1]

    for event in events:
        out.heap.append(heap)
        out.unpadded.append(unpadded)
        out.names.append(event.instruction_name)
        buffer = assignment.buffers.get(int(event.buffer_id))
        if buffer is None:
            continue
        out.seen[buffer.id] = buffer
        seen_allocs.add(int(buffer.alloc.index))
        if event.kind == _ALLOC:
            buffer.inc()
            grow(buffer, True)
        elif event.kind == _FREE:
            refs = buffer.dec()
            if refs < 0:
                raise CorruptProfile(f"Buffer {buffer.id} is freed more than once.")
            if refs == 0:
                root = buffer.root()
                live.remove(root.id)
                heap -= root.size
                unpadded -= root.unpadded
                if heap < 0:
                    raise CorruptProfile("The heap simulation went below zero bytes.")
                if root.span and not root.closed:  # upstream 2.24: the first free ends it
                    root.span[1] = len(out.heap) - 1
                    root.closed = True
            if buffer.span and buffer.canonical:
                buffer.span[1] = len(out.heap) - 1
        elif event.kind == _SHARE:
            canonical = assignment.buffers.get(int(event.share_with_canonical_id))
            if canonical is None:
                continue
            buffer.canonical = canonical
            if canonical.inc() == 1:
                root = canonical.root()
                display[root.id] = buffer.id
                buffer.span = [len(out.heap) - 1, len(events) - 1]
                grow(root, False)
    out.heap.append(heap)
    out.unpadded.append(unpadded)
    out.names.append("")
    if len(seen_allocs) > 1:
        raise CorruptProfile("The heap simulation spans more than one buffer allocation.")
    return out


def heap_object(proto: Any, buffer: Buffer, number: int) -> dict:
    inst = buffer.instruction
    shape = shapes.shape_text(buffer.shape)
    obj = _heap_object_common(
        f"{inst.name}: {shape} # {inst.metadata.op_name}",
        number,
        buffer.id,
        buffer.size,
        buffer.unpadded,
    )
    obj["instructionName"] = buffer.name_with_index()
    obj["shapeString"] = shape
    obj["tfOpName"] = inst.metadata.op_name
    obj["groupName"] = category(buffer.alloc)
    obj["opCode"] = inst.opcode
    source = source_info(inst, proto.hlo_module.stack_frame_index)
    if source:
        obj["sourceInfo"] = source
    return _without_defaults(obj)


def _heap_object_common(label: str, number: int, buffer_id: int, size: int, unpadded: int):
    return {
        "numbered": number,
        "label": label,
        "logicalBufferId": buffer_id,
        "logicalBufferSizeMib": _mib(size),
        "unpaddedShapeMib": _mib(unpadded),
    }


def _without_defaults(obj: dict, keep: tuple = ("numbered",)) -> dict:
    """Proto-JSON leaves out fields at their default value."""
    return {k: v for k, v in obj.items() if k in keep or v not in (0, 0.0, "", [], {}, None)}


def preprocess(proto: Any, memory_color: int = 0) -> dict:
    """Upstream's memory-viewer ``PreprocessResult`` for one module, as proto-JSON."""
    assignment = Assignment(proto)
    run = replay(assignment, memory_color)
    objects, number_of = _peak_objects(proto, assignment, run, memory_color)
    indefinite_bytes = sum(int(b.alloc.size) for b in assignment.indefinite_buffers(memory_color))
    add = _mib(indefinite_bytes)
    sizes = [o["logicalBufferSizeMib"] for o in objects]
    by_size = introsort_order(sizes, less=lambda a, b: a > b)
    result: dict = {
        "heapSizes": [_mib(h) + add for h in run.heap],
        "unpaddedHeapSizes": [_mib(h) + add for h in run.unpadded],
        "maxHeap": objects,
        "maxHeapBySize": [objects[i] for i in by_size],
        "logicalBufferSpans": {
            str(b.id): _without_defaults({"start": b.span[0], "limit": b.span[1]}, keep=())
            for b in run.seen.values()
            if b.span
        },
        "maxHeapToBySize": [by_size.index(i) for i in range(len(objects))],
        "bySizeToMaxHeap": by_size,
        "moduleName": proto.hlo_module.name,
        "entryComputationName": proto.hlo_module.entry_computation_name,
        "peakHeapMib": _mib(run.peak) + add,
        "peakUnpaddedHeapMib": _mib(run.peak_unpadded) + add,
        "peakHeapSizePosition": run.peak_position,
    }
    result.update(_special_allocations(assignment, memory_color))
    result["hloInstructionNames"] = run.names
    result["bufferBlocks"] = colors.buffer_blocks(proto, assignment, run, number_of, memory_color)
    return _without_defaults(result, keep=("maxHeap", "maxHeapBySize"))


def _peak_objects(proto: Any, assignment: Assignment, run: Replay, color: int) -> tuple:
    objects: list = []
    number_of: dict = {}
    small = 0
    peak = [assignment.buffers.get(run.peak_display.get(i, i)) for i in run.peak_buffers]
    indefinite = assignment.indefinite_buffers(color) if color == 0 else []
    for buffer in indefinite + peak:
        if buffer is None:
            break
        if buffer.size < SMALL_BUFFER_BYTES:
            small += buffer.size
            continue
        number_of[buffer.id] = len(objects)
        objects.append(heap_object(proto, buffer, len(objects)))
    if small:
        objects.append(
            _heap_object_common(f"small (<{SMALL_BUFFER_BYTES} bytes)", len(objects), -1, small, 0)
        )
        objects[-1] = _without_defaults(objects[-1])
    return objects, number_of


def _special_allocations(assignment: Assignment, color: int) -> dict:
    allocs = assignment.allocations_of(color)
    indefinite = [a for a in allocs if is_indefinite(a)]
    return {
        "entryComputationParametersMib": _mib(
            sum(int(a.size) for a in allocs if a.is_entry_computation_parameter)
        ),
        "nonReusableMib": _mib(sum(int(a.size) for a in allocs if not is_reusable(a))),
        "maybeLiveOutMib": _mib(sum(int(a.size) for a in allocs if a.maybe_live_out)),
        "indefiniteLifetimes": [_allocation_json(assignment, a) for a in indefinite],
        # Thread-local allocations are not part of the program's memory (upstream 2.24).
        "totalBufferAllocationMib": _mib(sum(int(a.size) for a in allocs if not a.is_thread_local)),
        "indefiniteBufferAllocationMib": _mib(sum(int(a.size) for a in indefinite)),
    }


def _allocation_json(assignment: Assignment, alloc: Any) -> dict:
    attributes = []
    if alloc.is_entry_computation_parameter:
        attributes.append("entry computation parameter")
    if alloc.maybe_live_out:
        attributes.append("may-be live out")
    if is_reusable(alloc):
        attributes.append("reusable")
    logical = []
    for assigned in alloc.assigned:
        entry: dict = {"id": _int64(assigned.logical_buffer_id), "sizeMib": _mib(assigned.size)}
        buffer = assignment.buffers.get(int(assigned.logical_buffer_id))
        if buffer is not None:
            entry["shape"] = shapes.shape_text(buffer.shape)
            entry["hloName"] = buffer.instruction.name
            index = [str(int(i)) for i in buffer.proto.defined_at.shape_index]
            if index:
                entry["shapeIndex"] = index
        logical.append(_without_defaults(entry, keep=()))
    out = {
        "id": _int64(alloc.index),
        "sizeMib": _mib(alloc.size),
        "attributes": attributes,
        "logicalBuffers": logical,
    }
    shapes_seen = {e.get("shape", "") for e in logical}
    if logical and len(shapes_seen) == 1 and "" not in shapes_seen:
        out["commonShape"] = shapes_seen.pop()
    return _without_defaults(out, keep=())


def _int64(value: int) -> str:
    """Proto-JSON writes int64 as a string, and leaves out zero."""
    return str(int(value)) if int(value) else ""
