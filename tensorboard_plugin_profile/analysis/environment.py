"""Run environment, GPU perf environment and diagnostics of a host (docs/conversion.md §4.1).

Usage::

    env = run_environment(space)          # device type, core count, hostnames, ...
    perf = perf_env(space)                # peak TFLOP/s and bandwidths (GPU), else zeros
    combined = combine_environments([env_a, env_b])
"""

from __future__ import annotations

import dataclasses
import re
from typing import Iterable, Optional

from google.protobuf.message import DecodeError

from ..common import protowire
from ..protobuf import hlo_pb2
from ..xspace import schema
from ..xspace.model import Plane, Space

CPU = "CPU"
HARDWARE_CPU = "CPU_ONLY"
HARDWARE_GPU = "GPU"
HARDWARE_TPU = "TPU"
HARDWARE_UNKNOWN = "UNKNOWN_HARDWARE"

# Nvidia architecture by compute capability (major, minor upper bound or None).
_NVIDIA_ARCH = {2: "Fermi", 3: "Kepler", 5: "Maxwell", 6: "Pascal", 9: "Hopper", 10: "Blackwell"}
# Peak FLOPs per SM per clock cycle (best of CUDA cores and tensor cores, dense),
# from Nvidia's published per-architecture throughput; unknown cc → nearest lower.
_FLOPS_PER_SM_CYCLE = (
    (3, 0, 384),
    (5, 0, 256),
    (6, 0, 256),
    (6, 1, 256),
    (7, 0, 1024),
    (7, 5, 1024),
    (8, 0, 2048),
    (8, 6, 1024),
    (8, 9, 1024),
    (9, 0, 4096),
    (10, 0, 8192),
)
# Markers of a training graph in HLO op names (TF gradient scopes, JAX transposes).
_GRADIENT_OP_NAME = re.compile(rb"(?:^|/)(?:gradients|gradient_tape)|(?:^|/)transpose\(")


@dataclasses.dataclass
class RunEnvironment:
    hostnames: list
    host_count: int = 1
    task_count: int = 1
    device_type: str = CPU
    device_core_count: int = 0
    hardware_type: str = HARDWARE_CPU
    is_training: bool = False
    host_trace_level: int = 0


@dataclasses.dataclass
class PerfEnv:
    peak_tera_flops_per_second: float = 0.0
    peak_hbm_bw_giga_bytes_per_second: float = 0.0
    peak_sram_rd_bw_giga_bytes_per_second: float = 0.0
    peak_sram_wr_bw_giga_bytes_per_second: float = 0.0


def gpu_planes(space: Space) -> list:
    return [p for p in space.planes if schema.is_gpu_plane(p.name)]


def tpu_planes(space: Space) -> list:
    return [p for p in space.planes if schema.is_tpu_core_plane(p.name)]


def device_planes(space: Space) -> list:
    """TPU core planes if any, else GPU planes."""
    return tpu_planes(space) or gpu_planes(space)


def hardware_type_of(device_type: str) -> str:
    if "GPU" in device_type:
        return HARDWARE_GPU
    if device_type == CPU:
        return HARDWARE_CPU
    if "TPU" in device_type:
        return HARDWARE_TPU
    return HARDWARE_UNKNOWN


def run_environment(space: Space) -> RunEnvironment:
    env = RunEnvironment(hostnames=[space.hostname], is_training=is_training(space))
    tpus, gpus = tpu_planes(space), gpu_planes(space)
    if tpus:
        env.device_type = str(tpus[0].plane_stats.get("device_type_string", "TPU"))
        env.device_core_count = len(tpus)
    elif gpus:
        env.device_type = gpu_model(gpus[0])
        env.device_core_count = len(gpus)
    env.hardware_type = hardware_type_of(env.device_type)
    return env


def gpu_model(plane: Plane) -> str:
    stats = plane.plane_stats
    # Without a vendor stat (older profilers) upstream says just "GPU".
    if str(stats.get("device_vendor", "")).lower() != "nvidia":
        return "GPU"
    major, minor = int(stats.get("compute_cap_major", 0)), int(stats.get("compute_cap_minor", 0))
    arch: Optional[str]
    if major == 7:
        arch = "Volta" if minor < 5 else "Turing"
    elif major == 8:
        arch = "Ampere" if minor < 9 else "Ada Lovelace"
    else:
        arch = _NVIDIA_ARCH.get(major)
    return f"Nvidia GPU ({arch})" if arch else "Nvidia GPU"


