"""FLOPs and bytes of a TensorFlow graph's ops, from the shapes of one profiled step.

tfprof counted float operations from the graph and the tensor shapes a traced step
recorded; ProfilerHook's event file holds both: the ``GraphDef`` (each node's op and
inputs) and ``tagged_run_metadata`` (``RunMetadata.step_stats``: every executed node's
output shapes). We use the first traced step, and count per node, for one run:

- ``MatMul``/``BatchMatMul*``: 2 x output elements x the contracted size;
- ``Conv2D``/``Conv3D``/``DepthwiseConv2dNative``: 2 x output elements x filter window
  x the filter's input depth; ``Conv2DBackpropInput``: 2 x input-gradient elements x
  window x output depth; ``Conv2DBackpropFilter``: 2 x filter elements x the output
  gradient's batch and spatial size;
- elementwise ops (``Add``, ``Mul``, ``Relu``, ``ReluGrad``, ...): output elements;
- ``Sum``, ``Mean``, ``Max``, ...: input elements; ``MaxPool``/``AvgPool``: output
  elements x window; everything else: 0.

Bytes are the inputs' and outputs' sizes. A node whose shapes the step did not record
(it did not run, or a shape is unknown) counts 0. Nodes, not events: a graph has at
most thousands of nodes, and the counts join the op table by name.

Usage::

    costs = node_costs(graph_def, run_metadata)   # DataFrame: name, flops, bytes
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pandas as pd

_ELEMENTWISE = frozenset(
    """Abs Add AddV2 BiasAdd BiasAddGrad Cos Div DivNoNan Elu Equal Exp Floor FloorDiv
    Greater GreaterEqual Less LessEqual Log Log1p LogicalAnd LogicalOr Maximum Minimum Mul
    Neg NotEqual Pow RealDiv Reciprocal Relu Relu6 Relu6Grad ReluGrad Rsqrt Select SelectV2
    Selu Sigmoid SigmoidGrad Sign Sin Softplus Sqrt Square SquaredDifference Sub Tanh
    TanhGrad""".split()
)
_REDUCTIONS = frozenset({"Sum", "Mean", "Max", "Min", "Prod", "All", "Any", "ArgMax", "ArgMin"})
_POOLS = frozenset({"MaxPool", "AvgPool", "MaxPoolV2", "MaxPoolGrad", "AvgPoolGrad"})
_CONVOLUTIONS = frozenset({"Conv2D", "Conv3D", "DepthwiseConv2dNative"})
_DTYPE_BYTES = {1: 4, 2: 8, 3: 4, 4: 1, 5: 2, 6: 1, 9: 8, 10: 1, 14: 2, 19: 2}


def _product(values: Any) -> int:
    out = 1
    for v in values:
        out *= max(int(v), 0)
    return out


def recorded_outputs(run_metadata: Any) -> Dict[str, List[tuple]]:
    """Node name → [(dims, dtype)] per output slot, from the step's node stats."""
    outputs: Dict[str, List[tuple]] = {}
    for device in run_metadata.step_stats.dev_stats:
        for node in device.node_stats:
            slots = sorted(node.output, key=lambda o: o.slot)
            shapes = [
                (
                    tuple(int(d.size) for d in o.tensor_description.shape.dim),
                    int(o.tensor_description.dtype),
                )
                for o in slots
            ]
            if shapes and node.node_name not in outputs:
                outputs[node.node_name] = shapes
    return outputs


def _input_shape(name: str, outputs: Dict[str, List[tuple]]) -> Optional[tuple]:
    if name.startswith("^"):
        return None
    node, _, slot = name.partition(":")
    shapes = outputs.get(node)
    index = int(slot) if slot.isdigit() else 0
    return shapes[index] if shapes and index < len(shapes) else None


def node_costs(graph: Any, run_metadata: Any) -> pd.DataFrame:
    outputs = recorded_outputs(run_metadata)
    rows = []
    for node in graph.node:
        out = outputs.get(node.name)
        if not out:
            continue
        inputs = [_input_shape(i, outputs) for i in node.input if not i.startswith("^")]
        flops = _flops(node.op, out[0][0], [s[0] if s else None for s in inputs], node)
        nbytes = sum(_product(d) * _DTYPE_BYTES.get(t, 4) for d, t in out)
        nbytes += sum(_product(s[0]) * _DTYPE_BYTES.get(s[1], 4) for s in inputs if s)
        rows.append((node.name, flops, nbytes))
    return pd.DataFrame(rows, columns=["name", "flops", "bytes"])


def _flops(op: str, out: tuple, inputs: list, node: Any) -> int:
    elements = _product(out)
    first = inputs[0] if inputs else None
    second = inputs[1] if len(inputs) > 1 else None
    if op in ("MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3") and first:
        transposed = node.attr["transpose_a"].b or node.attr["adj_x"].b
        k = first[-2] if transposed else first[-1]
        return 2 * elements * int(k)
    if op in _CONVOLUTIONS and second:  # filter: [spatial..., in depth, out depth]
        return 2 * elements * _product(second[:-1])
    if op == "Conv2DBackpropInput" and second and len(inputs) > 2 and inputs[2]:
        return 2 * _product(inputs[2]) * _product(second[:-1])  # as the forward convolution
    if op == "Conv2DBackpropFilter" and len(inputs) > 2 and inputs[2]:
        return 2 * elements * _product(inputs[2][:-1])  # x batch and output positions
    if op in _ELEMENTWISE:
        return elements
    if op in _REDUCTIONS and first:
        return _product(first)
    if op in _POOLS:
        window = node.attr["ksize"].list.i
        return elements * _product(window) if window else elements
    return 0
