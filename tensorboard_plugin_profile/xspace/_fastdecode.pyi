# Interface of the optional compiled reader (_fastdecode.c), which mypy cannot read.
def decode(data: bytes, /) -> dict:
    """Reads serialized XSpace bytes into flat columns (the raw form of ``wire.read``)."""
