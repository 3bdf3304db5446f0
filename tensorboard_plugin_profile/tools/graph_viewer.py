"""graph_viewer: one program's HLO, as text or as the graph around an op.

Parameters: ``module_name`` (required, as ``/module_list`` names it) and ``type``:

- ``short_txt`` (default): the module's HLO text as upstream prints it;
- ``long_txt``: the same with operand shapes, metadata and control dependencies;
- ``graph``: JSON of the ops within ``graph_width`` (default 3) steps of
  ``node_name`` — operands and users, fusions with their fused computation;
- ``ops``: JSON list of the module's ops (name, opcode, computation), for search, and
  ``start``: the op to open on (the op with the most self time, else the entry root).

Upstream's Graphviz renderings (``format=html``/``dot``) are not produced: the page
draws the graph itself (see docs/differences.md).

Usage::

    text = convert(hosts, {"module_name": "jit_step(8)", "type": "short_txt"})
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.hlo import graph, modules, op_events, printer
from ..common.errors import InvalidArgument
from ..common.params import int_param
from . import ToolAnswer, ToolOutput

MAX_DEPTH = 10
TYPES = ("short_txt", "long_txt", "graph", "ops")


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> ToolAnswer:
    proto, holder = modules.module_and_host(hosts, params.get("module_name"))
    kind = params.get("type") or "short_txt"
    if kind in ("short_txt", "long_txt"):
        text = printer.module_text(proto.hlo_module, long=kind == "long_txt").encode()
        return ToolOutput(content_type="text/plain; charset=utf-8", chunks=lambda: [text])
    index = printer.ModuleIndex(proto.hlo_module)
    if kind == "ops":
        program = int(proto.hlo_module.id)
        table = op_events.hlo_op_table([holder])  # the host the page's answer is read from
        timed = table[table["program_id"] == program] if len(table) else table
        start = graph.start_op(index, timed)
        return {"module": proto.hlo_module.name, "ops": graph.op_list(index), "start": start}
    if kind == "graph":
        node = params.get("node_name")
        if not node:
            raise InvalidArgument("type=graph needs 'node_name': the op to draw the graph around.")
        depth = int_param(params, "graph_width", 3)
        if not 0 <= depth <= MAX_DEPTH:
            raise InvalidArgument(f"'graph_width' must be between 0 and {MAX_DEPTH}.")
        return graph.neighbourhood(index, node, depth)
    raise InvalidArgument(f"Unknown graph_viewer type {kind!r}; use one of {', '.join(TYPES)}.")
