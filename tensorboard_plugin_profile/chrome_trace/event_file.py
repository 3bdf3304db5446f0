"""The variables of a TensorFlow graph, from the run's ``events.out.tfevents.*`` file.

A ``tf.train.ProfilerHook`` run writes its timelines beside the summary writer's
event file, and that file holds the graph (``Event.graph_def``) and, from a
``MonitoredTrainingSession``, the meta graph with the ``trainable_variables``
collection. We read it with our own reader of the TFRecord framing (no TensorFlow
import) and TensorBoard's protos (a dependency), and keep one row per variable:

    name, scope, shape, dtype, elements, bytes, kind

``kind`` is ``trainable`` (in the meta graph's trainable collection), ``optimizer
slot`` (named ``<trainable variable>/<slot>``, as Adam's ``conv1/w/Adam``), ``other``
(``global_step``, ``beta1_power``), or ``variable`` for all of them when the file has
no meta graph to tell.

TFRecord framing: ``uint64 length, uint32 masked crc32c(length), data, uint32
masked crc32c(data)``. We check the length's checksum (a torn or foreign file stops
the read with a clear message) but not the data's: a wrong graph fails to parse.

Usage::

    with open(path, "rb") as f:
        facts = graph_facts(f)   # {"graph_variables": ..., "graph_op_costs": ...}, or None
"""

from __future__ import annotations

import struct
from typing import IO, Iterator, Optional

import pandas as pd

from ..common.errors import CorruptProfile
from .graph_costs import node_costs

EVENT_FILE_PREFIX = "events.out.tfevents."
# A graph sits in the first records; a long run's summaries after it are not read.
MAX_SCANNED_BYTES = 256 << 20
VARIABLE_OPS = frozenset({"VariableV2", "Variable", "VarHandleOp"})
COLUMNS = ("name", "scope", "shape", "dtype", "elements", "bytes", "kind")
_HEADER = struct.Struct("<QI")


def _crc32c_table() -> list:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def masked_crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(f: IO[bytes], max_bytes: int = MAX_SCANNED_BYTES) -> Iterator[bytes]:
    """The records of a TFRecord file, up to ``max_bytes`` read."""
    read = 0
    while read < max_bytes:
        header = f.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return  # the end (a torn last record is what a live writer leaves)
        length, length_crc = _HEADER.unpack(header)
        if masked_crc32c(header[:8]) != length_crc:
            raise CorruptProfile(
                "The event file is not a TFRecord file, or is damaged (a record length "
                "fails its checksum): the model view cannot read its graph."
            )
        if read + _HEADER.size + length + 4 > max_bytes:
            return
        data = f.read(length)
        f.read(4)
        if len(data) < length:
            return
        read += _HEADER.size + length + 4
        yield data


def graph_facts(f: IO[bytes], max_bytes: int = MAX_SCANNED_BYTES) -> Optional[dict]:
    """``{"graph_variables": one row per variable, "graph_op_costs": FLOPs and bytes per
    node (graph_costs.py; empty without a traced step)}``; None when the file holds no graph."""
    from google.protobuf.message import DecodeError
    from tensorboard.compat.proto import config_pb2, event_pb2, graph_pb2, meta_graph_pb2

    graph, trainable, run_metadata = None, None, None
    try:
        for data in records(f, max_bytes):
            event = event_pb2.Event.FromString(data)
            what = event.WhichOneof("what")
            if what == "graph_def":
                graph = graph_pb2.GraphDef.FromString(event.graph_def)
            elif what == "meta_graph_def":
                meta = meta_graph_pb2.MetaGraphDef.FromString(event.meta_graph_def)
                trainable = _trainable_names(meta)
                if graph is None and meta.HasField("graph_def"):
                    graph = meta.graph_def
            elif what == "tagged_run_metadata" and run_metadata is None:
                tagged = event.tagged_run_metadata.run_metadata
                run_metadata = config_pb2.RunMetadata.FromString(tagged)
            if graph is not None and trainable is not None and run_metadata is not None:
                break
    except DecodeError:
        raise CorruptProfile(
            "The event file holds a record that is not a TensorFlow event: the model view "
            "cannot read its graph."
        ) from None
    if graph is None:
        return None
    costs = (
        node_costs(graph, run_metadata)
        if run_metadata is not None
        else pd.DataFrame(columns=["name", "flops", "bytes"])
    )
    return {"graph_variables": _variables(graph, trainable), "graph_op_costs": costs}


def _trainable_names(meta) -> Optional[set]:
    from tensorboard.compat.proto import variable_pb2

    collection = meta.collection_def.get("trainable_variables")
    if collection is None:
        return None
    names = set()
    for data in collection.bytes_list.value:
        name = variable_pb2.VariableDef.FromString(data).variable_name
        names.add(name.split(":", 1)[0])
    return names


def _variables(graph, trainable: Optional[set]) -> pd.DataFrame:
    """One row per variable node (a graph has thousands of nodes at most)."""
    from tensorboard.compat.proto import types_pb2

    names = trainable if trainable is not None else set()
    out = []
    for node in graph.node:
        if node.op not in VARIABLE_OPS:
            continue
        dims = [int(d.size) for d in node.attr["shape"].shape.dim]
        elements = 1
        for size in dims:
            elements *= max(size, 0)
        dtype = int(node.attr["dtype"].type)
        known = dtype in types_pb2.DataType.values()
        dtype_name = types_pb2.DataType.Name(dtype).removeprefix("DT_").lower() if known else ""
        out.append(
            {
                "name": node.name,
                "scope": node.name.rsplit("/", 1)[0] if "/" in node.name else "",
                "shape": "x".join(str(d) for d in dims) if dims else "scalar",
                "dtype": dtype_name,
                "elements": elements,
                "bytes": elements * _DTYPE_BYTES.get(dtype_name, 0),
                "kind": _kind(node.name, trainable, names),
            }
        )
    return pd.DataFrame(out, columns=list(COLUMNS))


def _kind(name: str, trainable: Optional[set], names: set) -> str:
    if trainable is None:
        return "variable"
    if name in names:
        return "trainable"
    if any(name.startswith(t + "/") for t in names):
        return "optimizer slot"
    return "other"


_DTYPE_BYTES = {
    "float": 4, "double": 8, "int32": 4, "uint8": 1, "int16": 2, "int8": 1, "int64": 8,
    "bool": 1, "bfloat16": 2, "uint16": 2, "half": 2, "uint32": 4, "uint64": 8,
    "complex64": 8, "complex128": 16,
}  # fmt: skip
