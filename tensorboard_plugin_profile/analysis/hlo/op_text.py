"""The opcode-specific parts of an HLO instruction's text (``dimensions={1}``, ...).

Usage::

    attributes_text(index, instruction, long=False)   # ", dimensions={1}, to_apply=add"
    literal_text(instruction.literal)                  # "0", "-inf", "{1, 2, 3}", "{...}"
"""

from __future__ import annotations

import math
import struct
from typing import Any

from ...protobuf import hlo_pb2
from . import shapes

MAX_PRINTED_ELEMENTS = 10  # larger constants print as {...} in short text
_DIMENSIONS_OPS = frozenset(
    {"broadcast", "transpose", "concatenate", "reduce", "reverse", "sort", "map"}
)
_CALLS = {"fusion": "calls", "while": None, "conditional": None, "call": "to_apply"}


def _ints(values: Any) -> str:
    return "{" + ",".join(str(int(v)) for v in values) + "}"


def attributes_text(index: Any, instruction: Any, long: bool = False) -> str:
    parts = _specific(instruction)
    parts += _called(index, instruction)
    if long and instruction.control_predecessor_ids:  # short text leaves them out
        names = ", ".join(index.name(i) for i in instruction.control_predecessor_ids)
        parts.append(f"control-predecessors={{{names}}}")
    if instruction.frontend_attributes.map:
        parts.append(
            "frontend_attributes=" + frontend_attributes_text(instruction.frontend_attributes)
        )
    if long:
        parts += _metadata(instruction.metadata)
    if instruction.backend_config:
        parts.append("backend_config=" + instruction.backend_config.decode("utf-8", "replace"))
    return "".join(", " + p for p in parts)


def frontend_attributes_text(attributes: Any) -> str:
    """``{key=value,...}``; values are quoted unless they are braced already."""
    pairs = []
    for key, value in sorted(attributes.map.items()):
        braced = value.startswith("{") and value.endswith("}")
        pairs.append(f"{key}={value}" if braced else f'{key}="{value}"')
    return "{" + ",".join(pairs) + "}"


def _specific(inst: Any) -> list:
    op = inst.opcode
    parts: list = []
    if op in _DIMENSIONS_OPS:
        parts.append("dimensions=" + _ints(inst.dimensions))
    if inst.HasField("window") and inst.window.dimensions:
        parts.append("window={" + window_text(inst.window) + "}")
    if op == "convolution":
        parts += _convolution(inst)
    if op == "slice":
        parts.append("slice={" + ", ".join(_slice(s) for s in inst.slice_dimensions) + "}")
    if op == "get-tuple-element":
        parts.append(f"index={inst.tuple_index}")
    if op == "compare":
        parts.append(f"direction={inst.comparison_direction}")
    if op == "fusion":
        parts.append(f"kind={inst.fusion_kind}")
    if op == "iota":
        parts.append(f"iota_dimension={inst.dimensions[0] if inst.dimensions else 0}")
    if op == "dot":
        parts += _dot(inst.dot_dimension_numbers)
    if op in ("dynamic-slice",):
        parts.append("dynamic_slice_sizes=" + _ints(inst.dynamic_slice_sizes))
    if op == "pad":
        parts.append("padding=" + _padding(inst.padding_config))
    if op == "scatter":
        parts += _scatter(inst)
    if op == "gather":
        parts += _gather(inst)
    if op == "custom-call":
        parts.append(f'custom_call_target="{inst.custom_call_target}"')
    if op == "sort" and inst.is_stable:
        parts.append("is_stable=true")
    return parts


def _called(index: Any, inst: Any) -> list:
    ids = list(inst.called_computation_ids)
    if not ids:
        return []
    names = [index.computation_name(i) for i in ids]
    if inst.opcode == "while" and len(names) == 2:
        return [f"condition={names[1]}", f"body={names[0]}"]  # stored body first
    if inst.opcode == "conditional":
        return ["branch_computations={" + ", ".join(names) + "}"]
    key = "calls" if inst.opcode in ("fusion", "async-start", "custom-call") else "to_apply"
    if len(names) == 1:
        return [f"{key}={names[0]}"]
    return [f"{key}={{{', '.join(names)}}}"]


