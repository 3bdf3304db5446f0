"""The tool registry: every tool's name, how it treats hosts, and its module.

A tool module under ``tools/`` follows ``ToolModule``::

    def convert(hosts: HostSpaces, params: Params) -> ToolAnswer

returning a JSON-serialisable dict or list, JSON bytes, or a ``ToolOutput`` for
streamed or non-JSON data, or raising ``NotApplicable`` with the reason when the
profile has nothing for it. ``hosts`` holds (host name, decoded Space) in host
order; ``params`` the query parameters. ``tests/test_typecheck.py`` has mypy check
every registered module against the protocol.

Only tools that are built are registered; ``run_tools`` lists nothing else.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import (
    Any,
    Callable,
    Iterable,
    List,
    Mapping,
    Optional,
    Protocol,
    Tuple,
    Union,
    cast,
)

from ..common.formats import PROFILER_HOOK, PYTORCH, XSPACE
from ..xspace.model import Space
from . import applies

# How a tool treats the host selector (docs/http_api.md, "Hosts").
HOSTS_EACH_OR_ALL = "each_or_all"  # one host, or ALL_HOSTS (combined)
HOSTS_COMBINED = "combined"  # ALL_HOSTS only when the session has several hosts
HOSTS_SINGLE = "single"  # exactly one host
HOSTS_TRACE = "trace"  # one host, a `hosts=` list, or all of them

ALL_HOSTS = "ALL_HOSTS"


@dataclasses.dataclass(frozen=True)
class ToolOutput:
    """Non-default tool output: streamed chunks and/or another content type."""

    content_type: str = "application/json"
    chunks: Optional[Callable[[], Iterable[bytes]]] = None
    json_obj: Any = None


HostSpaces = List[Tuple[str, Space]]
# (host name, HostSummary): what a merging tool reads of each host (analysis/host_summary.py).
HostSummaries = List[Tuple[str, Any]]
Params = Mapping[str, str]
ToolAnswer = Union[dict, list, bytes, ToolOutput]


class ToolModule(Protocol):
    """What a tool module provides (see the module docstring)."""

    def convert(self, hosts: HostSpaces, params: Params) -> ToolAnswer: ...


class MergingToolModule(ToolModule, Protocol):
    """A tool that merges hosts from their summaries (``Tool.from_summaries``)."""

    def reduce(self, summaries: HostSummaries, params: Params) -> ToolAnswer: ...


@dataclasses.dataclass(frozen=True)
class Tool:
    name: str
    module: str
    hosts_mode: str
    # Whether run_tools lists the tool for a session, from its first host's planes.
    listed_for: Callable[[Any], bool] = lambda space: applies.is_xspace(space)
    aliases: tuple = ()
    # The query parameters ``convert`` reads: the only ones it is given, and the
    # only ones in its result's cache key (a junk parameter must not bust the cache).
    params: tuple = ()
    # Whether ``reduce`` answers from per-host summaries (XSpace sessions of several hosts:
    # the pod map, docs/pod_scale.md); ``convert`` then gives the same bytes from Spaces.
    from_summaries: bool = False
    # Whether that ``reduce`` also reads each host's details (``host_summary.Detailed``:
    # advice facts, op-record pieces, tf.data pipelines), computed on first use.
    with_details: bool = False
    # Whether ``convert`` reads one compiled program (``module_name``) of one host: a pod
    # session then decodes only the first host whose summary lists it.
    reads_one_module: bool = False
    # Whether answers are kept in the disk cache too, or only in memory: a tool whose
    # parameters take endless values (trace windows) would otherwise write an entry for
    # every request, while it answers one from memory in milliseconds anyway.
    disk_cached: bool = True
    # The input formats the tool reads (common/formats.py). Asked of a profile in another
    # format, the service answers ``NotApplicable`` naming the run's tools instead of
    # running it (an empty TensorFlow overview for a PyTorch trace said nothing true).
    formats: tuple = (XSPACE,)

    def relevant_params(self, params: Mapping[str, str]) -> dict:
        """The subset of ``params`` this tool reads, without empty values."""
        return {k: params[k] for k in self.params if params.get(k)}

    def convert(self, hosts: HostSpaces, params: Params) -> ToolAnswer:
        module = cast(ToolModule, importlib.import_module(f"{__name__}.{self.module}"))
        return module.convert(hosts, params)

    def reduce(self, summaries: HostSummaries, params: Params) -> ToolAnswer:
        module = importlib.import_module(f"{__name__}.{self.module}")
        return cast(MergingToolModule, module).reduce(summaries, params)


# What a trace_viewer@ request may ask (docs/trace_viewer.md): a window, a search or details.
TRACE_QUERY_PARAMS = (
    "format",
    "start_time_ms",
    "end_time_ms",
    "resolution",
    "pids",
    "tids",
    "max_events",
    "max_flows",
    "search",
    "search_regex",
    "max_results",
    "details",
)

ALL_FORMATS = (XSPACE, PROFILER_HOOK, PYTORCH)
_OP_RECORD_FORMATS = ALL_FORMATS  # what analysis/ops/attribution.py reads

# Tools whose pod-session answer merges each host's summary and details.
_DETAILED: dict = {"from_summaries": True, "with_details": True}
# tfprof's options of the tree views (tools/tree_options.py; kept here, where every
# tool's parameters are, so listing the registry imports no pandas).
TREE_PARAMS = (
    "select",
    "order_by",
    "max_depth",
    "min_micros",
    "show_name_regexes",
    "hide_name_regexes",
    "account_type_regexes",
    "format",
)
_TREE: dict = dict(_DETAILED, params=TREE_PARAMS)

# In display order (upstream's, docs/http_api.md "Tool list"): ``TOOL_ORDER`` is this order.
_REGISTERED = (
    Tool("overview_page", "overview_page", HOSTS_EACH_OR_ALL, from_summaries=True),
    Tool(
        "trace_viewer",
        "trace_viewer",
        HOSTS_TRACE,
        listed_for=applies.any_format,
        params=("size",),
        formats=ALL_FORMATS,
    ),
    Tool(
        "trace_viewer@",
        "trace_viewer_at",
        HOSTS_TRACE,
        listed_for=applies.any_format,
        params=TRACE_QUERY_PARAMS,
        formats=ALL_FORMATS,
        disk_cached=False,
    ),
    Tool(
        "graph_viewer",
        "graph_viewer",
        HOSTS_COMBINED,
        listed_for=applies.has_hlo_modules,
        params=("module_name", "type", "node_name", "graph_width"),
        reads_one_module=True,
    ),
    Tool(
        "op_profile",
        "op_profile",
        HOSTS_EACH_OR_ALL,
        listed_for=applies.has_xla_ops,
        aliases=("hlo_op_profile",),
        params=("group_by", "view"),
        from_summaries=True,
    ),
    Tool(
        "input_pipeline_analyzer",
        "input_pipeline_analyzer",
        HOSTS_EACH_OR_ALL,
        aliases=("input_pipeline",),
        from_summaries=True,
    ),
    Tool(
        "kernel_stats",
        "kernel_stats",
        HOSTS_EACH_OR_ALL,
        listed_for=applies.has_gpu,
        from_summaries=True,
    ),
    Tool(
        "memory_profile",
        "memory_profile",
        HOSTS_SINGLE,
        listed_for=applies.has_allocator_events,
        params=("view", "memory_id"),
    ),
    Tool(
        "memory_viewer",
        "memory_viewer",
        HOSTS_COMBINED,
        listed_for=applies.has_hlo_modules,
        params=("module_name", "memory_space", "view"),
        reads_one_module=True,
    ),
    Tool(
        "roofline_model",
        "roofline_model",
        HOSTS_EACH_OR_ALL,
        listed_for=applies.has_xla_ops,
        params=("peak_gflops", "peak_gib_s"),
        from_summaries=True,
    ),
    Tool("pod_viewer", "pod_viewer", HOSTS_COMBINED, from_summaries=True),
    Tool(
        "framework_op_stats",
        "framework_op_stats",
        HOSTS_EACH_OR_ALL,
        listed_for=applies.has_framework_ops,
        aliases=("tensorflow_stats",),
        formats=(XSPACE, PROFILER_HOOK),
        from_summaries=True,
    ),
    Tool(
        "hlo_stats",
        "hlo_stats",
        HOSTS_EACH_OR_ALL,
        listed_for=applies.has_xla_ops,
        aliases=("hlo_op_stats",),
        from_summaries=True,
    ),
    Tool(
        "model_view",
        "model_view",
        HOSTS_COMBINED,
        listed_for=applies.has_model,
        formats=ALL_FORMATS,
    ),
    Tool(
        "tf_data_bottleneck_analysis",
        "tf_data_bottleneck_analysis",
        HOSTS_COMBINED,
        listed_for=applies.has_tf_data,
        **_DETAILED,
    ),
    # The advisor's links name the run.
    Tool(
        "advisor",
        "advisor",
        HOSTS_EACH_OR_ALL,
        listed_for=applies.any_format,
        params=("run",),
        formats=ALL_FORMATS,
        **_DETAILED,
    ),
    Tool(
        "op_types",
        "op_types",
        HOSTS_EACH_OR_ALL,
        listed_for=applies.has_op_records,
        formats=_OP_RECORD_FORMATS,
        **_TREE,
    ),
    Tool(
        "scope_view",
        "scope_view",
        HOSTS_EACH_OR_ALL,
        listed_for=applies.has_op_records,
        formats=_OP_RECORD_FORMATS,
        **_TREE,
    ),
    Tool(
        "code_view",
        "code_view",
        HOSTS_EACH_OR_ALL,
        listed_for=applies.has_python_sources,
        formats=_OP_RECORD_FORMATS,
        **_TREE,
    ),
    # Chrome-trace profiles (chrome_trace/): PyTorch analyses, ProfilerHook tensor memory.
    Tool(
        "pytorch_overview",
        "pytorch_overview",
        HOSTS_SINGLE,
        listed_for=applies.is_pytorch,
        formats=(PYTORCH,),
    ),
    Tool(
        "pytorch_operators",
        "pytorch_operators",
        HOSTS_SINGLE,
        listed_for=applies.is_pytorch,
        params=("group_by", "op_name", "input_shape", "scope"),
        formats=(PYTORCH,),
    ),
    Tool(
        "pytorch_kernels",
        "pytorch_kernels",
        HOSTS_SINGLE,
        listed_for=applies.has_pytorch_kernels,
        formats=(PYTORCH,),
    ),
    Tool(
        "pytorch_distributed",
        "pytorch_distributed",
        HOSTS_COMBINED,
        listed_for=applies.is_distributed_pytorch,
        formats=(PYTORCH,),
    ),
    Tool(
        "tensor_memory",
        "tensor_memory",
        HOSTS_SINGLE,
        listed_for=applies.has_tensor_memory,
        formats=(PROFILER_HOOK,),
    ),
    Tool(
        "pytorch_memory",
        "pytorch_memory",
        HOSTS_SINGLE,
        listed_for=applies.has_pytorch_memory,
        formats=(PYTORCH,),
    ),
)

TOOLS = {tool.name: tool for tool in _REGISTERED}
ALIASES = {alias: tool.name for tool in _REGISTERED for alias in tool.aliases}

# The registry's order; unknown names sort after, by name.
TOOL_ORDER = tuple(tool.name for tool in _REGISTERED)


def canonical_name(tag: str) -> Optional[str]:
    """The registered name for a tag, accepting aliases and a trailing ``^``."""
    name = tag[:-1] if tag.endswith("^") else tag
    name = ALIASES.get(name, name)
    return name if name in TOOLS else None


def sort_tools(names: Iterable[str]) -> list:
    rank = {name: i for i, name in enumerate(TOOL_ORDER)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


def listed_tools(space: Any) -> list:
    """The tools ``run_tools`` lists for a session whose first host decodes to ``space``,
    in display order. Computed where the host is decoded: in the server for one host, in
    the worker that summarises it for a pod session (``pod/host_map.py``)."""
    names = [t.name for t in _REGISTERED if t.listed_for(space)]
    if "trace_viewer@" in names:
        # As upstream: the page opens the windowed viewer; the complete JSON stays at /data.
        names.remove("trace_viewer")
    return sort_tools(names)