def perf_env(space: Space) -> PerfEnv:
    """Peak compute and bandwidth of the first GPU; zeros for CPU/TPU."""
    gpus = gpu_planes(space)
    if not gpus:
        return PerfEnv()
    stats = gpus[0].plane_stats
    clock_ghz = float(stats.get("clock_rate", 0)) / 1e6
    cores = int(stats.get("core_count", 0))
    cc = (int(stats.get("compute_cap_major", 0)), int(stats.get("compute_cap_minor", 0)))
    per_cycle = next((f for mj, mn, f in reversed(_FLOPS_PER_SM_CYCLE) if (mj, mn) <= cc), 0)
    peak_tflops = float(stats.get("peak_teraflops_per_second", 0) or 0)
    if peak_tflops <= 0:
        peak_tflops = cores * clock_ghz * per_cycle / 1000
    sram = cores * clock_ghz * (64 if cc[0] <= 2 else 256)
    return PerfEnv(
        peak_tera_flops_per_second=peak_tflops,
        peak_hbm_bw_giga_bytes_per_second=float(stats.get("memory_bandwidth", 0)) / 1e9,
        peak_sram_rd_bw_giga_bytes_per_second=float(
            stats.get("peak_sram_rd_bw_gigabytes_per_second", 0) or sram
        ),
        peak_sram_wr_bw_giga_bytes_per_second=float(
            stats.get("peak_sram_wr_bw_gigabytes_per_second", 0) or sram
        ),
    )


def is_training(space: Space) -> bool:
    """Any HLO module whose op names show gradients (TF) or transposes (JAX)."""
    metadata = space.plane(schema.METADATA_PLANE)
    if metadata is None or metadata.metadata_stats.empty:
        return False
    stats = metadata.metadata_stats
    protos = stats.loc[stats["stat"].astype(str) == schema.HLO_PROTO_STAT, "str_value"]
    return any(_hlo_is_training(p) for p in protos if p)


def _hlo_is_training(proto) -> bool:
    data = proto.encode("latin-1") if isinstance(proto, str) else bytes(proto)
    try:  # the protobuf library's parser: compiled, ~10x the wire walk below
        names = [
            instruction.metadata.op_name.encode()
            for computation in hlo_pb2.HloProto.FromString(data).hlo_module.computations
            for instruction in computation.instructions
        ]
    except DecodeError:  # damaged: the names read before the damage
        names = hlo_op_names(data)
    return any(_GRADIENT_OP_NAME.search(name) for name in names)


def hlo_op_names(data: bytes) -> list:
    """``metadata.op_name`` of every instruction in serialized ``xla.HloProto`` bytes.

    Walks only the path HloProto.hlo_module(1) → computations(3) →
    instructions(2) → metadata(7) → op_name(2) of the wire format, so we need no
    XLA protos for this one question.
    """
    names: list = []
    for module in _fields(data, 1):
        for computation in _fields(module, 3):
            for instruction in _fields(computation, 2):
                for metadata in _fields(instruction, 7):
                    names.extend(_fields(metadata, 2))
    return names


def _fields(data: bytes, number: int) -> list:
    """Length-delimited fields with this number, at the top level of ``data``.

    Best effort: this answers a yes/no question from an optional stat, so a damaged
    proto gives the fields read before the damage rather than an error.
    """
    out: list = []
    try:
        for field, wire_type, value in protowire.fields(data):
            if field == number and wire_type == protowire.LEN:
                out.append(bytes(value))
    except ValueError:
        pass
    return out


def combine_environments(envs: Iterable[RunEnvironment]) -> Optional[RunEnvironment]:
    """Hostnames union, device type of the non-CPU hosts, counts added (docs/conversion.md §4.7)."""
    envs = list(envs)
    if not envs:
        return None
    hostnames = list(dict.fromkeys(h for e in envs for h in e.hostnames))
    devices = [e for e in envs if e.device_type != CPU]
    device_type = devices[0].device_type if devices else CPU
    return RunEnvironment(
        hostnames=hostnames,
        host_count=len(hostnames),
        task_count=sum(e.task_count for e in envs),
        device_type=device_type,
        device_core_count=sum(e.device_core_count for e in envs),
        hardware_type=hardware_type_of(device_type),
        is_training=any(e.is_training for e in envs),
        host_trace_level=envs[0].host_trace_level,
    )


def diagnostics(space: Space) -> tuple:
    """(errors, warnings) of the profile, de-duplicated in order."""
    return list(dict.fromkeys(space.errors)), list(dict.fromkeys(space.warnings))
