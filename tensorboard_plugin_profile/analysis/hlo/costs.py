"""FLOPs and bytes of an HLO instruction, computed from the shapes in its HloProto.

Profiles of XLA on a CPU (and most GPU ones) carry no ``flops`` or ``bytes_accessed``
stats, so every FLOP and bandwidth column read 0. The HLO says enough to count them
by the usual formulas (docs/model_view.md, "FLOPs and bytes"):

- ``dot``: 2 x output elements x contracted size (= 2*M*N*K*batch);
- ``convolution``: 2 x output elements x kernel spatial size x the kernel's input
  feature size (the input features / feature groups);
- ``reduce``: the elements of the reduced inputs; ``reduce-window``: output elements x
  window size;
- elementwise arithmetic (``add``, ``exponential``, ``compare``, ...): output elements;
- data movement (copy, transpose, broadcast, slice, ...): 0;
- ``fusion``, ``call``: the sum over the called computation; ``while``: one pass of
  its condition and body (the trip count is not in the HLO, so this is a lower bound).

Bytes are what the op reads and writes as XLA's cost analysis counts them at the top
level: the operand arrays plus the output arrays (tuple leaves, no pointers).

Costs are computed once per distinct instruction of a program, never per event.

Usage::

    costs = ModuleCosts(hlo_proto.hlo_module)
    costs.flops(instruction), costs.bytes_accessed(instruction)
"""

from __future__ import annotations

from typing import Any, Dict

from . import shapes

# Opcodes that do one floating-point (or integer) operation per output element.
ELEMENTWISE = frozenset(
    """abs add and atan2 cbrt ceil clamp compare complex cosine divide erf exponential
    exponential-minus-one floor imag is-finite log log-plus-one logistic maximum minimum
    multiply negate not or popcnt power real remainder round-nearest-afz round-nearest-even
    rsqrt select shift-left shift-right-arithmetic shift-right-logical sign sine sqrt
    subtract tan tanh xor""".split()
)
# Computations nested deeper than this (XLA's are a few levels) count 0: a hostile
# HloProto's chain of thousands must not exhaust the stack.
MAX_CALL_DEPTH = 64
# Opcodes whose called computations run once per op (their FLOPs are the callees').
_CALLS = frozenset({"fusion", "call", "while", "conditional", "async-start"})


def array_bytes(shape: Any) -> int:
    """Bytes of the arrays in ``shape``: tuple leaves summed, no tuple pointers."""
    if shapes.is_tuple(shape):
        return sum(array_bytes(s) for s in shape.tuple_shapes)
    if shape.element_type in (shapes.hlo_pb2.TOKEN, shapes.hlo_pb2.OPAQUE_TYPE):
        return 0
    return shapes.num_elements(shape) * shapes.element_bytes(shape.element_type)


def _elements(shape: Any) -> int:
    if shapes.is_tuple(shape):
        return sum(_elements(s) for s in shape.tuple_shapes)
    return shapes.num_elements(shape)


def _product(sizes: Any) -> int:
    out = 1
    for size in sizes:
        out *= int(size)
    return out


class ModuleCosts:
    """FLOPs and bytes of the instructions of one HLO module, memoised per instruction."""

    def __init__(self, module: Any):
        self.computations = {int(c.id): c for c in module.computations}
        self.instructions = {int(i.id): i for c in module.computations for i in c.instructions}
        self._flops: Dict[int, int] = {}
        self._computation_flops: Dict[int, int] = {}
        self._depth = 0

    def operand(self, instruction: Any, number: int) -> Any:
        return self.instructions.get(int(instruction.operand_ids[number]))

    def bytes_accessed(self, instruction: Any) -> int:
        """Operand arrays read plus output arrays written."""
        total = array_bytes(instruction.shape)
        for operand_id in instruction.operand_ids:
            operand = self.instructions.get(int(operand_id))
            if operand is not None:
                total += array_bytes(operand.shape)
        return total

    def flops(self, instruction: Any) -> int:
        key = int(instruction.id)
        if key not in self._flops:
            self._flops[key] = self._instruction_flops(instruction)
        return self._flops[key]

    def computation_flops(self, computation_id: int) -> int:
        if computation_id not in self._computation_flops:
            self._computation_flops[computation_id] = 0  # a cycle counts nothing twice
            computation = self.computations.get(computation_id)
            total = 0
            if computation is not None and self._depth < MAX_CALL_DEPTH:
                self._depth += 1
                try:
                    total = sum(self.flops(i) for i in computation.instructions)
                finally:
                    self._depth -= 1
            self._computation_flops[computation_id] = total
        return self._computation_flops[computation_id]

    def _instruction_flops(self, instruction: Any) -> int:
        opcode = instruction.opcode
        if opcode == "dot":
            return self._dot(instruction)
        if opcode == "convolution":
            return self._convolution(instruction)
        if opcode == "reduce":
            # Operands are the inputs, then as many init values.
            inputs = len(instruction.operand_ids) // 2 or 1
            operands = [self.operand(instruction, i) for i in range(inputs)]
            return sum(_elements(o.shape) for o in operands if o is not None)
        if opcode == "reduce-window":
            window = _product(d.size for d in instruction.window.dimensions)
            return _elements(instruction.shape) * window
        if opcode in ELEMENTWISE:
            return _elements(instruction.shape)
        if opcode in _CALLS:
            return sum(self.computation_flops(int(c)) for c in instruction.called_computation_ids)
        return 0

    def _dot(self, instruction: Any) -> int:
        lhs = self.operand(instruction, 0) if instruction.operand_ids else None
        if lhs is None:
            return 0
        numbers = instruction.dot_dimension_numbers
        dims = lhs.shape.dimensions
        contracted = _product(dims[d] for d in numbers.lhs_contracting_dimensions if d < len(dims))
        return 2 * _elements(instruction.shape) * contracted

    def _convolution(self, instruction: Any) -> int:
        kernel = self.operand(instruction, 1) if len(instruction.operand_ids) > 1 else None
        if kernel is None:
            return 0
        numbers = instruction.convolution_dimension_numbers
        dims = kernel.shape.dimensions
        spatial = _product(dims[d] for d in numbers.kernel_spatial_dimensions if d < len(dims))
        feature = numbers.kernel_input_feature_dimension
        input_features = int(dims[feature]) if feature < len(dims) else 1
        return 2 * _elements(instruction.shape) * spatial * input_features
