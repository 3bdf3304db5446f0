"""Per-host OpStats (docs/conversion.md §4) and their combination across hosts (§4.7).

Each host is analysed on its own into a small ``OpStats`` (op databases, kernel
reports, steps, environment); combining is cheap. This is the map step a
process pool or a distributed engine can run per host.

Usage::

    stats = op_stats_of_hosts([("host_a", space_a), ("host_b", space_b)])
    stats.host_ops.ops, stats.device_ops.total_time_ps, stats.kernels, stats.steps
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence

import pandas as pd

from ...common.memo import memoized
from ...preprocessing.preprocess import preprocess
from ...xspace import schema
from ...xspace.model import Space
from .. import environment, together
from ..steps import build as steps
from ..steps import step_db
from . import kernels, launches
from . import metrics as ops


@dataclasses.dataclass
class OpStats:
    host_ops: ops.OpMetricsDb
    device_ops: ops.OpMetricsDb
    kernels: pd.DataFrame
    steps: step_db.StepDb
    run_environment: environment.RunEnvironment
    perf_env: environment.PerfEnv
    errors: list
    warnings: list


def analyse_host(space: Space, threads: Optional[int] = None) -> OpStats:
    """Every OpStats piece of one (preprocessed) host. The step database shares nothing
    with the op tables, so the two are computed side by side (``together.run_all``:
    ``threads`` as there; the same OpStats, and the same first error, for any count)."""
    ops_part, step_part, perf = together.run_all(
        [
            lambda: _op_pieces(space),
            lambda: steps.step_database(space),
            lambda: environment.perf_env(space),
        ],
        threads,
    )
    errors, warnings, env, host_ops, device_ops, kernel_reports = ops_part
    return OpStats(
        host_ops=host_ops,
        device_ops=device_ops,
        kernels=kernel_reports,
        steps=step_part,
        run_environment=env,
        perf_env=perf,
        errors=errors,
        warnings=warnings,
    )


def _op_pieces(space: Space) -> tuple:
    """(errors, warnings, run environment, host ops, device ops, kernel reports)."""
    errors, warnings = environment.diagnostics(space)
    env = environment.run_environment(space)
    gpus = environment.gpu_planes(space)
    # Kernels without tf_op get their host launch's op; no GPU, no host pass for it.
    launched = launches.launch_ops(space.plane(schema.HOST_PLANE)) if gpus else None
    host_ops = ops.host_op_metrics(space.plane(schema.HOST_PLANE))
    device_ops = ops.device_op_metrics(gpus, launched)
    return errors, warnings, env, host_ops, device_ops, kernels.kernel_reports(space)


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
def host_op_stats(space: Space) -> OpStats:
    """The op statistics of one host, computed once per decoded Space."""
    return memoized([space], "host_op_stats", lambda: analyse_host(preprocess(space)))


def has_framework_ops(stats: OpStats) -> bool:
    """Whether TF stats would show an op besides IDLE: a TensorFlow op on the host, or a
    device op (grouped under the framework op that launched it). A JAX program on a CPU
    has none; its XLA ops are in HLO stats and op_profile (analysis/hlo/op_events.py)."""
    return not (stats.host_ops.without_idle().empty and stats.device_ops.without_idle().empty)


def op_stats_of_hosts(hosts: Sequence[tuple]) -> OpStats:
    """Analyses each (name, Space) host independently, then combines them."""
    return combined([host_op_stats(space) for _, space in hosts])


def combined(per_host: Sequence[OpStats]) -> OpStats:
    """``combine`` cached for as long as every host's OpStats lives: several tools of a
    multi-host session ask for the same combination."""
    if len(per_host) == 1:
        return per_host[0]
    return memoized(list(per_host), "combined_op_stats", lambda: combine(per_host))
