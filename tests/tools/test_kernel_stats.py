"""kernel_stats against upstream on every fixture, and on a synthetic GPU profile."""

from __future__ import annotations

import pytest
from conftest import fixture_names, load_reference

from tensorboard_plugin_profile.common.errors import NotApplicable
from tensorboard_plugin_profile.tools import kernel_stats

from .compare_tables import fixture_hosts, table_differences
from .synthetic import gpu_space


@pytest.mark.parametrize("name", fixture_names())
def test_data_matches_reference(name):
    ref = load_reference(name, "kernel_stats.json")
    ours = kernel_stats.kernel_stats_table(list(fixture_hosts(name)))
    problems = table_differences(ours, ref, name)
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("name", ["jax_cpu_train", "tf_idle_capture"])
def test_tool_says_why_when_there_are_no_kernels(name):
    # Upstream returns an empty table; we raise NotApplicable (docs/differences.md).
    with pytest.raises(NotApplicable, match="without a GPU"):
        kernel_stats.convert(list(fixture_hosts(name)), {})


def test_synthetic_kernels_by_hand():
    space = gpu_space()
    table = kernel_stats.convert([("host", space)], {})
    rows = [[c["v"] for c in r["c"]] for r in table["rows"]]
    # volta_h884gemm: 2 launches of 3 us and 5 us → total 8, avg 4, min 3, max 5.
    gemm = next(r for r in rows if r[1] == "volta_h884gemm_64x64")
    assert gemm[2:7] == [96.0, 1024.0 + 512.0, "128,1,1", "16,8,1", 50.0]
    assert gemm[7:10] == [True, True, "dense/MatMul"]
    assert gemm[10:] == [2.0, 8.0, 4.0, 3.0, 5.0]
    relu = next(r for r in rows if r[1] == "relu_kernel")
    assert relu[7:10] == [False, False, "dense/Relu"]
    assert relu[10:] == [1.0, 0.001, 0.001, 0.001, 0.001]
    assert rows[0][1] == "volta_h884gemm_64x64" and rows[0][0] == 1.0
