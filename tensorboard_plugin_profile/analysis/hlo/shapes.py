"""Shape text and sizes as XLA prints and counts them (``f32[64,10]{1,0}``).

Usage::

    shape_text(proto.shape)            # "f32[64,10]{1,0}"
    shape_text(proto.shape, layout=False)   # "f32[64,10]"
    unpadded_bytes(proto.shape)        # 2560
"""

from __future__ import annotations

from typing import Any

from ...protobuf import hlo_pb2

_TYPE_NAMES = {
    value.number: value.name.lower() for value in hlo_pb2.PrimitiveType.DESCRIPTOR.values
}
_TYPE_NAMES[hlo_pb2.OPAQUE_TYPE] = "opaque"
_BYTES = {
    hlo_pb2.PRED: 1,
    hlo_pb2.S8: 1,
    hlo_pb2.U8: 1,
    hlo_pb2.S16: 2,
    hlo_pb2.U16: 2,
    hlo_pb2.F16: 2,
    hlo_pb2.BF16: 2,
    hlo_pb2.S32: 4,
    hlo_pb2.U32: 4,
    hlo_pb2.F32: 4,
    hlo_pb2.S64: 8,
    hlo_pb2.U64: 8,
    hlo_pb2.F64: 8,
    hlo_pb2.C64: 8,
    hlo_pb2.C128: 16,
    hlo_pb2.TOKEN: 0,
}
POINTER_BYTES = 8  # a tuple holds one pointer per element
# XLA numbers tuple elements in printed shapes every this many elements.
TUPLE_INDEX_EVERY = 5


def type_name(element_type: int) -> str:
    return _TYPE_NAMES.get(element_type, f"type{element_type}")


def is_tuple(shape: Any) -> bool:
    return shape.element_type == hlo_pb2.TUPLE


def shape_text(shape: Any, layout: bool = True) -> str:
    if is_tuple(shape):
        parts = []
        for i, sub in enumerate(shape.tuple_shapes):
            prefix = f"/*index={i}*/" if i and i % TUPLE_INDEX_EVERY == 0 else ""
            parts.append(prefix + shape_text(sub, layout))
        return "(" + ", ".join(parts) + ")"
    name = type_name(shape.element_type)
    if shape.element_type in (hlo_pb2.TOKEN, hlo_pb2.OPAQUE_TYPE):
        return name
    dims = []
    for i, size in enumerate(shape.dimensions):
        dynamic = i < len(shape.is_dynamic_dimension) and shape.is_dynamic_dimension[i]
        dims.append(f"<={size}" if dynamic else str(size))
    text = f"{name}[{','.join(dims)}]"
    if layout and shape.dimensions and shape.HasField("layout"):
        text += layout_text(shape.layout)
    return text


def layout_text(layout: Any) -> str:
    text = "{" + ",".join(str(d) for d in layout.minor_to_major)
    extras = ""
    if layout.tiles:
        extras += "T" + "".join(
            "(" + ",".join(str(d) for d in tile.dimensions) + ")" for tile in layout.tiles
        )
    if layout.element_size_in_bits:
        extras += f"E({layout.element_size_in_bits})"
    if layout.memory_space:
        extras += f"S({layout.memory_space})"
    if extras:
        text += ":" + extras
    return text + "}"


def element_bytes(element_type: int) -> int:
    return _BYTES.get(element_type, 1)


def num_elements(shape: Any) -> int:
    count = 1
    for size in shape.dimensions:
        count *= int(size)
    return count


def unpadded_bytes(shape: Any) -> int:
    """Bytes of the shape in its default (unpadded) layout; tuples count pointers."""
    if is_tuple(shape):
        return POINTER_BYTES * len(shape.tuple_shapes)
    if shape.element_type == hlo_pb2.OPAQUE_TYPE:
        return POINTER_BYTES
    return num_elements(shape) * element_bytes(shape.element_type)


def subshape(shape: Any, index: Any) -> Any:
    """The element ``index`` designates, as upstream resolves it: by its last entry only."""
    if len(index) and is_tuple(shape) and int(index[-1]) < len(shape.tuple_shapes):
        return shape.tuple_shapes[int(index[-1])]
    return shape
