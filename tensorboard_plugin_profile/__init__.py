"""TensorBoard Profile plugin: turns profiler XSpace files into performance tools.

Layers (see docs/design in the repository): ``logdir`` finds files, ``xspace``
decodes them into columns, ``analysis`` and ``tools`` compute each tool's data,
``service`` caches and serves it, ``plugin`` / ``server`` speak HTTP,
``capture`` asks running profiler servers for new profiles.
"""

__version__ = "0.1.0"