def window_text(window: Any) -> str:
    dims = list(window.dimensions)
    parts = ["size=" + "x".join(str(d.size) for d in dims)]
    if any(d.stride != 1 for d in dims):
        parts.append("stride=" + "x".join(str(d.stride) for d in dims))
    if any(d.padding_low or d.padding_high for d in dims):
        parts.append("pad=" + "x".join(f"{d.padding_low}_{d.padding_high}" for d in dims))
    if any(d.base_dilation not in (0, 1) for d in dims):
        parts.append("lhs_dilate=" + "x".join(str(d.base_dilation) for d in dims))
    if any(d.window_dilation not in (0, 1) for d in dims):
        parts.append("rhs_dilate=" + "x".join(str(d.window_dilation) for d in dims))
    if any(d.window_reversal for d in dims):
        parts.append("rhs_reversal=" + "x".join(str(int(d.window_reversal)) for d in dims))
    return " ".join(parts)


def _labels(rank: int, first: tuple, spatial: Any) -> str:
    labels = ["?"] * rank
    for position, letter in first:
        if 0 <= position < rank:
            labels[position] = letter
    for i, position in enumerate(spatial):
        if 0 <= position < rank:
            labels[position] = str(i)
    return "".join(labels)


def _convolution(inst: Any) -> list:
    d = inst.convolution_dimension_numbers
    rank = len(d.input_spatial_dimensions) + 2
    lhs = _labels(
        rank,
        ((d.input_batch_dimension, "b"), (d.input_feature_dimension, "f")),
        d.input_spatial_dimensions,
    )
    rhs = _labels(
        rank,
        ((d.kernel_input_feature_dimension, "i"), (d.kernel_output_feature_dimension, "o")),
        d.kernel_spatial_dimensions,
    )
    out = _labels(
        rank,
        ((d.output_batch_dimension, "b"), (d.output_feature_dimension, "f")),
        d.output_spatial_dimensions,
    )
    parts = [f"dim_labels={lhs}_{rhs}->{out}"]
    if inst.feature_group_count > 1:
        parts.append(f"feature_group_count={inst.feature_group_count}")
    if inst.batch_group_count > 1:
        parts.append(f"batch_group_count={inst.batch_group_count}")
    return parts


def _slice(s: Any) -> str:
    return f"[{s.start}:{s.limit}]" if s.stride == 1 else f"[{s.start}:{s.limit}:{s.stride}]"


def _padding(config: Any) -> str:
    out = []
    for d in config.dimensions:
        text = f"{d.edge_padding_low}_{d.edge_padding_high}"
        out.append(text + (f"_{d.interior_padding}" if d.interior_padding else ""))
    return "x".join(out)


def _dot(d: Any) -> list:
    parts = []
    for name, values in (
        ("lhs_batch_dims", d.lhs_batch_dimensions),
        ("lhs_contracting_dims", d.lhs_contracting_dimensions),
        ("rhs_batch_dims", d.rhs_batch_dimensions),
        ("rhs_contracting_dims", d.rhs_contracting_dimensions),
    ):
        if values:
            parts.append(f"{name}={_ints(values)}")
    return parts


def _scatter(inst: Any) -> list:
    d = inst.scatter_dimension_numbers
    parts = [
        "update_window_dims=" + _ints(d.update_window_dims),
        "inserted_window_dims=" + _ints(d.inserted_window_dims),
        "scatter_dims_to_operand_dims=" + _ints(d.scatter_dims_to_operand_dims),
    ]
    if d.input_batching_dims:
        parts.append("input_batching_dims=" + _ints(d.input_batching_dims))
        parts.append("scatter_indices_batching_dims=" + _ints(d.scatter_indices_batching_dims))
    parts.append(f"index_vector_dim={d.index_vector_dim}")
    return parts + _sorted_unique(inst)


