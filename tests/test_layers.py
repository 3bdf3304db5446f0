"""The package tree is the pipeline: no package imports a later stage.

Stages, first to last (docs/architecture.md): a module may import its own package and any
package of an earlier stage, never one of the same stage or a later one. Imports inside
functions count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import pathlib

import pytest
from conftest import REPO

PACKAGE = REPO / "tensorboard_plugin_profile"
ROOT = "tensorboard_plugin_profile"

# Each set is one stage; the list runs from the first stage to the last.
STAGES = [
    {"__init__", "common", "protobuf", "demo"},
    {"kernels"},
    {"xspace"},
    {"chrome_trace"},
    {"preprocessing"},
    {"store", "capture"},
    {"analysis"},
    {"tools"},
    {"pod"},
    {"service"},
    {"api"},
    {"web"},
    {"__main__"},
]
# The package's own ``__init__`` is the public facade: it may hand out any stage lazily
# (``from tensorboard_plugin_profile import live``), and every stage may read its
# ``__version__``.
FACADE = PACKAGE / "__init__.py"
STAGE_OF = {name: i for i, stage in enumerate(STAGES) for name in stage}


def _top(module: str) -> str:
    """The top-level part of this package a dotted module name belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: pathlib.Path, text: str) -> list:
    """(line, imported module) for every import of this package in the file."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith(ROOT)]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                # ``from . import x``: x is the module imported when it is one
                names = [f"{target}.{a.name}" for a in node.names] if not node.module else [target]
                found += [(node.lineno, n) for n in names]
            elif node.module and node.module.split(".")[0] == ROOT:
                found.append((node.lineno, node.module))
    return found


def _sources() -> list:
    paths = sorted(p for p in PACKAGE.rglob("*.py") if "protobuf" not in p.parts)
    return [(p, p.read_text(encoding="utf-8")) for p in paths]


def _violations(sources: list) -> list:
    wrong = []
    for path, text in sources:
        if path == FACADE:
            continue
        mine = _top(_module_name(path))
        for line, target in _imports(path, text):
            theirs = _top(target)
            if theirs == mine or theirs not in STAGE_OF:
                continue  # own package, or a name of the top-level package (``__version__``)
            if STAGE_OF[theirs] >= STAGE_OF[mine]:
                wrong.append(f"{path.relative_to(REPO)}:{line} ({mine}) imports {target}")
    return wrong


def test_every_top_level_package_has_a_stage():
    tops = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()}
    tops = {t for t in tops if not t.startswith((".", "_")) or t in ("__init__", "__main__")}
    tops -= {"static", "py", "__pycache__"}
    tops = {t for t in tops if (PACKAGE / t).is_dir() or (PACKAGE / f"{t}.py").is_file()}
    assert tops <= set(STAGE_OF), f"give these a stage: {sorted(tops - set(STAGE_OF))}"


def test_no_package_imports_a_later_stage():
    assert _violations(_sources()) == []


def test_the_check_sees_a_violation():
    """The check itself can fail: kernels importing analysis, or store importing tools."""
    kernels = PACKAGE / "kernels" / "probe.py"
    store = PACKAGE / "store" / "probe.py"
    sources = [
        (kernels, "def f():\n    from ..analysis import environment\n"),
        (store, "from tensorboard_plugin_profile.tools import datatable\n"),
        (store, "from ..common import errors\nfrom . import cache\n"),  # allowed
    ]
    assert _violations(sources) == [
        "tensorboard_plugin_profile/kernels/probe.py:2 (kernels) imports "
        "tensorboard_plugin_profile.analysis",
        "tensorboard_plugin_profile/store/probe.py:1 (store) imports "
        "tensorboard_plugin_profile.tools",
    ]


SOURCE_PACKAGES = sorted(
    str(p.parent.relative_to(PACKAGE)) for p in PACKAGE.rglob("__init__.py")
    if "protobuf" not in p.parts and p.parent != PACKAGE
)


@pytest.mark.parametrize("package", SOURCE_PACKAGES)
def test_every_package_says_what_it_owns(package):
    init = PACKAGE / package / "__init__.py"
    assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), f"{init}: docstring"
