"""One compiled switch: every C extension is named after its Python twin, loads through
``compiled.load``, and ``compiled.use_compiled`` alone decides which code runs."""

from __future__ import annotations

import ast
import importlib

import pytest
from conftest import REPO

from tensorboard_plugin_profile.kernels import blockpool, compiled, passes

PACKAGE = REPO / "tensorboard_plugin_profile"


def _extensions() -> list:
    """The extension module names setup.py builds (``Extension("pkg._name", ...)``)."""
    tree = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    return sorted(
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "Extension"
        and isinstance(node.args[0], ast.Constant)
    )


EXTENSIONS = _extensions()


def _twin_of(extension: str) -> str:
    package, _, name = extension.rpartition(".")
    return f"{package}.{name[1:]}"


def test_setup_builds_every_c_file_and_nothing_else():
    sources = {".".join(p.relative_to(REPO).with_suffix("").parts) for p in PACKAGE.rglob("_*.c")}
    assert len(EXTENSIONS) >= 10 and set(EXTENSIONS) == sources


@pytest.mark.parametrize("extension", EXTENSIONS)
def test_each_c_file_is_named_after_its_python_twin(extension):
    folder = REPO.joinpath(*extension.split(".")[:-1])
    name = extension.rpartition(".")[2]
    assert (folder / f"{name[1:]}.py").is_file(), f"{name}.c has no {name[1:]}.py beside it"
    assert (folder / f"{name}.pyi").is_file(), f"{name}.c has no stub {name}.pyi"
    assert compiled.twin_name(_twin_of(extension)) == extension


@pytest.mark.parametrize("extension", EXTENSIONS)
def test_every_twin_is_built_here_and_loads_once(extension):
    # The dev/CI install has a C compiler; without it the comparison tests skip.
    module = compiled.load(_twin_of(extension))
    assert module is not None and module.__name__ == extension
    assert compiled.load(_twin_of(extension)) is module


def test_a_twin_that_is_not_built_is_none_and_not_tried_again(monkeypatch):
    tried, real_import = [], importlib.import_module

    def import_module(name):
        tried.append(name)
        return real_import(name)

    monkeypatch.setattr(compiled.importlib, "import_module", import_module)
    name = "tensorboard_plugin_profile.kernels.nesting"  # pure Python: no _nesting built
    monkeypatch.delitem(compiled._loaded, name, raising=False)
    assert compiled.load(name) is None
    assert compiled.load(name) is None
    assert tried == ["tensorboard_plugin_profile.kernels._nesting"]


def test_an_explicit_choice_wins_over_the_environment(monkeypatch):
    twin = compiled.load(passes.__name__)
    monkeypatch.setenv("TBPROF_PURE_PYTHON", "1")
    assert compiled.use_compiled(twin, pure_python=False)
    assert not compiled.use_compiled(twin)
    monkeypatch.delenv("TBPROF_PURE_PYTHON")
    assert not compiled.use_compiled(twin, pure_python=True)
    assert compiled.use_compiled(twin)


@pytest.mark.parametrize("value, forced", [("1", True), ("yes", True), ("0", False), ("", False)])
def test_the_environment_variable_forces_pure_python(monkeypatch, value, forced):
    monkeypatch.setenv("TBPROF_PURE_PYTHON", value)
    assert compiled.use_compiled(compiled.load(passes.__name__)) is not forced
    # It reaches the modules at each call: tracker_top is compiled only (None: not run).
    one = passes.tracker_top([0], [1], [1], 2)
    assert (one is None) is forced


def test_a_missing_twin_or_too_many_rows_take_python():
    twin = compiled.load(passes.__name__)
    assert not compiled.use_compiled(None, pure_python=False)
    assert compiled.use_compiled(twin, False, n=10, max_n=10)
    assert not compiled.use_compiled(twin, False, n=11, max_n=10)
    assert compiled.use_compiled(twin, False, n=2**40)  # no limit given


def test_the_block_pool_is_off_when_pure_python_is_forced(monkeypatch):
    monkeypatch.setenv("TBPROF_PURE_PYTHON", "1")
    assert not blockpool.available()
    with blockpool.reusing():  # does nothing: numpy allocates as usual
        pass


def _compiled_imports(path, text: str, extensions: set) -> list:
    """Lines of ``path`` that import a compiled extension or name the environment switch."""
    module = ".".join(path.relative_to(REPO).with_suffix("").parts)
    package = module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            target = ".".join(filter(None, [base, node.module or ""]))
            names = {f"{target}.{a.name}" for a in node.names} | {target}
            if names & extensions:
                found.append(node.lineno)
        elif isinstance(node, ast.Import):
            if {a.name for a in node.names} & extensions:
                found.append(node.lineno)
        elif isinstance(node, ast.Constant) and node.value == compiled.PURE_PYTHON_ENV:
            found.append(node.lineno)
    return found


def test_only_the_switch_imports_extensions_or_reads_the_environment():
    extensions = set(EXTENSIONS)
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "protobuf" in path.parts or path == PACKAGE / "kernels" / "compiled.py":
            continue
        lines = _compiled_imports(path, path.read_text(encoding="utf-8"), extensions)
        wrong += [f"{path.relative_to(REPO)}:{line}" for line in lines]
    assert wrong == []


def test_the_check_sees_a_direct_import():
    probe = PACKAGE / "kernels" / "probe.py"
    extensions = set(EXTENSIONS)
    assert _compiled_imports(probe, "from . import _passes\n", extensions) == [1]
    assert _compiled_imports(probe, "import os\nos.environ['TBPROF_PURE_PYTHON']\n", extensions)
    assert _compiled_imports(probe, "from . import passes\n", extensions) == []
