# Interface of the optional compiled reader (_fastdecode.c), which mypy cannot read.
def decode(data: bytes, max_events: int = -1, threads: int = 0, /) -> dict:
    """Reads serialized XSpace bytes into flat columns (the final layout of ``rawform.py``)."""
