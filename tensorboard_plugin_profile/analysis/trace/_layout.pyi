# Interface of the optional compiled trace index passes (_layout.c), which mypy cannot read.
def row_order(
    line: object,
    line_row: object,
    begin: object,
    duration: object,
    num_rows: int,
    order: object,
    bounds: object,
    threads: int = 1,
    /,
) -> bool:
    """Stable counting sort by row into the outputs; True when rows are then time sorted."""

def lay_out(
    bounds: object,
    begin: object,
    duration: object,
    source: object,
    keys_per_row: object,
    scratch: object,
    threads: int = 1,
    min_split: int = ...,
    window: int = ...,
    /,
) -> tuple[int, bytes, int] | None:
    """Depths, then source in (row, depth, begin) order, in place (source holds the row
    order on entry; scratch: int32, at least the largest row): (re-laid rows, int64 event
    counts per (row, depth) key, rows laid out in parts on ``threads`` threads: those of
    at least min_split events), None on negative durations."""

def break_cuts(
    begin: object,
    duration: object,
    source: object,
    seg_bounds: object,
    size: int,
    threads: int = 1,
    /,
) -> bytes:
    """int32 positions whose break key is >= size (times per event, read through source)."""

def marked_positions(source: object, events: object, threads: int = 1, /) -> bytes:
    """int32 positions p whose source[p] is one of events, in order."""
