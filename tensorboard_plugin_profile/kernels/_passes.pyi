# Interface of the optional compiled passes (_passes.c), which mypy cannot read.
def sweep_top(group: object, kind: object, start: object, num_types: int, out: object, /) -> None:
    """Highest open type after each sorted boundary, written into ``out``."""

def tracker_top(group: object, kind: object, start: object, num_types: int, out: object, /) -> None:
    """Upstream's priority tracker after each sorted boundary, written into ``out``."""

def stable_order(key: object, is_signed: bool, out: object, scratch: object = None, /) -> None:
    """Stable argsort of 8-byte integer keys (radix), positions written into ``out``."""

def order_runs(order: object, key: object, then: tuple, /) -> None:
    """Each run of equal ``key[order]`` put in order of ``then`` in turn, then position."""

def previous_enclosing(run: object, end: object, out: object, /) -> None:
    """Latest earlier event of the run ending at or after each event, written into ``out``."""

def first_free_levels(begin: object, end: object, out: object, /) -> None:
    """Greedy lanes of events sorted by begin, written into ``out``."""

def dropping_stack(
    line: object, begin: object, end: object, kept: object, parent: object, /
) -> None:
    """torch-tb-profiler's stack over sorted activities: ``kept`` and ``parent`` written."""

def step_breakdown(
    key: object,
    layout: object,
    win_group: object,
    win_begin: object,
    win_end: object,
    per_type: object,
    present: object,
    total: object,
    /,
) -> None:
    """Per step window and type: tracked time inside it, in all, and presence
    (see analysis/steps/sweep.py)."""

def pack_boundaries(
    group: object,
    begin: object,
    end: object,
    kind: object,
    num_types: int,
    key: object,
    layout: object,
    /,
) -> bool:
    """Sortable int64 keys of span boundaries into ``key``; False when they do not fit."""
