"""The HLO modules a profile carries, one ``xla.HloProto`` per compiled program.

XLA writes each program into the ``/host:metadata`` plane: one event metadata per
program, named ``<module>(<program id>)``, with the serialized ``HloProto`` as its
``Hlo Proto`` stat. We parse them from the decoded Space on demand (never writing
``.hlo_proto.pb`` files into the logdir, as upstream does) and memoise the parse
per Space.

Usage::

    names = module_names(space)            # ["jit_step(8)", ...], sorted
    proto = find_module(hosts, "jit_step(8)")  # xla.HloProto, or NotFound
"""

from __future__ import annotations

from typing import Optional, Sequence

from google.protobuf.message import DecodeError

from ...common.errors import CorruptProfile, InvalidArgument, NotFound
from ...common.memo import memoized
from ...protobuf import hlo_pb2
from ...xspace import schema
from ...xspace.model import Space


def _serialized_modules(space: Space) -> dict:
    """Module display name → serialized HloProto bytes (unparsed)."""
    plane = space.plane(schema.METADATA_PLANE)
    if plane is None or plane.metadata_stats.empty:
        return {}
    stats = plane.metadata_stats
    rows = stats[stats["stat"].astype(str) == schema.HLO_PROTO_STAT]
    names = dict(zip(plane.event_metadata["id"].tolist(), plane.event_metadata["name"].tolist()))
    out: dict = {}
    for metadata_id, value in zip(rows["metadata_id"].tolist(), rows["str_value"].tolist()):
        if value is None:
            continue
        data = value.encode("latin-1") if isinstance(value, str) else bytes(value)
        name = str(names.get(metadata_id, "")) or f"module_{metadata_id}"
        out[name] = data
    return out


def module_names(space: Space) -> list:
    """The programs of one host, as ``<module>(<program id>)``, sorted."""
    return sorted(_serialized_modules(space))


def has_modules(space: Space) -> bool:
    return bool(_serialized_modules(space))


def session_module_names(spaces: Sequence[Space]) -> list:
    names: set = set()
    for space in spaces:
        names.update(module_names(space))
    return sorted(names)


def parsed_modules(space: Space) -> dict:
    """Display name → parsed ``xla.HloProto``, memoised per Space."""
    return memoized([space], "hlo_modules", lambda: _parse_all(space))


def _parse_all(space: Space) -> dict:
    out = {}
    for name, data in _serialized_modules(space).items():
        try:
            out[name] = hlo_pb2.HloProto.FromString(data)
        except DecodeError as e:
            raise CorruptProfile(f"The HLO of program {name} cannot be decoded: {e}") from None
    return out


def find_module(hosts: Sequence[tuple], name: Optional[str]) -> hlo_pb2.HloProto:
    """The HloProto named ``name`` (``module(program_id)`` or a bare module name)."""
    return module_and_host(hosts, name)[0]


def module_and_host(hosts: Sequence[tuple], name: Optional[str]) -> tuple:
    """(HloProto, (host name, Space)) of the first host holding the program ``name``."""
    if not name:
        raise InvalidArgument("The 'module_name' parameter is required (see /module_list).")
    for host in hosts:
        modules = parsed_modules(host[1])
        if name in modules:
            return modules[name], host
        bare = [m for key, m in modules.items() if key.split("(", 1)[0] == name]
        if bare:
            return bare[0], host
    raise NotFound(f"No HLO module named {name!r} in this profile (see /module_list).")


def program_modules(space: Space) -> dict:
    """Program id → parsed HloProto (the ``program_id`` stat of XLA op events)."""
    out = {}
    for proto in parsed_modules(space).values():
        out[int(proto.hlo_module.id)] = proto
    return out
