"""pprof's profile format (the proto folder of github.com/google/pprof), written from the
public specification as a descriptor, to decode our output with the protobuf runtime.

Only the messages and fields a reader of our profiles needs; unknown fields would be
kept by the runtime, and a field we wrote with a wrong wire type fails the decode.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_INT64, _UINT64, _BOOL, _MSG, _STR = (
    _F.TYPE_INT64,
    _F.TYPE_UINT64,
    _F.TYPE_BOOL,
    _F.TYPE_MESSAGE,
    _F.TYPE_STRING,
)
_ONE, _MANY = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED

_MESSAGES = {
    "Profile": [
        ("sample_type", 1, _MSG, _MANY, "ValueType"),
        ("sample", 2, _MSG, _MANY, "Sample"),
        ("mapping", 3, _MSG, _MANY, "Mapping"),
        ("location", 4, _MSG, _MANY, "Location"),
        ("function", 5, _MSG, _MANY, "Function"),
        ("string_table", 6, _STR, _MANY, None),
        ("drop_frames", 7, _INT64, _ONE, None),
        ("keep_frames", 8, _INT64, _ONE, None),
        ("time_nanos", 9, _INT64, _ONE, None),
        ("duration_nanos", 10, _INT64, _ONE, None),
        ("period_type", 11, _MSG, _ONE, "ValueType"),
        ("period", 12, _INT64, _ONE, None),
        ("comment", 13, _INT64, _MANY, None),
        ("default_sample_type", 14, _INT64, _ONE, None),
    ],
    "ValueType": [("type", 1, _INT64, _ONE, None), ("unit", 2, _INT64, _ONE, None)],
    "Sample": [
        ("location_id", 1, _UINT64, _MANY, None),
        ("value", 2, _INT64, _MANY, None),
        ("label", 3, _MSG, _MANY, "Label"),
    ],
    "Label": [
        ("key", 1, _INT64, _ONE, None),
        ("str", 2, _INT64, _ONE, None),
        ("num", 3, _INT64, _ONE, None),
        ("num_unit", 4, _INT64, _ONE, None),
    ],
    "Mapping": [
        ("id", 1, _UINT64, _ONE, None),
        ("memory_start", 2, _UINT64, _ONE, None),
        ("memory_limit", 3, _UINT64, _ONE, None),
        ("file_offset", 4, _UINT64, _ONE, None),
        ("filename", 5, _INT64, _ONE, None),
        ("build_id", 6, _INT64, _ONE, None),
        ("has_functions", 7, _BOOL, _ONE, None),
        ("has_filenames", 8, _BOOL, _ONE, None),
        ("has_line_numbers", 9, _BOOL, _ONE, None),
        ("has_inline_frames", 10, _BOOL, _ONE, None),
    ],
    "Location": [
        ("id", 1, _UINT64, _ONE, None),
        ("mapping_id", 2, _UINT64, _ONE, None),
        ("address", 3, _UINT64, _ONE, None),
        ("line", 4, _MSG, _MANY, "Line"),
        ("is_folded", 5, _BOOL, _ONE, None),
    ],
    "Line": [("function_id", 1, _UINT64, _ONE, None), ("line", 2, _INT64, _ONE, None)],
    "Function": [
        ("id", 1, _UINT64, _ONE, None),
        ("name", 2, _INT64, _ONE, None),
        ("system_name", 3, _INT64, _ONE, None),
        ("filename", 4, _INT64, _ONE, None),
        ("start_line", 5, _INT64, _ONE, None),
    ],
}


def _profile_class():
    file = descriptor_pb2.FileDescriptorProto(
        name="tests_pprof_profile.proto", package="perftools.profiles", syntax="proto3"
    )
    for name, fields in _MESSAGES.items():
        message = file.message_type.add(name=name)
        for field_name, number, kind, label, type_name in fields:
            field = message.field.add(name=field_name, number=number, type=kind, label=label)
            if type_name:
                field.type_name = f".perftools.profiles.{type_name}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    descriptor = pool.FindMessageTypeByName("perftools.profiles.Profile")
    if hasattr(message_factory, "GetMessageClass"):  # protobuf >= 4.22
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)  # the oldest runtime


Profile = _profile_class()
