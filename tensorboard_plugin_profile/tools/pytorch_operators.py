"""``pytorch_operators``: CPU operators of a PyTorch worker (``analysis/pytorch/operators.py``).

One table of operators grouped by name, or by name and input shapes with
``group_by=input_shape``: calls, device self / total µs (the kernels they launched), host
self / total µs, Tensor Core eligibility and the Tensor Core share of their kernel time,
and whether call stacks were recorded. With ``op_name`` (and ``input_shape`` under
``group_by=input_shape``) it is that operator's calls grouped by call stack instead.
``scope=main_thread_steps`` counts only the calls of the step-marking thread inside the
steps (torch-tb-profiler's diff view); the default ``all`` counts every thread.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.pytorch.operators import ALL_THREADS, call_stacks, operator_stats
from ..common.errors import InvalidArgument, NotApplicable
from .datatable import UNIT_US, Column, data_table, rows_from_columns

GROUPINGS = ("operation", "input_shape")


def convert(hosts: Sequence[tuple], params: Mapping[str, str]) -> list:
    group_by = params.get("group_by") or "operation"
    if group_by not in GROUPINGS:
        raise InvalidArgument(f"group_by must be one of {', '.join(GROUPINGS)}.")
    by_shape = group_by == "input_shape"
    op_name = params.get("op_name")
    if op_name:
        shape = params.get("input_shape") if by_shape else None
        t = call_stacks(hosts[0][1], op_name, shape)
        if t.empty:
            raise NotApplicable(f"This trace has no call of {op_name}" + (
                f" with input shape {shape}." if shape is not None else "."))  # fmt: skip
        title = f"Call stacks of {op_name}" + (f" {shape}" if shape is not None else "")
    else:
        scope = params.get("scope") or ALL_THREADS
        t = operator_stats(hosts[0][1], by_input_shape=by_shape, scope=scope)
        if t.empty:
            raise NotApplicable("This trace has no CPU operators.")
        title = "Operators by name and input shape" if by_shape else "Operators"
    columns = [Column("name", "Name", "string")]
    values = [t["name"]]
    if by_shape:
        columns.append(Column("input_shape", "Input shape", "string"))
        values.append(t["input_shape"])
    if op_name:
        columns.append(Column("call_stack", "Call stack", "string"))
        values.append([s or "(none recorded)" for s in t["call_stack"]])
    columns += [
        Column("calls", "Calls", "number"),
        Column("device_self_us", "Device self duration (us)", "number", UNIT_US),
        Column("device_total_us", "Device total duration (us)", "number", UNIT_US),
        Column("host_self_us", "Host self duration (us)", "number", UNIT_US),
        Column("host_total_us", "Host total duration (us)", "number", UNIT_US),
        Column("tc_eligible", "Tensor Cores eligible", "string"),
        Column("tc_self_percent", "Tensor Cores self (%)", "number"),
        Column("tc_total_percent", "Tensor Cores total (%)", "number"),
    ]
    if not op_name:
        columns.append(Column("has_call_stack", "Call stack recorded", "string"))
    values += [
        t["calls"],
        t["device_self_us"].round(3),
        t["device_total_us"].round(3),
        t["host_self_us"].round(3),
        t["host_total_us"].round(3),
        ["Yes" if v else "No" for v in t["tc_eligible"]],
        (100 * t["tc_self_ratio"]).round(2),
        (100 * t["tc_total_ratio"]).round(2),
    ]
    if not op_name:
        values.append(["Yes" if v else "No" for v in t["has_call_stack"]])
    properties = {"title": title, "group_by": group_by}
    if params.get("scope") and not op_name:
        properties["scope"] = params["scope"]
    return [data_table(columns, rows_from_columns(*values), properties)]
