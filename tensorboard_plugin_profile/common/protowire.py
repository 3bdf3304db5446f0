"""The protobuf wire format at its top level, for the few places that skip decoding.

Two readers need only a few fields of large messages: capture slices the XSpace out
of a ``ProfileResponse`` without parsing it, and the environment analysis reads op
names out of serialized ``HloProto`` bytes without the XLA protos. Both walk fields
with ``fields``; malformed input raises ``ValueError`` and each caller decides what
that means for it.

Usage::

    for number, wire_type, value in fields(data):
        if number == 8 and wire_type == LEN:
            payload = value      # a memoryview slice of data
"""

from __future__ import annotations

from typing import Iterator, Tuple, Union

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5
_MAX_VARINT_BITS = 70

Field = Tuple[int, int, Union[int, memoryview]]


def read_varint(view: memoryview, pos: int) -> Tuple[int, int]:
    """(value, position after it); raises ``ValueError`` if truncated or too long."""
    result, shift = 0, 0
    while True:
        if pos >= len(view):
            raise ValueError("truncated varint")
        byte = view[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= _MAX_VARINT_BITS:
            raise ValueError("varint too long")


def fields(data: Union[bytes, memoryview]) -> Iterator[Field]:
    """(field number, wire type, value) at the top level of ``data``, in order.

    The value is the integer of a varint and a memoryview slice for length-delimited
    and fixed-width fields. Raises ``ValueError`` on malformed input.
    """
    view = memoryview(data)
    pos = 0
    while pos < len(view):
        key, pos = read_varint(view, pos)
        number, wire_type = key >> 3, key & 7
        if wire_type == VARINT:
            value, pos = read_varint(view, pos)
            yield number, wire_type, value
            continue
        if wire_type == LEN:
            length, pos = read_varint(view, pos)
        elif wire_type in (FIXED64, FIXED32):
            length = 8 if wire_type == FIXED64 else 4
        else:
            raise ValueError(f"unsupported wire type {wire_type}")
        if pos + length > len(view):
            raise ValueError("truncated field")
        yield number, wire_type, view[pos : pos + length]
        pos += length
