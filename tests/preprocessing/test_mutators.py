"""TraceMe 2.0 mutators: producer and consumer events connected by their key stats."""

from __future__ import annotations

import pandas as pd
from xspace_builder import HostPlane

from tensorboard_plugin_profile.preprocessing.preprocess import preprocess
from tensorboard_plugin_profile.xspace import schema
from tensorboard_plugin_profile.xspace.event_stats import typed_column


def test_executor_and_tpu_execute_events_with_equal_keys_share_one_connection_id():
    plane = HostPlane()
    line = plane.line(1, "tf_executor")
    keys = {schema.STEP_ID: 7, schema.ITER_NUM: 3}
    plane.event(line, schema.EXECUTOR_STATE_PROCESS, 0, 10, **keys)  # producer
    plane.event(line, "TpuExecuteOp", 20, 5, **keys)  # its consumer
    plane.event(line, "TpuExecuteOp", 30, 5, **{schema.STEP_ID: 8, schema.ITER_NUM: 3})
    plane.event(line, "TpuExecuteOp", 40, 5, **{schema.STEP_ID: 7})  # a key missing: left out
    plane.event(line, "unrelated", 50, 5, **keys)
    host = preprocess(plane.decode()).plane(schema.HOST_PLANE)
    events = host.events
    by_name = {(n, int(b)): i for i, (n, b) in enumerate(zip(events["name"], events["begin_ps"]))}

    def value(column: str, name: str, begin_us: int):
        v = typed_column(host, column).iat[by_name[(name, begin_us * 1_000_000)]]
        return None if pd.isna(v) else int(v)

    produced = value(schema.PRODUCER_ID, schema.EXECUTOR_STATE_PROCESS, 0)
    assert produced is not None
    assert value(schema.PRODUCER_TYPE, schema.EXECUTOR_STATE_PROCESS, 0) is not None
    assert value(schema.CONSUMER_ID, "TpuExecuteOp", 20) == produced
    other = value(schema.CONSUMER_ID, "TpuExecuteOp", 30)
    assert other is not None and other != produced
    assert value(schema.CONSUMER_ID, "TpuExecuteOp", 40) is None
    assert value(schema.CONSUMER_ID, "unrelated", 50) is None
