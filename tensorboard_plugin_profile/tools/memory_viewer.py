"""memory_viewer: one compiled program's memory, from its HLO buffer assignment.

``module_name`` (``<module>(<program id>)`` as ``/module_list`` names it, or a bare
module name) picks the program; ``memory_space`` (default 0) the memory colour.
The answer is upstream's ``PreprocessResult`` proto-JSON (heap over program order,
peak, buffers at the peak, buffer blocks). ``view=tables`` returns the buffers at
the peak as a DataTable instead, for CSV export through ``/data_csv``.

Usage::

    result = convert(hosts, {"module_name": "jit_step(8)"})
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.hlo import buffers, modules
from ..common.params import int_param
from . import ToolAnswer
from .datatable import Column, data_table

_PEAK_COLUMNS = (
    Column("rank", "Rank", "number"),
    Column("instruction_name", "HLO op", "string"),
    Column("size_mib", "Size (MiB)", "number"),
    Column("unpadded_mib", "Unpadded size (MiB)", "number"),
    Column("padding_mib", "Padding (MiB)", "number"),
    Column("shape", "Shape", "string"),
    Column("category", "Allocation type", "string"),
    Column("op_code", "Op code", "string"),
    Column("tf_op_name", "Framework op name", "string"),
    Column("source", "Source", "string"),
)


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> ToolAnswer:
    proto = modules.find_module(hosts, params.get("module_name"))
    result = buffers.preprocess(proto, int_param(params, "memory_space", 0))
    if params.get("view") == "tables":
        return [peak_buffers_table(result)]
    return result


def peak_buffers_table(result: Mapping) -> dict:
    """The buffers alive at the peak, largest first."""
    rows = []
    for rank, obj in enumerate(result.get("maxHeapBySize", []), 1):
        size = obj.get("logicalBufferSizeMib", 0.0)
        unpadded = obj.get("unpaddedShapeMib", 0.0)
        source = obj.get("sourceInfo", {})
        where = f"{source['fileName']}:{source.get('lineNumber', 0)}" if source else ""
        rows.append(
            [
                rank,
                obj.get("instructionName", obj.get("label", "")),
                size,
                unpadded,
                max(size - unpadded, 0.0) if unpadded else 0.0,
                obj.get("shapeString", ""),
                obj.get("groupName", ""),
                obj.get("opCode", ""),
                obj.get("tfOpName", ""),
                where,
            ]
        )
    return data_table(_PEAK_COLUMNS, rows)
