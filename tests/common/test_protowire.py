"""The one top-level protobuf wire reader, against the protobuf library's own encoding."""

from __future__ import annotations

import pytest

from tensorboard_plugin_profile.common import protowire
from tensorboard_plugin_profile.protobuf import profiler_service_pb2


def test_fields_match_what_protobuf_wrote():
    response = profiler_service_pb2.ProfileResponse(empty_trace=True)
    response.tool_data.add(name="a", data=b"x" * 300)
    got = [(n, t, v if isinstance(v, int) else bytes(v))
           for n, t, v in protowire.fields(response.SerializeToString())]  # fmt: skip
    tool = response.tool_data[0].SerializeToString()
    assert sorted(got) == sorted([(6, protowire.LEN, tool), (7, protowire.VARINT, 1)])


@pytest.mark.parametrize(
    "data, problem",
    [
        (b"\x08", "truncated varint"),
        (b"\x08" + b"\xff" * 11, "varint too long"),
        (b"\x0a\x05ab", "truncated field"),
        (b"\x09\x00", "truncated field"),
        (b"\x0b", "unsupported wire type"),
    ],
)
def test_malformed_input_raises(data, problem):
    with pytest.raises(ValueError, match=problem):
        list(protowire.fields(data))


def test_hlo_op_names_are_best_effort_on_damage():
    from tensorboard_plugin_profile.analysis.environment import hlo_op_names

    # hlo_module(1) { computations(3) { instructions(2) { metadata(7) { op_name(2) } } } }
    def wrap(number, payload):
        return bytes([number << 3 | 2, len(payload)]) + payload

    op = wrap(1, wrap(3, wrap(2, wrap(7, wrap(2, b"gradients/x")))))
    assert hlo_op_names(op) == [b"gradients/x"]
    assert hlo_op_names(op + b"\x0a\x7f") == [b"gradients/x"]  # damage after: kept
