"""Split a serialized ``ProfileResponse`` without decoding the XSpace inside it.

An XSpace can be hundreds of megabytes. Decoding it into Python objects only to
serialize it again for the file would hold the profile three times in memory;
instead we walk the response's top-level fields on the wire and slice out the
bytes of field 8 (``xspace``) as they are. The few other fields are small.
"""

from __future__ import annotations

import dataclasses

from google.protobuf import message

from tensorboard_plugin_profile.common import protowire
from tensorboard_plugin_profile.protobuf import profiler_service_pb2

_TOOL_DATA, _EMPTY_TRACE, _XSPACE = 6, 7, 8


@dataclasses.dataclass(frozen=True)
class ScannedResponse:
    empty_trace: bool
    xspace: bytes | None  # serialized XSpace; None when the field is absent
    tool_data: tuple[tuple[str, bytes], ...]


def scan_profile_response(raw: bytes) -> ScannedResponse:
    """Raises ``ValueError`` on malformed input."""
    empty_trace, xspace_parts, tool_data = False, [], []
    for field, wire_type, value in protowire.fields(raw):
        if isinstance(value, int):
            if field == _EMPTY_TRACE:
                empty_trace = value != 0  # a scalar: the last occurrence wins
        elif field == _XSPACE and wire_type == protowire.LEN:
            xspace_parts.append(value)
        elif field == _TOOL_DATA and wire_type == protowire.LEN:
            tool_data.append(_tool_data(bytes(value)))
    # Repeated occurrences of a message field merge, which on the wire is concatenation.
    xspace = b"".join(xspace_parts) if xspace_parts else None
    return ScannedResponse(empty_trace, xspace, tuple(tool_data))


def _tool_data(raw: bytes) -> tuple[str, bytes]:
    try:
        tool = profiler_service_pb2.ProfileToolData.FromString(raw)
    except message.DecodeError as e:
        raise ValueError(f"malformed tool_data: {e}") from None
    return tool.name, tool.data
