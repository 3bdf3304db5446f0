"""The compiled XLA programs of a profile: HLO modules read from the XSpace.

- ``modules``: the ``HloProto`` of every program, from the ``/host:metadata`` plane;
- ``shapes``: shape text and byte sizes as XLA prints and counts them;
- ``buffers``: the memory viewer's replay of the buffer assignment;
- ``printer``: the module's HLO text;
- ``graph``: the neighbourhood of an op, for the graph viewer page;
- ``attribution``: per-op facts (category, expression, framework op, source).
"""
