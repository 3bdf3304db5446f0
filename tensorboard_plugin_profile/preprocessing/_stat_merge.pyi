# Interface of the optional compiled stats-table merge (_stat_merge.c), which mypy cannot read.
def count_rows(events: object, keep: object, new_row: object, counts: object, /) -> None:
    """counts[e + 1] += 1 for every kept row's (moved) event e."""

def place_rows(part: tuple, outs: tuple, int_columns: tuple, /) -> None:
    """One part's rows written at counts[e]++ into the merged columns (and int columns)."""

def merge_rows(parts: tuple, outs: tuple, int_columns: tuple, n: int, /) -> bool:
    """The parts merged in order when each one's events ascend (else False, nothing written)."""
