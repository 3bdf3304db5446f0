"""Per-host OpStats (spec §4) and their combination across hosts (§4.7).

Each host is analysed on its own into a small ``OpStats`` (op databases, kernel
reports, steps, environment); combining is cheap. This is the map step a
process pool or a distributed engine can run per host.

Usage::

    stats = op_stats_of_hosts([("host_a", space_a), ("host_b", space_b)])
    stats.host_ops.ops, stats.device_ops.total_time_ps, stats.kernels, stats.steps
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from typing import Callable, Optional, Sequence

import pandas as pd

from ..xspace import schema
from ..xspace.model import Space
from . import environment, kernels, ops, steps


@dataclasses.dataclass
class OpStats:
    host_ops: ops.OpMetricsDb
    device_ops: ops.OpMetricsDb
    kernels: pd.DataFrame
    steps: steps.StepDb
    run_environment: environment.RunEnvironment
    perf_env: environment.PerfEnv
    errors: list
    warnings: list


def analyse_host(space: Space) -> OpStats:
    """Every OpStats piece of one (preprocessed) host."""
    errors, warnings = environment.diagnostics(space)
    env = environment.run_environment(space)
    return OpStats(
        host_ops=ops.host_op_metrics(space.plane(schema.HOST_PLANE)),
        device_ops=ops.device_op_metrics(environment.gpu_planes(space)),
        kernels=kernels.kernel_reports(space),
        steps=steps.step_database(space),
        run_environment=env,
        perf_env=environment.perf_env(space),
        errors=errors,
        warnings=warnings,
    )


def combine(per_host: Sequence[OpStats]) -> OpStats:
    if len(per_host) == 1:
        return per_host[0]
    run_environment = environment.combine_environments(s.run_environment for s in per_host)
    if run_environment is None:  # no hosts: fail as before, with a clearer message
        raise ValueError("combine() needs at least one host's OpStats.")
    perf = next((s.perf_env for s in per_host if s.perf_env.peak_tera_flops_per_second), None)
    return OpStats(
        host_ops=ops.combine(s.host_ops for s in per_host),
        device_ops=ops.combine(s.device_ops for s in per_host),
        kernels=kernels.combine_kernel_reports(s.kernels for s in per_host),
        steps=steps.combine_step_dbs([s.steps for s in per_host]),
        run_environment=run_environment,
        perf_env=perf or per_host[0].perf_env,
        errors=list(dict.fromkeys(e for s in per_host for e in s.errors)),
        warnings=list(dict.fromkeys(w for s in per_host for w in s.warnings)),
    )


# Per-host results live as long as their decoded Space: every tool of a session
# reuses them, and the service's cache decides how long Spaces live.
_CACHE: dict = {}
_LOCK = threading.Lock()


def host_op_stats(space: Space) -> OpStats:
    key = id(space)
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None:
        return cached
    result = analyse_host(_preprocessed(space))
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = result
            weakref.finalize(space, _CACHE.pop, key, None)
    return result


def _preprocessed(space: Space) -> Space:
    preprocess = _preprocess_function()
    return preprocess(space) if preprocess is not None else space


def _preprocess_function() -> Optional[Callable[[Space], Space]]:
    try:
        from .preprocess import preprocess
    except ImportError:  # preprocessing not available: analyse the file as written
        return None
    return preprocess


def op_stats_of_hosts(hosts: Sequence[tuple]) -> OpStats:
    """Analyses each (name, Space) host independently, then combines them.

    The combination is cached too (for as long as every Space lives): several
    tools of a multi-host session ask for the same one.
    """
    per_host = [host_op_stats(space) for _, space in hosts]
    if len(per_host) == 1:
        return per_host[0]
    key = tuple(id(space) for _, space in hosts)
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None:
        return cached
    result = combine(per_host)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = result
            for _, space in hosts:
                weakref.finalize(space, _CACHE.pop, key, None)
    return result
