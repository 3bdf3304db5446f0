"""Docs name only files that exist, and only folders, modules, names and sections that exist.

Checked: every Markdown page of the repository (``bench/history/`` is a verbatim log and
names the tree as it was then) and the docstrings and comments of the Python, TypeScript
and C sources.

- A file mention is a path with a source or doc extension (``analysis/steps/build.py``,
  ``views/registry.ts``, ``docs/cache.md``): inside backticks, in plain text when it has a
  folder, or as a link target. It must exist relative to the repository, the package,
  ``frontend/``, ``frontend/src/`` or the folder of the file that names it (or one above);
  a bare name (``record.py``) must be some file's name. Placeholders (``tools/<tool>.py``),
  absolute paths and source positions (``train.py(12)``) are not mentions.
  ``<file>.py:name`` and ``<file>.py::name`` must define ``name``.
- A folder in backticks (``analysis/trace/``, ``tests/tools/``) must exist, and so must a
  module written as a path (``analysis/environment.perf_env``: the module and the name).
- A dotted name in backticks that starts at a package of ours (``store.logdir.LogDir``) must
  resolve: folders and modules exist, the first name after the module is defined in it.
  In pages also: one that starts at a module name (``blockpool.reusing``) or a class
  (``ProfileService.tool_data``) of ours.
- ``docs/<page>.md, "Section"`` and ``<page>.md#anchor`` name a heading of that page.

``INTENTIONAL`` lists the few mentions of things that are not ours, each with its reason.

The maps stay complete too: ``frontend/src/README.md`` names every frontend module,
``docs/analysis.md`` every module of ``analysis/``, and ``docs/architecture.md`` every
package and every folder of ``analysis/``.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import io
import os
import pathlib
import re
import tokenize

import pytest
from conftest import REPO

PACKAGE = REPO / "tensorboard_plugin_profile"
SKIP_DIRS = {"node_modules", "static", "protobuf", "__pycache__", "build", "dist", "history"}
EXTENSIONS = "py|pyi|ts|mjs|c|h|md|sh|proto"
FILE_SUFFIXES = {*EXTENSIONS.split("|"), "json", "gz", "pb", "csv", "txt", "html", "css", "js"}
PATH = re.compile(
    rf"(?<![\w/.~$*<>{{}}@\\-])((?:[\w.@-]+/)*[\w.@-]*\w\.(?:{EXTENSIONS}))"
    r"(?![\w/*<>-]|\(\d|:\d)(?:::?(\w+))?"
)
URL = re.compile(r"\w+://\S+")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
LINK = re.compile(r"\]\(([^)\s]+)\)")
SECTION = re.compile(r"([\w./-]+\.md)`?,?\s+\"([^\"]+)\"")
DOTTED = re.compile(r"^([A-Za-z_]\w*)((?:\(\S*?\))?\.[A-Za-z_]\w*)+(\(.*\))?$")
FOLDER = re.compile(r"^[\w.-]+(?:/[\w.-]+)*/$")
MODULE_PATH = re.compile(r"^(\w+(?:/\w+)+)(?:\.(\w+))?(?:\(.*\))?$")
TOP_PACKAGES = {p.name for p in PACKAGE.iterdir() if p.is_dir()} | {"tensorboard_plugin_profile"}

# (file naming it, mention) -> why it is named although it is not in this repository
INTENTIONAL = {
    ("tests/data/README.md", "model.fit"): "Keras's Model.fit, the call that recorded the fixture",
    ("docs/xla_tools.md", "metadata.op_name"): "a field of XLA's OpMetadata message",
    ("docs/xla_tools.md", "xla_data.proto"): "XLA's own proto file, whose messages we copy",
    (
        "tensorboard_plugin_profile/tools/tf_data_bottleneck_analysis.py",
        "tf_data_stats_proto_to_gviz.py",
    ): "upstream's converter, whose layout the tool keeps",
}
# Folders that appear only when something runs.
MADE_LATER = {
    "static/": "the frontend build writes the page into tensorboard_plugin_profile/static/",
    "tests/artifacts/": "the browser tests write their screenshots there",
    "plugins/profile/": "inside every logdir",
    ".venv/": "install_and_run.py makes it",
}


def _walk(root: pathlib.Path, pattern: str) -> list:
    """Files and folders under ``root`` matching ``pattern``, never entering generated,
    installed or hidden folders (node_modules, .venv, ...)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        found += [pathlib.Path(folder, n) for n in dirs + files if fnmatch.fnmatch(n, pattern)]
    return sorted(found)


