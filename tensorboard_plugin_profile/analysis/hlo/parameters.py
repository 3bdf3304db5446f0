"""The parameters of each XLA program: the entry computation's ``parameter`` ops.

A jitted JAX function's arguments (weights, optimizer state, the batch) become the
entry computation's parameters; the HLO metadata's ``op_name`` holds the source
name JAX gave each one (``p['conv1']``, ``x``), which is the name we show; where it
is empty, the HLO name (``p__conv1__.1``). The scope is the name without its last
key (``p`` for ``p['conv1']``, ``params['dense']`` for ``params['dense']['kernel']``).

Which arguments are weights and which are data, the HLO does not say: every row is
an argument, and the tables group them by scope so the weights' tree stands out.

Usage::

    table = entry_parameters(space)   # DataFrame, one row per (program, parameter)
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from . import modules, shapes
from .costs import array_bytes

COLUMNS = ("program", "number", "name", "hlo_name", "scope", "shape", "dtype", "elements", "bytes")
# The last key of a pytree path: ['k'], [0] or .attr
_LAST_KEY = re.compile(r"(\[[^\[\]]*\]|\.[A-Za-z_][A-Za-z0-9_]*)$")


def scope_of(name: str) -> str:
    """``p['conv1']`` → ``p``; a TF-style ``a/b/w`` → ``a/b``; a bare name → ``""``."""
    match = _LAST_KEY.search(name)
    if match and match.start() > 0:
        return name[: match.start()]
    return name.rsplit("/", 1)[0] if "/" in name else ""


def entry_parameters(space: Any) -> pd.DataFrame:
    rows = []
    for program, proto in sorted(modules.parsed_modules(space).items()):
        rows += _program_parameters(program, proto.hlo_module)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _program_parameters(program: str, module: Any) -> list:
    entry = next((c for c in module.computations if c.id == module.entry_computation_id), None)
    if entry is None:
        return []
    rows = []
    for instruction in entry.instructions:
        if instruction.opcode != "parameter":
            continue
        shape = instruction.shape
        name = instruction.metadata.op_name or instruction.name
        rows.append(
            {
                "program": program,
                "number": int(instruction.parameter_number),
                "name": name,
                "hlo_name": instruction.name,
                "scope": scope_of(name),
                "shape": shapes.shape_text(shape, layout=False),
                "dtype": "tuple"
                if shapes.is_tuple(shape)
                else shapes.type_name(shape.element_type),
                "elements": _elements(shape),
                "bytes": array_bytes(shape),
            }
        )
    return sorted(rows, key=lambda r: r["number"])


def _elements(shape: Any) -> int:
    if shapes.is_tuple(shape):
        return sum(_elements(s) for s in shape.tuple_shapes)
    return shapes.num_elements(shape)
