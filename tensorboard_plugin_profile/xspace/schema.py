"""Every plane, line, stat and event name the program relies on, defined once.

Names come from the profilers' own schema (docs/conversion.md §2). Other
modules import these constants instead of writing the strings again.
"""

from __future__ import annotations

# --- planes -----------------------------------------------------------------
HOST_PLANE = "/host:CPU"
METADATA_PLANE = "/host:metadata"
TASK_ENV_PLANE = "Task Environment"
GPU_PLANE_PREFIX = "/device:GPU:"
TPU_PLANE_PREFIX = "/device:TPU:"
CUSTOM_PLANE_PREFIXES = ("/device:CUSTOM:", "/custom:")
HOST_PLANE_PREFIXES = (
    "/host:CPU",
    "Host CPUs",
    "/host:tfstreamz",
    "/host:metadata",
    "Syscalls",
    "/host:python-tracer",
    "/host:CUPTI",
    "/host:__ScopeRangeCallStack__",
)
DEVICE_PLANE_PREFIXES = ("/device", "#Chip")


def is_host_plane(name: str) -> bool:
    return name.startswith(HOST_PLANE_PREFIXES)


def is_device_plane(name: str) -> bool:
    return not is_host_plane(name) and name.startswith(DEVICE_PLANE_PREFIXES)


def is_gpu_plane(name: str) -> bool:
    return name.startswith(GPU_PLANE_PREFIX)


def is_tpu_core_plane(name: str) -> bool:
    rest = name[len(TPU_PLANE_PREFIX) :] if name.startswith(TPU_PLANE_PREFIX) else None
    return rest is not None and rest.isdigit()


def is_custom_plane(name: str) -> bool:
    return name.startswith(CUSTOM_PLANE_PREFIXES)


# --- lines ------------------------------------------------------------------
STEPS_LINE = "Steps"
XLA_MODULES_LINE = "XLA Modules"
XLA_OPS_LINE = "XLA Ops"
ASYNC_XLA_OPS_LINE = "Async XLA Ops"
FRAMEWORK_OPS_LINE = "Framework Ops"
FRAMEWORK_NAME_SCOPE_LINE = "Framework Name Scope"
SOURCE_LINE = "Source code"
LAUNCH_STATS_LINE = "Launch Stats"
COUNTERS_LINE = "_counters_"

# Derived line ids: int32 arithmetic on 0xdeadbeef (trace_utils.h).
DERIVED_LINE_ID_BASE = -559038737
DERIVED_STEP_INFO = DERIVED_LINE_ID_BASE + 0
DERIVED_KERNEL_LAUNCH = DERIVED_LINE_ID_BASE + 1
DERIVED_TF_NAME_SCOPE = DERIVED_LINE_ID_BASE + 2
DERIVED_TF_OP = DERIVED_LINE_ID_BASE + 3
DERIVED_HLO_MODULE = DERIVED_LINE_ID_BASE + 4
DERIVED_HLO_OP = DERIVED_LINE_ID_BASE + 5
DERIVED_OVERHEAD = DERIVED_LINE_ID_BASE + 6
DERIVED_SOURCE = DERIVED_LINE_ID_BASE + 7
# Everything from the step-info id up to the end of the per-stream block range.
DERIVED_LINE_ID_MIN = DERIVED_LINE_ID_BASE
DERIVED_LINE_ID_MAX = DERIVED_LINE_ID_BASE + 10000


def is_derived_line(line_id: int) -> bool:
    return DERIVED_LINE_ID_MIN <= line_id <= DERIVED_LINE_ID_MAX


# --- stats ------------------------------------------------------------------
# Stats decoded into typed columns of every event table, by value type.
# Everything else stays in the plane's long stats table (Plane.stats).
INT_STATS = (
    "group_id",
    "step_num",
    "iter_num",
    "id",
    "_r",
    "_pt",
    "_p",
    "_ct",
    "_c",
    "_a",
    "_pid",
    "device_id",
    "program_id",
    "is_eager",
    "is_func",
    "element_id",
    "parent_id",
    "_ipl_stage_id",
)
UINT_STATS = ("correlation_id",)
STR_STATS = (
    "step_name",
    "tf_op",
    "hlo_op",
    "hlo_module",
    "kernel_details",
    "memcpy_details",
    "shape",
    "graph_type",
    "tf_function_call",
    "_ipl_stage_name",
    "_ipl_stage_cat",
)
WELL_KNOWN_STATS = INT_STATS + UINT_STATS + STR_STATS
# Well-known stats that sit on few events (step markers, producer/consumer ends, XLA
# launches on host lines): kept only as rows of ``Plane.stats``. Readers get their typed
# column, made for that read, from ``xspace.event_stats.typed_column``. As event columns
# they cost 1-9 B per event of every plane (a missing mask, values, codes) for a few
# thousand rows: a third of a preprocessed host plane.
ROW_STATS = (
    "step_num",
    "_r",
    "_pt",
    "_p",
    "_ct",
    "_c",
    "program_id",
    "step_name",
    "hlo_op",
    "hlo_module",
)
# The well-known stats that are typed columns of every event table.
COLUMN_STATS = tuple(n for n in WELL_KNOWN_STATS if n not in ROW_STATS)