PAGES = [
    p
    for p in _walk(REPO, "*.md")
    if p.relative_to(REPO).parts[0] != "frontend"
    or p.relative_to(REPO).parts[:2] == ("frontend", "src")
]
SOURCES = (
    [
        p
        for top in ("tensorboard_plugin_profile", "tests", "bench", "protos")
        for p in _walk(REPO / top, "*.py")
    ]
    + [REPO / "setup.py", REPO / "install_and_run.py"]
    + [p for ext in ("*.ts", "*.mjs") for p in _walk(REPO / "frontend", ext)]
    + [p for ext in ("*.c", "*.h") for p in _walk(PACKAGE, ext)]
)


# --- what exists -----------------------------------------------------------------------


@functools.cache
def _by_basename() -> dict:
    found: dict = {}
    for top in ("tensorboard_plugin_profile", "tests", "bench", "protos", "frontend", "docs"):
        for path in _walk(REPO / top, "*"):
            found.setdefault(path.name, []).append(path)
    for path in REPO.iterdir():
        found.setdefault(path.name, []).append(path)
    return found


def _bases(named_in: pathlib.Path) -> list:
    above = [p for p in (named_in.parent, *named_in.parent.parents) if REPO in (p, *p.parents)]
    return [REPO, PACKAGE, REPO / "frontend", REPO / "frontend" / "src", *above]


def _inside(path: pathlib.Path) -> bool:
    """Part of this repository (a path that climbs out of it names nothing of ours)."""
    return path.exists() and REPO in path.resolve().parents


def _find(mention: str, named_in: pathlib.Path, kind=pathlib.Path.is_file):
    """The file (or folder) a mention names, or None."""
    for base in _bases(named_in):
        if _inside(base / mention) and kind(base / mention):
            return base / mention
    if "/" not in mention.rstrip("/"):
        found = [p for p in _by_basename().get(mention.rstrip("/"), []) if kind(p)]
        return found[0] if found else None
    return None


