# Interface of the optional compiled reader (_decode.c), which mypy cannot read.
from typing import Any, Callable, Optional, Union

def decode(
    data: Union[bytes, bytearray, memoryview],
    max_events: int = -1,
    threads: int = 0,
    discard: bool = False,
    arrived: Any = None,
    alloc: Optional[Callable[[int], Any]] = None,
    /,
) -> dict:
    """Reads serialized XSpace bytes into flat columns (the final layout of ``rawform.py``);
    metadata ids int32, or int64 in every plane when some id needs it. ``discard``: the
    buffer's pages may be handed back to the OS as the walk passes them (only for anonymous
    memory that nothing else reads: its content is zeros afterwards). ``alloc(nbytes)``:
    where the columns go (a writable buffer; bytearrays without it)."""
