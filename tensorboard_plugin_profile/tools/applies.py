"""Whether a tool applies to a decoded Space: one predicate per kind of data (the registry in
``tools/__init__.py`` names one per tool; ``run_tools`` lists the tools whose predicate holds).

Each reads the Space once per question and imports its analysis only when asked, so listing
the tools of a run does not load every analysis module.
"""

from __future__ import annotations

from typing import Any

from ..common.formats import PROFILER_HOOK, PYTORCH, XSPACE, format_of
from ..xspace import schema


def is_xspace(space: Any) -> bool:
    return format_of(space) == XSPACE


def any_format(space: Any) -> bool:
    return True


def is_profiler_hook(space: Any) -> bool:
    return format_of(space) == PROFILER_HOOK


def has_framework_ops(space: Any) -> bool:
    """TF stats has rows: a ProfilerHook timeline's ops are TensorFlow's; an XSpace needs a
    TensorFlow op (a JAX profile has XLA ops only: hlo_stats and op_profile show those)."""
    if format_of(space) == PROFILER_HOOK:
        return True
    from ..analysis.ops.op_stats import has_framework_ops, host_op_stats

    return is_xspace(space) and has_framework_ops(host_op_stats(space))


def is_pytorch(space: Any) -> bool:
    return format_of(space) == PYTORCH


def has_pytorch_kernels(space: Any) -> bool:
    return is_pytorch(space) and any(
        (p.metadata_stats["str_value"] == "kernel").any() for p in space.planes
    )


def is_distributed_pytorch(space: Any) -> bool:
    """A rank of a distributed job that ran collectives: one rank without any has three
    empty tables, not worth a tool (the session's first rank stands for the others)."""
    if not (is_pytorch(space) and space.extras.get("metadata", {}).get("distributedInfo")):
        return False
    from ..analysis.pytorch.distributed import communication_ops

    return not communication_ops(space).empty


def has_gpu(space: Any) -> bool:
    return is_xspace(space) and any(schema.is_gpu_plane(p.name) for p in space.planes)


def has_allocator_events(space: Any) -> bool:
    from ..analysis.memory.allocator import has_allocator_events

    return is_xspace(space) and has_allocator_events(space)


def has_tf_data(space: Any) -> bool:
    from ..analysis.input_pipeline.tf_data import has_tf_data

    return is_xspace(space) and has_tf_data(space)


def has_tensor_memory(space: Any) -> bool:
    from ..analysis.memory.timeline import has_tensor_memory

    return is_profiler_hook(space) and has_tensor_memory(space)


def has_pytorch_memory(space: Any) -> bool:
    from ..analysis.pytorch.memory import has_memory_events

    return is_pytorch(space) and has_memory_events(space)


def has_hlo_modules(space: Any) -> bool:
    from ..analysis.hlo.modules import has_modules

    return has_modules(space)


def has_xla_ops(space: Any) -> bool:
    from ..analysis.hlo.op_events import has_xla_ops

    return has_xla_ops(space)


def has_model(space: Any) -> bool:
    from .model_view import is_listed

    return is_listed(space)


def has_op_records(space: Any) -> bool:
    """Inputs the op-type and scope views read (analysis/ops/attribution.py)."""
    return format_of(space) in (XSPACE, PROFILER_HOOK, PYTORCH)


def has_python_sources(space: Any) -> bool:
    from ..analysis.ops.attribution import has_python_sources

    return has_python_sources(space)
