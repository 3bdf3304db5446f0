"""The descriptor pool our generated protobuf modules register into.

A private pool, not protobuf's default one: TensorFlow registers the same
message names (tensorflow.profiler.XSpace, ...) from its own .proto files, and
two registrations of one name in one pool fail at import time.
"""

from google.protobuf import descriptor_pool

POOL = descriptor_pool.DescriptorPool()
