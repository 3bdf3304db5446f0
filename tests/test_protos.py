"""The generated protobuf modules match the .proto sources, and interoperate."""

from __future__ import annotations

import importlib

import pytest
from conftest import REPO
from google.protobuf import descriptor_pb2

from tensorboard_plugin_profile.protobuf import profiler_service_pb2, xplane_pb2

PROTOS = sorted((REPO / "protos").glob("*.proto"))


def _compiled_descriptors(tmp_path) -> dict:
    protoc = pytest.importorskip("grpc_tools.protoc")
    out = tmp_path / "set.pb"
    args = ["protoc", f"-I{REPO / 'protos'}", f"--descriptor_set_out={out}"]
    assert protoc.main(args + [str(p) for p in PROTOS]) == 0
    files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    return {f.name: f for f in files}


def _without_json_names(file: descriptor_pb2.FileDescriptorProto):
    """protoc adds json_name only to descriptor sets, not to generated code."""

    def clear(messages):
        for message in messages:
            for field in message.field:
                field.ClearField("json_name")
            clear(message.nested_type)

    clear(file.message_type)
    return file


def test_generated_modules_are_up_to_date(tmp_path):
    compiled = _compiled_descriptors(tmp_path)
    assert set(compiled) == {p.name for p in PROTOS}
    for name, expected in compiled.items():
        module = importlib.import_module(
            f"tensorboard_plugin_profile.protobuf.{name[: -len('.proto')]}_pb2"
        )
        generated = descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
        assert generated == _without_json_names(expected), (
            f"{name} changed: run `python protos/generate.py` (see its docstring)"
        )


def test_wire_field_numbers_of_key_messages():
    fields = {f.name: f.number for f in profiler_service_pb2.ProfileRequest.DESCRIPTOR.fields}
    assert fields["emit_xspace"] == 9 and fields["opts"] == 4 and fields["session_id"] == 6
    event = {f.name: f.number for f in xplane_pb2.XEvent.DESCRIPTOR.fields}
    assert event == {
        "metadata_id": 1,
        "offset_ps": 2,
        "num_occurrences": 5,
        "duration_ps": 3,
        "stats": 4,
    }
    assert xplane_pb2.XSpace.DESCRIPTOR.full_name == "tensorflow.profiler.XSpace"


def test_our_messages_live_in_a_private_pool():
    from google.protobuf import descriptor_pool

    with pytest.raises(KeyError):
        descriptor_pool.Default().FindMessageTypeByName("tensorflow.profiler.XSpace")
