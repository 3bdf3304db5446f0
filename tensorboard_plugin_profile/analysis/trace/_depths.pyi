# Interface of the optional compiled trace row depths (_depths.c), which mypy cannot read.
def row_depths(bounds: object, begin: object, end: object, depth: object, /) -> int:
    """Nesting depth per event of begin-sorted rows into ``depth``; returns re-laid rows."""
