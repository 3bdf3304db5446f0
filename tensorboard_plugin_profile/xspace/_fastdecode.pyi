# Interface of the optional compiled reader (_fastdecode.c), which mypy cannot read.
from typing import Optional

def decode(
    data: bytes, max_events: int = -1, threads: int = 0, wide_ids: bool = False, /
) -> Optional[dict]:
    """Reads serialized XSpace bytes into flat columns (the final layout of ``rawform.py``);
    metadata ids int32 unless ``wide_ids`` (None: some id needs ``wide_ids``)."""
