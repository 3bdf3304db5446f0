# Interface of the optional compiled PlaneEdit passes (_edit_passes.c), which mypy cannot read.
def insertion_points(
    line: object,
    begin: object,
    duration: object,
    new_line: object,
    new_begin: object,
    new_duration: object,
    out: object,
    /,
) -> bool:
    """Where each new event goes among old events sorted per line; False if they are not."""

def insert_rows(old: object, at: object, values: object, out: object, threads: int = 1, /) -> None:
    """``numpy.insert`` of non-decreasing positions, written into ``out`` by ``threads``."""

def shifted_rows(at: object, out: object, threads: int = 1, /) -> None:
    """Old rows' rows after the insertion, written into ``out`` by ``threads``."""

def stable_dest(keys: object, n: int, dest: object, /) -> None:
    """Stable counting sort of keys in [0, n): each row's place; keys sorted in place."""

def mark_used(codes: object, used: object, threads: int = 1, /) -> None:
    """Sets used[c] = 1 for every code c."""

def recode(codes: object, table: object, out: object, /) -> None:
    """out[i] = table[codes[i]]."""

def insert_recoded(
    codes: object, table: object, at: object, values: object, out: object, threads: int = 1, /
) -> None:
    """insert_rows of table[codes], written into ``out`` by ``threads``."""