def _gather(inst: Any) -> list:
    d = inst.gather_dimension_numbers
    parts = [
        "offset_dims=" + _ints(d.offset_dims),
        "collapsed_slice_dims=" + _ints(d.collapsed_slice_dims),
        "start_index_map=" + _ints(d.start_index_map),
    ]
    if d.operand_batching_dims:
        parts.append("operand_batching_dims=" + _ints(d.operand_batching_dims))
        parts.append("start_indices_batching_dims=" + _ints(d.start_indices_batching_dims))
    parts.append(f"index_vector_dim={d.index_vector_dim}")
    parts.append("slice_sizes=" + _ints(inst.gather_slice_sizes))
    return parts + _sorted_unique(inst)


def _sorted_unique(inst: Any) -> list:
    parts = []
    if inst.indices_are_sorted:
        parts.append("indices_are_sorted=true")
    if inst.unique_indices:
        parts.append("unique_indices=true")
    return parts


def _metadata(metadata: Any) -> list:
    fields = []
    if metadata.op_type:
        fields.append(f'op_type="{metadata.op_type}"')
    if metadata.op_name:
        fields.append(f'op_name="{metadata.op_name}"')
    if metadata.source_file:
        fields.append(f'source_file="{metadata.source_file}"')
    if metadata.source_line:
        fields.append(f"source_line={metadata.source_line}")
    return ["metadata={" + " ".join(fields) + "}"] if fields else []


def literal_text(literal: Any) -> str:
    shape = literal.shape
    if shapes.is_tuple(shape):
        return "(" + ", ".join(literal_text(t) for t in literal.tuple_literals) + ")"
    values = _values(literal)
    if not shape.dimensions:
        return values[0] if values else "0"
    if len(values) > MAX_PRINTED_ELEMENTS:
        return "{...}"
    return _nested(values, list(shape.dimensions))


def _nested(values: list, dims: list) -> str:
    if len(dims) <= 1:
        return "{" + ", ".join(values) + "}"
    step = len(values) // dims[0] if dims[0] else 0
    inner = [_nested(values[i * step : (i + 1) * step], dims[1:]) for i in range(dims[0])]
    return "{ " + ", ".join(inner) + " }"


def _float(x: float, digits: int, single: bool = True) -> str:
    """XLA's round-trip text: the short form (``digits`` - 3) when it reads back exactly."""
    if math.isnan(x):
        return "nan" if math.copysign(1.0, x) > 0 else "-nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    short = f"{x:.{digits - 3}g}"
    back = float(short)
    if single:
        back = struct.unpack("<f", struct.pack("<f", back))[0]
    return short if back == x else f"{x:.{digits}g}"


def _values(literal: Any) -> list:
    t = literal.shape.element_type
    if t == hlo_pb2.PRED:
        return ["true" if v else "false" for v in literal.preds]
    if t == hlo_pb2.F32:
        return [_float(v, 9) for v in literal.f32s]
    if t == hlo_pb2.F64:
        return [_float(v, 18, single=False) for v in literal.f64s]
    if t in (hlo_pb2.F16, hlo_pb2.BF16):
        raw = literal.f16s if t == hlo_pb2.F16 else literal.bf16s
        return [_float(v, 9) for v in _halves(raw, t == hlo_pb2.BF16)]
    for kind, field in (
        (hlo_pb2.S32, "s32s"),
        (hlo_pb2.S64, "s64s"),
        (hlo_pb2.U32, "u32s"),
        (hlo_pb2.U64, "u64s"),
    ):
        if t == kind:
            return [str(int(v)) for v in getattr(literal, field)]
    for kind, field, fmt in (
        (hlo_pb2.S8, "s8s", "b"),
        (hlo_pb2.U8, "u8s", "B"),
        (hlo_pb2.S16, "s16s", "h"),
        (hlo_pb2.U16, "u16s", "H"),
    ):
        if t == kind:
            raw = getattr(literal, field)
            size = struct.calcsize(fmt)
            return [str(v) for v in struct.unpack(f"<{len(raw) // size}{fmt}", raw)]
    return []


def _halves(raw: bytes, brain: bool) -> list:
    count = len(raw) // 2
    if brain:
        ints = struct.unpack(f"<{count}H", raw)
        return [struct.unpack("<f", struct.pack("<I", v << 16))[0] for v in ints]
    return list(struct.unpack(f"<{count}e", raw))