@functools.cache
def _defined(path: pathlib.Path) -> frozenset:
    """Every name a Python module defines, at any depth, and what ``__all__`` exports."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        if isinstance(node, ast.Assign) and "__all__" in _target_names(node):
            names |= {e.value for e in ast.walk(node.value) if isinstance(e, ast.Constant)}
    return frozenset(names)


def _target_names(node: ast.Assign) -> set:
    return {t.id for t in node.targets if isinstance(t, ast.Name)}


@functools.cache
def _modules() -> dict:
    """Module name -> its files, over the package (protobuf left out)."""
    found: dict = {}
    for path in _walk(PACKAGE, "*.py"):
        found.setdefault(path.parent.name if path.stem == "__init__" else path.stem, []).append(
            path
        )
    return found


@functools.cache
def _classes() -> dict:
    """Class name -> the names defined inside it, over the package."""
    found: dict = {}
    for path in _walk(PACKAGE, "*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                inner = found.setdefault(node.name, set())
                for n in ast.walk(node):
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        inner.add(n.name)
                    elif isinstance(n, ast.Attribute):
                        inner.add(n.attr)
                    elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        inner.add(n.id)
    return found


@functools.cache
def _headings(page: pathlib.Path, paragraphs: bool = False) -> tuple:
    """A page's headings; with ``paragraphs``, also the bold words that open a paragraph
    ("**Counters.** A row ..."), which a section mention may name too."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    pattern = r"^(?:#+\s+(.*)|\*\*(.+?)\*\*)" if paragraphs else r"^#+\s+(.*)"
    return tuple((m.group(1) or m.group(2)).strip() for m in re.finditer(pattern, text, re.M))


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[`*]", "", text).split())


# --- what a file names -----------------------------------------------------------------


def _mentions(text: str, page: bool) -> list:
    """(kind, mention, detail) for what a page (or a source's comments) names."""
    text = URL.sub("", text)
    found = []
    for span in (m.group(2).strip() for m in CODE_SPAN.finditer(text)):
        found += [("path", m.group(1), m.group(2)) for m in PATH.finditer(span)]
        if FOLDER.match(span):
            found.append(("folder", span, None))
        elif _is_module_path(span):
            found.append(("module path", span, None))
        elif DOTTED.match(span):
            found.append(("dotted" if page else "anchored", span, None))
    outside = CODE_SPAN.sub(" ", text)
    found += [("path", m.group(1), m.group(2)) for m in PATH.finditer(outside) if "/" in m.group(1)]
    if page:
        found += [("link", target, None) for target in LINK.findall(text)]
    flat = " ".join(text.split())
    found += [("section", m.group(1), m.group(2)) for m in SECTION.finditer(flat)]
    return found


def _is_module_path(span: str) -> bool:
    match = MODULE_PATH.match(span)
    if not match or span.split("/")[0] not in TOP_PACKAGES:
        return False
    return match.group(2) not in FILE_SUFFIXES


def _comment_text(path: pathlib.Path) -> str:
    """The docstrings and comments of a source file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return "\n".join(m.group(0) for m in re.finditer(r"//[^\n]*|/\*.*?\*/", text, re.S))
    parts = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            parts.append(ast.get_docstring(node) or "")
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return "\n".join(parts + [t.string for t in tokens if t.type == tokenize.COMMENT])


# --- whether it exists -----------------------------------------------------------------


def _dotted_problem(span: str, anchored_only: bool = False):
    """Why a dotted name does not resolve, or None (also when it is not ours)."""
    if span.rsplit(".", 1)[-1].rstrip("()") in FILE_SUFFIXES:
        return None
    parts = re.sub(r"\(.*?\)", "", span).split(".")
    if parts[0] == "tensorboard_plugin_profile":
        parts = parts[1:]
    top = PACKAGE / parts[0]
    if top.is_dir() or top.with_suffix(".py").is_file():
        return _names_problem(PACKAGE, parts)
    if anchored_only:
        return None
    if parts[0][0].isupper() and parts[0] not in _modules():
        if parts[0] not in _classes():
            return f"no class {parts[0]}" if "(" in span else None
        return None if parts[1] in _classes()[parts[0]] else f"{parts[0]} has no {parts[1]}"
    if parts[0] in _modules():  # a module or package name: one of them must resolve
        found = [
            _names_problem(f.parent, parts[1:])
            if f.stem == "__init__"
            else _defined_in([f], parts[1])
            for f in _modules()[parts[0]]
        ]
        return None if None in found else found[0]
    return None


def _names_problem(where: pathlib.Path, parts: list):
    """Why package folders, a module and a name after it do not resolve from ``where``."""
    while parts and (where / parts[0]).is_dir():
        where, parts = where / parts[0], parts[1:]
    if parts and (where / f"{parts[0]}.py").is_file():
        where, parts = where / f"{parts[0]}.py", parts[1:]
    elif where.is_dir():
        where = where / "__init__.py"
    if not parts:
        return None
    if where.name == "__init__.py" and len(parts) > 1:
        return f"no module {parts[0]} in {where.parent.relative_to(REPO)}"
    return _defined_in([where], parts[0])


def _defined_in(files: list, name: str):
    if any(name in _defined(f) for f in files):
        return None
    return f"{name} is not defined in {', '.join(str(f.relative_to(REPO)) for f in files)}"


def _module_path_problem(span: str, named_in: pathlib.Path):
    match = MODULE_PATH.match(span)
    path, name = match.group(1), match.group(2)
    module = _find(path + ".py", named_in) or _find(path, named_in, pathlib.Path.is_dir)
    if module is None:
        return f"no module {path}"
    if module.is_dir():
        module = module / "__init__.py"
    return _defined_in([module], name) if name and module.is_file() else None


def _link_problem(named_in: pathlib.Path, target: str):
    if target.startswith(("http:", "https:", "mailto:")):
        return None
    file, _, anchor = target.partition("#")
    page = (named_in.parent / file) if file else named_in
    if not _inside(page):
        return f"link to a missing {file}"
    if anchor and page.suffix == ".md" and anchor not in {_slug(h) for h in _headings(page)}:
        return f"{file or 'this page'} has no heading #{anchor}"
    return None


def _problem(kind: str, mention: str, detail, named_in: pathlib.Path):
    if kind == "path":
        target = _find(mention, named_in)
        if target is None:
            return f"no file {mention}"
        if detail and target.suffix == ".py":
            return _defined_in([target], detail)
    elif kind == "folder":
        made_later = any(mention.endswith(folder) for folder in MADE_LATER)
        if not made_later and not _find(mention, named_in, pathlib.Path.is_dir):
            return f"no folder {mention}"
    elif kind == "module path":
        return _module_path_problem(mention, named_in)
    elif kind in ("dotted", "anchored"):
        return _dotted_problem(mention, anchored_only=kind == "anchored")
    elif kind == "link":
        return _link_problem(named_in, mention)
    elif kind == "section":
        target = _find(mention, named_in)
        headings = [_plain(h) for h in _headings(target, True)] if target else []
        if target and not any(h.startswith(_plain(detail)) for h in headings):
            return f'{mention} has no section "{detail}"'
    return None


def _problems(named_in: pathlib.Path, mentions: list) -> list:
    where = str(named_in.relative_to(REPO))
    found = [
        (mention, _problem(kind, mention, detail, named_in))
        for kind, mention, detail in mentions
        if (where, mention) not in INTENTIONAL
    ]
    return [f"{where}: `{mention}`: {problem}" for mention, problem in found if problem]


# --- the tests -------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_pages_name_only_what_exists(page):
    assert _problems(page, _mentions(page.read_text(encoding="utf-8"), page=True)) == []


def test_sources_name_only_what_exists():
    wrong = []
    for path in SOURCES:
        wrong += _problems(path, _mentions(_comment_text(path), page=False))
    assert wrong == []


MAPS = [
    # (the map, the folder it maps, which files it must name)
    ("frontend/src/README.md", REPO / "frontend" / "src", "*.ts"),
    ("docs/analysis.md", PACKAGE / "analysis", "*.py"),
]


@pytest.mark.parametrize("page, folder, pattern", MAPS, ids=[m[0] for m in MAPS])
def test_maps_name_every_module(page, folder, pattern):
    text = (REPO / page).read_text(encoding="utf-8")
    modules = [p for p in _walk(folder, pattern) if not p.name.endswith(".test.ts")]
    named = set(re.findall(r"[\w.-]+", text))
    missing = [str(p.relative_to(folder)) for p in modules if p.name not in named]
    assert [m for m in missing if not m.endswith("__init__.py")] == []


def test_architecture_names_every_package():
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    tops = [p.name + "/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()]
    tops += [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    subpackages = [f"`{p.parent.name}/`" for p in (PACKAGE / "analysis").glob("*/__init__.py")]
    missing = [t for t in tops if f"`{t}`" not in text] + [s for s in subpackages if s not in text]
    assert missing == []


def test_intentional_mentions_are_still_made():
    """An allowance nobody needs any more goes."""
    made = set()
    for path in PAGES + SOURCES:
        text = path.read_text(encoding="utf-8") if path in PAGES else _comment_text(path)
        made |= {(str(path.relative_to(REPO)), m) for _, m, _ in _mentions(text, path in PAGES)}
    assert set(INTENTIONAL) <= made


def test_the_checks_see_stale_names():
    page = REPO / "docs" / "probe.md"
    text = (
        "`analysis/steps.py`, `tools/overview_page.py:no_such_function`, "
        "`frontend/src/dashboards/xla.ts`, `store.logdir.NoSuchThing`, "
        '`analysis.preprocessing.preprocess`, docs/cache.md, "No such section", '
        "[this](cache.md#no-such-heading), `analysis/no_such_folder/`, "
        "`analysis/timeline_memory`, `CaptureRoutes(service).routes()`, "
        "`ProfileService.no_such_method`, `blockpool.no_such_function`. Fine: "
        "`analysis/steps/build.py`, `views/registry.ts`, `tools/<tool>.py`, `kernels.passes`, "
        "[cache](cache.md#caches), `analysis/trace/`, `analysis/environment.perf_env`, "
        "`ProfileService.tool_data`, `blockpool.reusing()`, `train.py(12)`, `tests/tools/`."
    )
    assert [line.split("`")[1] for line in _problems(page, _mentions(text, page=True))] == [
        "analysis/steps.py",
        "tools/overview_page.py",
        "frontend/src/dashboards/xla.ts",
        "store.logdir.NoSuchThing",
        "analysis.preprocessing.preprocess",
        "analysis/no_such_folder/",
        "analysis/timeline_memory",
        "CaptureRoutes(service).routes()",
        "ProfileService.no_such_method",
        "blockpool.no_such_function",
        "cache.md#no-such-heading",
        "docs/cache.md",
    ]
