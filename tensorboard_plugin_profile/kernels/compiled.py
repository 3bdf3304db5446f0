"""The one switch between a module's compiled twin and its pure-Python code.

A pass numpy cannot express in one step (a reader, a stack, a sweep) is written twice:
in Python, and in C in an extension named after that Python module (``passes.py`` and
``_passes.c``, ``xspace/decode.py`` and ``xspace/_decode.c``). The extensions are
optional (``setup.py`` builds them when there is a C compiler) and give identical
results, so every module asks the same two questions, here and nowhere else:

- ``load(__name__)``: the module's compiled twin, or None when it was not built (or does
  not import). Imported once; a failure is remembered.
- ``use_compiled(twin, pure_python, n, max_n)``: whether to call it now. An explicit
  ``pure_python`` argument decides first (tests run both paths with it); else
  ``TBPROF_PURE_PYTHON=1`` in the environment forces the pure-Python code of every
  module, read at each call so that it can be switched inside a process (tests that
  compare whole pipelines, users checking whether a wrong number comes from C); else
  the twin runs when it was built and the ``n`` rows it would see are at most ``max_n``
  (passes that keep row numbers in int32).
- ``pass_threads(n, threads)``: how many threads a pass that splits its work (over
  disjoint output ranges: the same bytes for any count) runs on ``n`` rows: one below
  ``PARALLEL_MIN_ROWS``, where starting a thread costs more than it saves; else one per
  core (at most ``MAX_PASS_THREADS``), or ``TBPROF_PASS_THREADS`` when set (1: never
  split). An explicit ``threads`` wins (tests force the split on small inputs with it).

Usage::

    _passes = compiled.load(__name__)  # in kernels/passes.py: kernels._passes, or None

    def sweep_top(group, kind, start, num_types, pure_python=None):
        if compiled.use_compiled(_passes, pure_python):
            _passes.sweep_top(group, kind, start, num_types, out)
"""

from __future__ import annotations

import importlib
import logging
import os
from types import ModuleType
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from typing import TypeGuard

logger = logging.getLogger(__name__)

PURE_PYTHON_ENV = "TBPROF_PURE_PYTHON"
PASS_THREADS_ENV = "TBPROF_PASS_THREADS"
DECODE_THREADS_ENV = "TBPROF_DECODE_THREADS"  # the compiled XSpace reader's workers
ANALYSIS_THREADS_ENV = "TBPROF_ANALYSIS_THREADS"  # the overview's analyses side by side
# Every setting of how many threads one process's work may use. A worker process given a
# share of the cores sets the ones the user did not (store/host_pool.py).
THREAD_ENVS = (PASS_THREADS_ENV, DECODE_THREADS_ENV, ANALYSIS_THREADS_ENV)
# Rows below which a splitting pass stays on one thread: a thread costs tens of µs to
# start, a pass over 256 Ki rows takes a millisecond or more.
PARALLEL_MIN_ROWS = 1 << 18
MAX_PASS_THREADS = 16  # kernels/_threads.h TBPROF_MAX_PARTS

_loaded: dict[str, Optional[ModuleType]] = {}


def twin_name(name: str) -> str:
    """The extension that is module ``name``'s compiled twin: for the module of ``passes.py``,
    the one built from ``_passes.c`` beside it."""
    package, _, module = name.rpartition(".")
    return f"{package}._{module}" if package else f"_{module}"


def load(name: str) -> Optional[ModuleType]:
    """The compiled twin of module ``name`` (pass ``__name__``), or None when it was not
    built or does not import; tried once per process."""
    if name not in _loaded:
        try:
            _loaded[name] = importlib.import_module(twin_name(name))
        except ImportError as e:  # built without a C compiler, or for another Python
            logger.debug("%s runs its pure-Python code: %s", name, e)
            _loaded[name] = None
    return _loaded[name]


def _pure_python_forced() -> bool:
    """Whether ``TBPROF_PURE_PYTHON`` asks for pure Python everywhere (set, and not 0)."""
    return os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


def use_compiled(
    twin: Optional[ModuleType],
    pure_python: Optional[bool] = None,
    n: int = 0,
    max_n: Optional[int] = None,
) -> TypeGuard[ModuleType]:
    """Whether to call ``twin`` (from ``load``) on ``n`` rows: it was built, pure Python
    is not asked for (``pure_python`` when given, else the environment), and ``n`` is at
    most ``max_n`` (None: any size)."""
    python_asked = _pure_python_forced() if pure_python is None else pure_python
    if twin is None or python_asked:
        return False
    return max_n is None or n <= max_n


def pass_threads(n: int, threads: Optional[int] = None) -> int:
    """Threads for a compiled pass over ``n`` rows that splits its work (see the module
    docstring): ``threads`` when given, else 1 below ``PARALLEL_MIN_ROWS``, else
    ``TBPROF_PASS_THREADS`` when set to a number, else one per core this process may use."""
    if threads is None:
        value = os.environ.get(PASS_THREADS_ENV, "")
        if n < PARALLEL_MIN_ROWS:
            threads = 1
        elif value.isdigit() and int(value) > 0:
            threads = int(value)
        else:
            threads = cores()
    return max(1, min(int(threads), MAX_PASS_THREADS))


def cores() -> int:
    """The cores this process may run on (its affinity where the platform tells)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
