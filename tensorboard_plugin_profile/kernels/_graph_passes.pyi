# Interface of the optional compiled graph passes (_graph_passes.c), which mypy cannot read.
def line_forest(
    line: object,
    begin: object,
    duration: object,
    skip: object,
    parent: object,
    stop: object,
    threads: int = 1,
    window: int = 65536,
    /,
) -> int:
    """Upstream's per-line nesting stack: int32 parent and stop of each row, into the outputs;
    the number of parts the output was made in."""

def flood(
    stop: object,
    xnodes: object,
    xptr: object,
    xidx: object,
    xbits: object,
    order: object,
    values: object,
    proper: bool,
    unreached: int,
    label: object,
    flooded: object,
    crossings: bool,
    /,
) -> bytes:
    """Seeds in turn label what they reach first; returns the crossing (outer, inner) pairs."""

def csr(keys: object, values: object, n: int, ptr: object, out: object, /) -> None:
    """Stable counting sort of ``values`` by key into ``ptr`` / ``out``."""

def rows_by_code(
    codes: object, slot: object, ptr: object, out: object, threads: int = 1, /
) -> int:
    """Rows of each wanted code grouped by slot: counts into ``ptr`` (``out`` None), then the
    rows into ``out``; returns the number of rows."""
