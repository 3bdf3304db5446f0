"""A module's HLO text, printed as XLA prints it (what the graph viewer's text shows).

``short`` text is XLA's short-parsable form (operand names only, no metadata), which
upstream's ``graph_viewer`` returns for ``type=short_txt``; ``long`` text adds operand
shapes and each instruction's metadata (op name, source).

Computations are printed callees first (a post-order walk from every computation
no one calls), scheduled computations in their schedule's order.

Usage::

    text = module_text(hlo_proto.hlo_module)              # short form
    text = module_text(hlo_proto.hlo_module, long=True)
"""

from __future__ import annotations

from typing import Any

from . import shapes
from .op_text import attributes_text, frontend_attributes_text, literal_text


class ModuleIndex:
    """Computations and instructions of a module by id, in print order."""

    def __init__(self, module: Any):
        self.module = module
        self.computations = {int(c.id): c for c in module.computations}
        self.instructions = {int(i.id): i for c in module.computations for i in c.instructions}
        self.computation_of = {int(i.id): c for c in module.computations for i in c.instructions}

    def sequence(self, computation: Any) -> list:
        """Instructions of a computation: schedule order when scheduled, else as stored."""
        scheduled = self.module.schedule.sequences.get(int(computation.id))
        if scheduled is not None and scheduled.instruction_ids:
            return [
                self.instructions[i] for i in scheduled.instruction_ids if i in self.instructions
            ]
        return list(computation.instructions)

    def post_order(self) -> list:
        called = {
            int(cid)
            for c in self.module.computations
            for i in c.instructions
            for cid in i.called_computation_ids
        }
        order: list = []
        seen: set = set()

        def visit(computation: Any) -> None:
            seen.add(int(computation.id))
            for instruction in computation.instructions:
                for cid in instruction.called_computation_ids:
                    callee = self.computations.get(int(cid))
                    if callee is not None and int(cid) not in seen:
                        visit(callee)
            order.append(computation)

        for computation in self.module.computations:
            if int(computation.id) not in called and int(computation.id) not in seen:
                visit(computation)
        return order

    def name(self, instruction_id: int) -> str:
        instruction = self.instructions.get(int(instruction_id))
        return instruction.name if instruction is not None else f"%{instruction_id}"

    def computation_name(self, computation_id: int) -> str:
        computation = self.computations.get(int(computation_id))
        return computation.name if computation is not None else f"computation{computation_id}"


def module_text(module: Any, long: bool = False) -> str:
    index = ModuleIndex(module)
    parts = [header(module, index)]
    for computation in index.post_order():
        parts.append(computation_text(index, computation, long))
    return "\n\n".join(parts) + "\n\n"


def header(module: Any, index: ModuleIndex) -> str:
    text = f"HloModule {module.name}"
    if module.schedule.sequences:
        text += ", is_scheduled=true"
    entry = index.computations.get(int(module.entry_computation_id))
    if entry is not None and entry.HasField("program_shape"):
        program = entry.program_shape
        params = ", ".join(
            (f"/*index={i}*/" if i and i % shapes.TUPLE_INDEX_EVERY == 0 else "")
            + shapes.shape_text(p)
            for i, p in enumerate(program.parameters)
        )
        text += f", entry_computation_layout={{({params})->{shapes.shape_text(program.result)}}}"
    if module.frontend_attributes.map:
        text += ", frontend_attributes=" + frontend_attributes_text(module.frontend_attributes)
    return text


def computation_text(index: ModuleIndex, computation: Any, long: bool) -> str:
    entry = int(computation.id) == int(index.module.entry_computation_id)
    lines = [("ENTRY " if entry else "") + computation.name + " {"]
    for instruction in index.sequence(computation):
        root = int(instruction.id) == int(computation.root_id)
        lines.append("  " + ("ROOT " if root else "") + instruction_text(index, instruction, long))
    lines.append("}")
    return "\n".join(lines)


def instruction_text(index: ModuleIndex, instruction: Any, long: bool = False) -> str:
    return (
        f"{instruction.name} = {shapes.shape_text(instruction.shape)} "
        f"{instruction.opcode}({operands_text(index, instruction, long)})"
        + attributes_text(index, instruction, long)
    )


def operands_text(index: ModuleIndex, instruction: Any, long: bool) -> str:
    opcode = instruction.opcode
    if opcode == "parameter":
        return str(instruction.parameter_number)
    if opcode == "constant":
        return literal_text(instruction.literal)
    names = []
    for operand_id in instruction.operand_ids:
        name = index.name(operand_id)
        if long:
            operand = index.instructions.get(int(operand_id))
            shape = shapes.shape_text(operand.shape) + " " if operand is not None else ""
            name = f"{shape}{name}"
        names.append(name)
    return ", ".join(names)
