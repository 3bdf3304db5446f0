"""Split a serialized ``ProfileResponse`` without decoding the XSpace inside it.

An XSpace can be hundreds of megabytes. Decoding it into Python objects only to
serialize it again for the file would hold the profile three times in memory;
instead we walk the response's top-level fields on the wire and slice out the
bytes of field 8 (``xspace``) as they are. The few other fields are small.
"""

from __future__ import annotations

import dataclasses

from google.protobuf import message

from tensorboard_plugin_profile.protobuf import profiler_service_pb2

_TOOL_DATA, _EMPTY_TRACE, _XSPACE = 6, 7, 8
_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5


@dataclasses.dataclass(frozen=True)
class ScannedResponse:
    empty_trace: bool
    xspace: bytes | None  # serialized XSpace; None when the field is absent
    tool_data: tuple[tuple[str, bytes], ...]


def scan_profile_response(raw: bytes) -> ScannedResponse:
    """Raises ``ValueError`` on malformed input."""
    view = memoryview(raw)
    empty_trace, xspace_parts, tool_data = False, [], []
    pos = 0
    while pos < len(view):
        key, pos = _varint(view, pos)
        field, wire_type = key >> 3, key & 7
        if wire_type == _VARINT:
            value, pos = _varint(view, pos)
            if field == _EMPTY_TRACE:
                empty_trace = value != 0
        elif wire_type == _LEN:
            length, pos = _varint(view, pos)
            end = pos + length
            if end > len(view):
                raise ValueError("truncated length-delimited field")
            if field == _XSPACE:
                xspace_parts.append(view[pos:end])
            elif field == _TOOL_DATA:
                tool_data.append(_tool_data(bytes(view[pos:end])))
            pos = end
        elif wire_type in (_FIXED64, _FIXED32):
            pos += 8 if wire_type == _FIXED64 else 4
        else:
            raise ValueError(f"unsupported wire type {wire_type}")
    if pos != len(view):
        raise ValueError("truncated fixed-width field")
    # Repeated occurrences of a message field merge, which on the wire is concatenation.
    xspace = b"".join(xspace_parts) if xspace_parts else None
    return ScannedResponse(empty_trace, xspace, tuple(tool_data))


def _tool_data(raw: bytes) -> tuple[str, bytes]:
    try:
        tool = profiler_service_pb2.ProfileToolData.FromString(raw)
    except message.DecodeError as e:
        raise ValueError(f"malformed tool_data: {e}") from None
    return tool.name, tool.data


def _varint(view: memoryview, pos: int) -> tuple[int, int]:
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
        if shift >= 70:
            raise ValueError("varint too long")
