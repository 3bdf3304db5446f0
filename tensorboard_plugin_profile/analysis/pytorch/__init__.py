"""Analyses of PyTorch profiler traces, as the retired torch-tb-profiler (0.4.3) made them.

``events.py`` classifies a trace's events (kernels, runtime calls, operators, steps, ...);
``ranges.py`` measures unions, intersections and differences of time ranges by sweeping;
``overview.py`` finds the steps and splits their time, ``kernels.py`` and ``operators.py``
aggregate device kernels and CPU operators, ``distributed.py`` compares workers. Every
function takes the decoded ``Space`` of one worker (or several) and returns frames.
"""
