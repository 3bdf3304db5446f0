#!/usr/bin/env python3
"""One command from a fresh checkout to the Profile tab (or to a full test run).

    python install_and_run.py [--logdir DIR] [--port 6006]   # install, start TensorBoard
    python install_and_run.py --test [PYTEST ARGS...]         # install everything, run all tests

It creates a virtualenv in ``.venv/`` (reused on later runs), installs this
package into it (which builds the frontend with npm), and then either starts
TensorBoard on DIR (default: the demo profile bundled in the package) and
prints the URL of the Profile tab, or installs the test tools (pytest, JAX,
the frontend's npm packages, Debian's chromium when run as root) and runs the
whole suite.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import socket
import subprocess
import sys
import time
import venv
from typing import Callable, Sequence, Union

ROOT = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(ROOT, ".venv")
BIN = os.path.join(VENV, "Scripts" if os.name == "nt" else "bin")
PYTHON = os.path.join(BIN, "python")
TEST_PACKAGES = [
    "build",
    "setuptools>=61",
    "wheel",
    "pytest>=7",
    "hypothesis>=6",
    "ruff>=0.4",
    "mypy>=1.8",
    "grpcio-tools>=1.48",
    "jax[cpu]",
    "distributed",  # the pod tests run a real Dask scheduler and workers
    "duckdb",  # the [sql] extra: Profile.sql, tbprof sql
    "mcp>=1.10; python_version >= '3.10'",  # the [mcp] extra: tbprof mcp (its tests skip on 3.9)
    "s3fs", "gcsfs", "adlfs",  # the [cloud] extra: remote logdirs (docs/remote_logdirs.md)
]  # fmt: skip
# The S3 server the remote-logdir tests run (tests/remote_servers.py): moto pins Werkzeug and
# boto versions of its own, so it gets a venv beside ours and runs as a separate process.
MOTO_VENV = os.path.join(ROOT, ".venv-moto")
# The GCS emulator of the same tests, in a venv of its own as well (it runs as a process).
GCS_VENV = os.path.join(ROOT, ".venv-gcs")
# Azurite, Microsoft's Azure Storage emulator (npm), for the az:// tests: outside the package.
AZURITE_DIR = os.path.join(ROOT, ".azurite")
AZURITE = "azurite@3.37.0"
CHROMIUM = "/usr/bin/chromium"
# The oldest runtime we claim: Python 3.9 with protobuf 4.21 (what old TensorFlow pins).
OLDEST_VENV = os.path.join(ROOT, ".venv-oldest")
OLDEST_PACKAGES = [
    "protobuf==4.21.12", "pytest>=7", "hypothesis>=6", "grpcio-tools<1.63", "distributed",
    "duckdb",
]  # fmt: skip
# mypy is checked on the main interpreter only (mypy 2 cannot run on or target 3.9).
OLDEST_SKIPPED_TESTS = [
    "tests/web/test_frontend.py",
    "tests/capture/test_capture_jax.py",
    "tests/test_typecheck.py",
]


def step(message: str) -> None:
    print(f"\n==> {message}", flush=True)


def run(args: list, **kwargs) -> None:
    subprocess.run(args, check=True, **kwargs)


def ensure_venv() -> None:
    if not os.path.exists(PYTHON):
        step(f"creating a virtualenv in {VENV}")
        venv.EnvBuilder(with_pip=True).create(VENV)
    run([PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip"])


def ensure_npm() -> None:
    advice = (
        "The frontend is built with Node.js 20.19 or newer and npm: install them (nodejs.org, "
        "or your distribution's nodejs and npm packages if recent enough), then run again."
    )
    if shutil.which("npm") is None or shutil.which("node") is None:
        sys.exit(f"npm was not found. {advice}")
    version = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout
    major, minor = (int(x) for x in version.strip().lstrip("v").split(".")[:2])
    if (major, minor) < (20, 19):
        sys.exit(f"Node.js {version.strip()} is too old. {advice}")


def ensure_chromium() -> None:
    if os.path.exists(CHROMIUM):
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        step("installing Debian's chromium for the browser tests")
        run(["apt-get", "update", "-qq"])
        run(
            ["apt-get", "install", "-y", "-qq", "chromium"],
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        )
        return
    sys.exit(f"{CHROMIUM} is missing: install it (sudo apt-get install chromium) and run again.")


def ensure_go() -> None:
    """Go's ``pprof`` reads our pprof output in one test; without Go that test skips, so a
    failed install only costs that test."""
    if shutil.which("go") or not (hasattr(os, "geteuid") and os.geteuid() == 0):
        return
    if shutil.which("apt-get"):
        step("installing Debian's golang-go (go tool pprof reads our pprof files in a test)")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        if subprocess.call(["apt-get", "install", "-y", "-qq", "golang-go"], env=env):
            print("golang-go could not be installed: the go tool pprof test will skip", flush=True)


def install(editable: bool, extra: list) -> None:
    ensure_npm()
    step("installing tensorboard_plugin_profile (builds the frontend)")
    target = ["-e", ROOT] if editable else [ROOT]
    run([PYTHON, "-m", "pip", "install", "--quiet", *target, *extra])


def demo_logdir() -> str:
    code = "import os, tensorboard_plugin_profile.demo as d; print(os.path.dirname(d.__file__))"
    return subprocess.run(
        [PYTHON, "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()


def start(logdir: str, port: int, host: str) -> int:
    logdir = os.path.abspath(logdir) if logdir else demo_logdir()
    step(f"starting TensorBoard on {logdir}")
    tensorboard = os.path.join(BIN, "tensorboard")
    command = [tensorboard, "--logdir", logdir, "--port", str(port), "--host", host]
    return serve_and_announce(command, host, port, f"http://{host}:{port}/#profile")


def serve_and_announce(command: list, host: str, port: int, url: str) -> int:
    """Runs ``command`` (a server) and prints ``url`` once the port accepts connections:
    before, the URL came first and opening it at once gave "connection refused"."""
    server = subprocess.Popen(command)
    try:
        if wait_listening(server, host, port):
            print(f"Open {url}  (Ctrl+C stops it)", flush=True)
        return server.wait()
    except KeyboardInterrupt:
        server.terminate()
        return 0


def wait_listening(server: subprocess.Popen, host: str, port: int, timeout_s: float = 300) -> bool:
    """True once ``host:port`` accepts a connection; False if ``server`` exits first."""
    deadline = time.monotonic() + timeout_s
    while server.poll() is None and time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=1):
                return True
        except OSError:
            time.sleep(0.2)
    return False


def skipped(reason: str) -> str:
    """A stage that could not run here: said now, and again in the summary."""
    print(f"(skipped: {reason})", flush=True)
    return f"skipped: {reason}"


def test_oldest(pytest_args: list) -> Union[int, str]:
    """The Python suite again on Python 3.9 and protobuf 4.21 (no browser, no JAX)."""
    python39 = find_python("3.9")
    if not python39:
        return skipped("no Python 3.9 on this machine for the oldest-runtime run")
    step("oldest runtime: Python 3.9 with protobuf 4.21")
    python = os.path.join(OLDEST_VENV, "bin", "python")
    if not os.path.exists(python):
        run([python39, "-m", "venv", OLDEST_VENV])
    env = {**os.environ, "TBPROF_SKIP_FRONTEND": "1"}
    # One resolution for everything, so pip picks a tensorboard that works with the old protobuf.
    run([python, "-m", "pip", "install", "--quiet", "-e", ROOT, *OLDEST_PACKAGES], env=env)
    ignored = [f"--ignore={path}" for path in OLDEST_SKIPPED_TESTS]
    return subprocess.call([python, "-m", "pytest", "-q", *ignored, *pytest_args], cwd=ROOT)


# TensorFlow only for its live-tracing case, in a venv of its own: beside JAX and the other
# tests it would change what TensorBoard itself loads.
TF_VENV = os.path.join(ROOT, ".venv-tf")
TF_LIVE_TEST = ["tests/advisor/test_live.py", "-k", "TensorFlow"]


def test_tensorflow_live() -> Union[int, str]:
    """Live tracing inside a real TensorFlow loop (skipped where tensorflow-cpu has no wheel)."""
    step("live tracing with TensorFlow (tensorflow-cpu in .venv-tf)")
    python = os.path.join(TF_VENV, "bin", "python")
    if not os.path.exists(python):
        run([PYTHON, "-m", "venv", TF_VENV])
    env = {**os.environ, "TBPROF_SKIP_FRONTEND": "1"}
    installed = subprocess.call(
        [python, "-m", "pip", "install", "--quiet", "-e", ROOT, "tensorflow-cpu", "pytest"],
        env=env,
    )  # fmt: skip
    if installed:
        return skipped("tensorflow-cpu cannot be installed for this Python")
    env["TBPROF_REQUIRE_LIVE"] = "TensorFlow"  # installed: the case must run, not skip
    return subprocess.call([python, "-m", "pytest", "-q", *TF_LIVE_TEST], cwd=ROOT, env=env)


# --- packages: built once, installed without Node.js on every Python we claim ------------
DIST = os.path.join(ROOT, "build", "dist")
PACKAGE_VENVS = os.path.join(ROOT, "build", "package-venvs")
SMOKE_TEST = os.path.join(ROOT, "tests", "smoke_installed.py")
CLAIMED_PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13")


def find_python(version: str) -> str:
    """A Python ``version`` interpreter (on PATH or from pyenv), or "" when absent."""
    candidates = [shutil.which(f"python{version}") or ""]
    candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python")))
    for candidate in candidates:
        if (
            candidate
            and subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0
        ):
            return candidate
    return ""


def without_node_env() -> dict:
    """The environment with every PATH folder holding node or npm left out."""
    folders = os.environ.get("PATH", "").split(os.pathsep)
    kept = [
        f for f in folders
        if not any(os.path.exists(os.path.join(f, tool)) for tool in ("node", "npm"))
    ]  # fmt: skip
    return {**os.environ, "PATH": os.pathsep.join(kept), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def version_of(python: str) -> str:
    code = "import sys; print(*sys.version_info[:2], sep='.')"
    return subprocess.run(
        [python, "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()


def smoke_install(python: str, artifact: str) -> None:
    """Installs ``artifact`` into a fresh venv of ``python`` without Node; runs the smoke test."""
    env_dir = os.path.join(PACKAGE_VENVS, version_of(python))
    shutil.rmtree(env_dir, ignore_errors=True)
    run([python, "-m", "venv", env_dir])
    env_python = os.path.join(env_dir, "bin", "python")
    env = without_node_env()
    run([env_python, "-m", "pip", "install", "--quiet", artifact], env=env, cwd=PACKAGE_VENVS)
    run([env_python, SMOKE_TEST], env=env, cwd=PACKAGE_VENVS)  # outside the repository


def test_packages() -> None:
    """sdist + wheel; the wheel on this Python, the sdist on every other claimed one."""
    step("packages: python -m build (sdist and wheel with the built frontend)")
    shutil.rmtree(DIST, ignore_errors=True)
    os.makedirs(PACKAGE_VENVS, exist_ok=True)
    env = {**os.environ, "TBPROF_SKIP_FRONTEND": "1"}  # the install step built it
    log = os.path.join(ROOT, "build", "package-build.log")
    with open(log, "w") as out:
        built = subprocess.run(
            [PYTHON, "-m", "build", "--no-isolation", "--outdir", DIST, ROOT],
            env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    if built.returncode:
        sys.exit(f"python -m build failed; see {log}")
    wheel = glob.glob(os.path.join(DIST, "*.whl"))[0]
    sdist = glob.glob(os.path.join(DIST, "*.tar.gz"))[0]
    mine = version_of(PYTHON)  # the wheel's Python: it holds a compiled extension
    for version in CLAIMED_PYTHONS:
        python = PYTHON if version == mine else find_python(version)
        if not python:
            print(f"(skipped Python {version}: not on this machine)", flush=True)
            continue
        artifact = wheel if version == mine else sdist
        step(f"packages: install the {os.path.basename(artifact)} on Python {version}, no Node")
        started = time.monotonic()
        smoke_install(python, artifact)
        print(f"({time.monotonic() - started:.0f} s)", flush=True)


class Stages:
    """What each stage of the test command did, printed together at the end: the last
    stage's own pytest line ("1 passed, 3 deselected") read as if one test had run."""

    def __init__(self) -> None:
        self.done: list = []  # (stage, exit status or "skipped: why", seconds)

    def run(self, name: str, fn: Callable[[], Union[None, int, str]]) -> int:
        """Runs one stage; its exit status (0 when it passed or was skipped)."""
        started = time.monotonic()
        try:
            outcome = fn() or 0
        except subprocess.CalledProcessError as e:
            outcome = e.returncode or 1
        except SystemExit as e:  # a stage that stops with a message
            print(e.code, flush=True)
            outcome = e.code if isinstance(e.code, int) and e.code else 1
        self.done.append((name, outcome, time.monotonic() - started))
        return outcome if isinstance(outcome, int) else 0

    def summary(self, skipped: Sequence[str] = ()) -> str:
        lines = ["", "==> summary of the test command"]
        for name, status, seconds in self.done:
            if isinstance(status, str):
                outcome = status
            else:
                outcome = "ok" if status == 0 else f"FAILED (exit {status})"
            lines.append(f"  {name:<58} {outcome:<16} {seconds:7.0f} s")
        lines += [f"  {name:<58} {'not run':<16}" for name in skipped]
        return "\n".join(lines)


