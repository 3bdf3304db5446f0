"""Small hand-made GPU XSpaces whose numbers can be checked by hand."""

from __future__ import annotations

from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.xspace import decode_xspace

US = 1_000_000  # ps


class _PlaneBuilder:
    def __init__(self, plane):
        self.plane = plane
        self.stat_ids: dict = {}
        self.event_ids: dict = {}

    def stat_id(self, name: str) -> int:
        if name not in self.stat_ids:
            sid = len(self.stat_ids) + 1
            self.stat_ids[name] = sid
            self.plane.stat_metadata[sid].id = sid
            self.plane.stat_metadata[sid].name = name
        return self.stat_ids[name]

    def line(self, line_id: int, name: str):
        line = self.plane.lines.add()
        line.id, line.name = line_id, name
        return line

    def event(self, line, name: str, begin_us: float, dur_us: float, **stats):
        if name not in self.event_ids:
            mid = len(self.event_ids) + 1
            self.event_ids[name] = mid
            self.plane.event_metadata[mid].id = mid
            self.plane.event_metadata[mid].name = name
        ev = line.events.add()
        ev.metadata_id = self.event_ids[name]
        ev.offset_ps, ev.duration_ps = int(begin_us * US), int(dur_us * US)
        for key, value in stats.items():
            st = ev.stats.add()
            st.metadata_id = self.stat_id(key)
            if isinstance(value, str):
                st.str_value = value
            elif key == "correlation_id":
                st.uint64_value = value
            else:
                st.int64_value = value
        return ev

    def plane_stat(self, name: str, value: int):
        st = self.plane.stats.add()
        st.metadata_id = self.stat_id(name)
        st.int64_value = value


def gpu_space():
    """One host thread launching kernels on one GPU stream, plus a memcpy.

    Step group 1 spans 100..120 us on the device ``Steps`` line.
    """
    space = xplane_pb2.XSpace()
    space.hostnames.append("synthetic")
    host = _PlaneBuilder(space.planes.add())
    host.plane.id, host.plane.name = 1, "/host:CPU"
    thread = host.line(7, "python")
    host.event(thread, "dense/MatMul:MatMul", 90, 8, group_id=1)
    host.event(thread, "cuLaunchKernel", 91, 1, correlation_id=1, group_id=1)
    gpu = _PlaneBuilder(space.planes.add())
    gpu.plane.id, gpu.plane.name = 2, "/device:GPU:0"
    for key, value in (
        ("clock_rate", 1_530_000),
        ("core_count", 80),
        ("memory_bandwidth", 900_000_000_000),
        ("compute_cap_major", 7),
        ("compute_cap_minor", 0),
    ):
        gpu.plane_stat(key, value)
    stream = gpu.line(1, "Stream #1(Compute)")
    details = "regs:96 static_shared:1024 dynamic_shared:512 grid:16,8,1 block:128,1,1 occ_pct:50"
    gpu.event(
        stream,
        "volta_h884gemm_64x64",
        100,
        3,
        correlation_id=1,
        group_id=1,
        kernel_details=details,
        tf_op="dense/MatMul:MatMul",
        shape="(half[4,4])",
    )
    gpu.event(
        stream,
        "volta_h884gemm_64x64",
        104,
        5,
        correlation_id=2,
        group_id=1,
        kernel_details=details,
        tf_op="dense/MatMul:MatMul",
        shape="(half[4,4])",
    )
    gpu.event(
        stream,
        "relu_kernel",
        110,
        0.001,
        correlation_id=3,
        group_id=1,
        kernel_details="regs:8 grid:1,1,1 block:32,1,1",
        tf_op="dense/Relu:Relu",
    )
    gpu.event(
        stream, "MemcpyDToH", 115, 5, correlation_id=4, group_id=1, memcpy_details="num_bytes:4096"
    )
    steps = gpu.line(-559038737, "Steps")
    gpu.event(steps, "1", 100, 20, group_id=1, step_name="1")
    return decode_xspace(space.SerializeToString(), "synthetic")
