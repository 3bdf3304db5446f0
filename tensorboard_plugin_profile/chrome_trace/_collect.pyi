# Interface of the optional compiled Chrome-trace scanner (_collect.c), which mypy cannot read.
def scan(
    text: str, pos: int, collector: object, max_chars: int = ..., threads: int = ..., /
) -> tuple[int, int]:
    """Adds the events it handles from ``text[pos:]`` to the collector, the window split
    across up to ``threads`` threads (same result for any); (new pos, count)."""
