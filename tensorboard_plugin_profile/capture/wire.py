"""Split a serialized ``ProfileResponse`` without decoding or copying what is inside it.

An XSpace can be hundreds of megabytes, and a server may add legacy tool files. Decoding
the response into Python objects only to serialize the parts again for their files would
hold the profile several times in memory; instead we walk its fields on the wire and keep
memoryview slices of the received bytes (``xspace``, each tool file's ``data``), which are
written to their files as they are. Tool files are counted and summed while walking, so a
server that sends thousands of them, or too many bytes of them, is refused after the first
ones past the bound, without looking at the rest.
"""

from __future__ import annotations

import dataclasses
from typing import Union

from tensorboard_plugin_profile.capture.limits import describe_bytes
from tensorboard_plugin_profile.common import protowire

_TOOL_DATA, _EMPTY_TRACE, _XSPACE = 6, 7, 8
_TOOL_NAME, _TOOL_BYTES = 1, 2
Bytes = Union[bytes, memoryview]


class OverLimit(ValueError):
    """The response is past a bound of ``CaptureLimits``; ``limit`` names the field."""

    def __init__(self, message: str, limit: str):
        super().__init__(message)
        self.limit = limit


@dataclasses.dataclass(frozen=True)
class ScannedResponse:
    empty_trace: bool
    xspace: Bytes | None  # serialized XSpace; None when the field is absent
    tool_data: tuple[tuple[str, Bytes], ...]


def scan_profile_response(
    raw: Bytes, max_tool_files: int = 1 << 62, max_tool_bytes: int = 1 << 62
) -> ScannedResponse:
    """Raises ``OverLimit`` past a bound, ``ValueError`` on malformed input."""
    empty_trace, xspace_parts = False, []
    tool_data: list[tuple[str, Bytes]] = []
    tool_bytes = 0
    for field, wire_type, value in protowire.fields(raw):
        if isinstance(value, int):
            if field == _EMPTY_TRACE:
                empty_trace = value != 0  # a scalar: the last occurrence wins
        elif field == _XSPACE and wire_type == protowire.LEN:
            xspace_parts.append(value)
        elif field == _TOOL_DATA and wire_type == protowire.LEN:
            tool_bytes += len(value)
            if len(tool_data) == max_tool_files:
                raise OverLimit(f"sent more than {max_tool_files} tool files", "max_tool_files")
            if tool_bytes > max_tool_bytes:
                raise OverLimit(
                    f"sent more than {describe_bytes(max_tool_bytes)} of tool files",
                    "max_tool_bytes",
                )
            tool_data.append(_tool_data(value))
    return ScannedResponse(empty_trace, _joined(xspace_parts), tuple(tool_data))


def _joined(parts: list) -> Bytes | None:
    # Repeated occurrences of a message field merge, which on the wire is concatenation.
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _tool_data(raw: memoryview) -> tuple[str, Bytes]:
    """``ProfileToolData`` (name = 1, data = 2) as a name and a slice of ``raw``."""
    name, data = "", raw[:0]
    for field, wire_type, value in protowire.fields(raw):
        if wire_type != protowire.LEN or isinstance(value, int):
            continue
        if field == _TOOL_NAME:
            try:
                name = bytes(value).decode("utf-8")  # within max_tool_bytes
            except UnicodeDecodeError:
                raise ValueError("malformed tool_data: the name is not UTF-8") from None
        elif field == _TOOL_BYTES:
            data = value  # a scalar: the last occurrence wins
    return name, data
