"""Generated protobuf and gRPC modules; regenerate with `python protos/generate.py`."""