FLOW_STAT = "flow"
GROUP_ID = "group_id"
STEP_NAME = "step_name"
STEP_NUM = "step_num"
ITER_NUM = "iter_num"
STEP_ID = "id"
ROOT_LEVEL = "_r"
PRODUCER_TYPE = "_pt"
PRODUCER_ID = "_p"
CONSUMER_TYPE = "_ct"
CONSUMER_ID = "_c"
IS_ASYNC = "_a"
CORRELATION_ID = "correlation_id"
TF_OP = "tf_op"
HLO_OP = "hlo_op"
HLO_PROTO = "hlo_proto"
HLO_PROTO_STAT = "Hlo Proto"  # on /host:metadata event metadata: bytes of xla.HloProto
PROCESS_ID = "process_id"
KERNEL_DETAILS = "kernel_details"
MEMCPY_DETAILS = "memcpy_details"

# Memory allocator events (docs/conversion.md §2.3, §5.8).
ALLOCATOR_NAME = "allocator_name"
INDEX_ON_HOST = "index_on_host"
DEVICE_ORDINAL = "device_ordinal"
BYTES_RESERVED = "bytes_reserved"
BYTES_ALLOCATED = "bytes_allocated"
BYTES_AVAILABLE = "bytes_available"
FRAGMENTATION = "fragmentation"
PEAK_BYTES_IN_USE = "peak_bytes_in_use"
REQUESTED_BYTES = "requested_bytes"
ALLOCATION_BYTES = "allocation_bytes"
ADDRESS = "addr"
REGION_TYPE = "region_type"
DATA_TYPE = "data_type"
TENSOR_SHAPE = "shape"

# tf.data iterator events (docs/conversion.md §5.9).
ELEMENT_ID = "element_id"
PARENT_ID = "parent_id"

# Stats hidden from the trace viewer.
INTERNAL_STATS = frozenset(
    {"_pt", "_p", "_ct", "_c", "_r", "flops", "program_id", "symbol_id", "_object"}
)

# --- event names ------------------------------------------------------------
MEMORY_ALLOCATION = "MemoryAllocation"
MEMORY_DEALLOCATION = "MemoryDeallocation"
ITERATOR_PREFIX = "Iterator::"
DEVICE_INPUT_PIPELINE_SECOND_ITERATOR = "Iterator::Prefetch::Generator"
# tf.data stages whose producer/consumer events tie an iterator to its async input.
TF_DATA_ASYNC_STAGES = (
    "Prefetch",
    "ParallelInterleave",
    "ParallelMap",
    "MapAndBatch",
    "ParseExample",
    "ParallelBatch",
)
# Events never shown in traces (docs/conversion.md §2.4).
INTERNAL_EVENTS = frozenset(
    {
        MEMORY_ALLOCATION,
        MEMORY_DEALLOCATION,
        "ParallelInterleaveInitializeInput",
    }
    | {f"{stage}{side}" for stage in TF_DATA_ASYNC_STAGES for side in ("Produce", "Consume")}
)

# --- host event types used by preprocessing (docs/conversion.md §2.4, §3) -----------------
TRACE_CONTEXT = "TraceContext"
FUNCTION_RUN = "FunctionRun"
SESSION_RUN = "SessionRun"
RUN_GRAPH = "RunGraph"
EXECUTOR_STATE_PROCESS = "ExecutorState::Process"
EAGER_EXECUTE = "EagerExecute"
ITERATOR_GET_NEXT_OP = "IteratorGetNextOp::DoCompute"
ITERATOR_GET_NEXT_AS_OPTIONAL_OP = "IteratorGetNextAsOptionalOp::DoCompute"
TF_DATA_CAPTURED_FUNCTION_RUNS = (
    "InstantiatedCapturedFunction::Run",
    "InstantiatedCapturedFunction::RunWithBorrowedArgs",
    "InstantiatedCapturedFunction::RunInstantiated",
    "InstantiatedCapturedFunction::RunAsync",
)
LOOP_OPS = ("WhileOp-EvalCond", "WhileOp-StartBody", "ForOp", "ParallelForOp", "ForeverOp")
# Roots whose group name is just the step number (no step_name stat added).
IMPLICIT_ROOT_EVENTS = (FUNCTION_RUN, SESSION_RUN, RUN_GRAPH, EXECUTOR_STATE_PROCESS)
BATCHING_SESSION_RUN = "BatchingSessionRun"
PROCESS_BATCH = ("ProcessBatch", "OrbaxServing::ProcessBatch")
THREADPOOL_START_REGION = "ThreadpoolListener::StartRegion"
THREADPOOL_STOP_REGION = "ThreadpoolListener::StopRegion"
THREADPOOL_REGION = "ThreadpoolListener::Region"

# Stats added or read by preprocessing.
CONSUMER_PID = "_pid"
GRAPH_TYPE = "graph_type"
IS_FUNC = "is_func"
IS_EAGER = "is_eager"
DEVICE_ID = "device_id"
HLO_MODULE = "hlo_module"
PROGRAM_ID = "program_id"
SOURCE = "source"
RUN_ID = "run_id"
NUM_LAUNCHES = "num_launches"
MAX_LAUNCH_TIME_US = "max_launch_time_us"
AVG_LAUNCH_TIME_US = "avg_launch_time_us"

# TraceMe 2.0 context types (docs/conversion.md §3.2): value -> flow category name.
CONTEXT_TYPE_LEGACY = 1
CONTEXT_TYPE_GPU_LAUNCH = 9
CONTEXT_TYPE_THREADPOOL_EVENT = 15
CONTEXT_TYPE_MAX = 17