def install_store_emulators() -> None:
    """The GCS and Azure emulators of the remote-logdir tests (tests/remote_servers.py). Their
    tests skip, saying why, when one is missing, so a failed install costs only them."""
    step(f"installing gcp-storage-emulator into {GCS_VENV} (the gs:// logdir tests)")
    if not os.path.isdir(GCS_VENV):
        venv.EnvBuilder(with_pip=True).create(GCS_VENV)
    python = os.path.join(GCS_VENV, "Scripts" if os.name == "nt" else "bin", "python")
    if subprocess.call([python, "-m", "pip", "install", "--quiet", "gcp-storage-emulator"]):
        print("gcp-storage-emulator could not be installed: the gs:// tests will skip", flush=True)
    step(f"installing {AZURITE} into {AZURITE_DIR} (the az:// logdir tests)")
    os.makedirs(AZURITE_DIR, exist_ok=True)
    npm = ["npm", "install", "--prefix", AZURITE_DIR, "--no-audit", "--no-fund", "--silent"]
    if subprocess.call([*npm, AZURITE]):
        print(f"{AZURITE} could not be installed: the az:// tests will skip", flush=True)


def test(pytest_args: list) -> int:
    ensure_chromium()
    ensure_go()
    install(editable=True, extra=[])
    step("installing the test tools (pytest, JAX for the capture tests)")
    run([PYTHON, "-m", "pip", "install", "--quiet", *TEST_PACKAGES])
    step(f"installing moto's S3 server into {MOTO_VENV} (the remote-logdir tests)")
    if not os.path.isdir(MOTO_VENV):
        venv.EnvBuilder(with_pip=True).create(MOTO_VENV)
    moto_bin = os.path.join(MOTO_VENV, "Scripts" if os.name == "nt" else "bin")
    run([os.path.join(moto_bin, "python"), "-m", "pip", "install", "--quiet", "moto[server]"])
    install_store_emulators()
    stages = Stages()
    later = [
        ("packages: sdist and wheel on every Python present", lambda: test_packages()),
        ("oldest runtime: Python 3.9, protobuf 4.21", lambda: test_oldest(pytest_args)),
        ("live tracing with TensorFlow (.venv-tf)", test_tensorflow_live),
    ]
    step("lint: ruff")
    status = stages.run("lint: ruff", lambda: subprocess.call(
        [PYTHON, "-m", "ruff", "check", ROOT]))  # fmt: skip
    step("tests: pytest (Python, frontend checks, browser, TensorBoard)")
    status = status or stages.run("pytest: the whole suite", lambda: subprocess.call(
        [PYTHON, "-m", "pytest", *pytest_args], cwd=ROOT))  # fmt: skip
    while later and not status:  # packages take ~9 min on 2 cores: after the faster stages
        name, fn = later.pop(0)
        status = stages.run(name, fn)
    # Stop at the first failing stage: a later one (the oldest runtime) would only bury it.
    print(stages.summary([name for name, _ in later]), flush=True)
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logdir", default="", help="profiles to open (default: the demo)")
    parser.add_argument("--port", type=int, default=6006)
    parser.add_argument("--host", default="localhost")
    parser.add_argument("--test", action="store_true", help="install test tools, run all tests")
    args, rest = parser.parse_known_args()
    if rest and not args.test:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    ensure_venv()
    if args.test:
        return test(rest)
    install(editable=False, extra=[])
    return start(args.logdir, args.port, args.host)


if __name__ == "__main__":
    sys.exit(main())
