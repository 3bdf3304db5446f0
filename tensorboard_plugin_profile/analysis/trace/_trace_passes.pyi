# Interface of the optional compiled trace index passes (_trace_passes.c), which mypy cannot read.
def row_order(
    line: object,
    line_row: object,
    begin: object,
    duration: object,
    num_rows: int,
    order: object,
    begin_t: object,
    end_t: object,
    bounds: object,
    /,
) -> bool:
    """Stable counting sort by row into the outputs; True when rows are then time sorted."""

def lay_out(
    order: object,
    bounds: object,
    base: object,
    begin_t: object,
    end_t: object,
    depth_t: object,
    name: object,
    source: object,
    begin: object,
    end: object,
    row: object,
    depth: object,
    name_out: object,
    positions: object,
    break_key: object,
    key_bounds: object,
    /,
) -> None:
    """Index columns in (row, depth, begin) order, written into the outputs."""
