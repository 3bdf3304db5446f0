"""Shared test helpers: where the real fixtures are, and small XSpace builders."""

from __future__ import annotations

import gzip
import json
import os
import pathlib

import pytest

# Tests never read or fill the user's disk cache (tests of the cache pass their own
# directory); subprocesses (CLI, TensorBoard) inherit this.
os.environ.setdefault("TBPROF_NO_CACHE", "1")

# Capture tests leave gRPC's poller threads running in this process. On Python 3.9,
# subprocess forks (3.10+ uses vfork), and gRPC's fork handlers then abort the child
# now and then ("epoll_wait error: Bad file descriptor", SIGABRT) before it execs. The
# product never forks after using gRPC (its pools spawn); the test process does.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

REPO = pathlib.Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "data"
REFERENCE = FIXTURES / "reference"


def fixture_names() -> list:
    return sorted(p.name for p in FIXTURES.iterdir() if (p / "plugins").is_dir())


def host_files(name: str) -> list:
    return sorted((FIXTURES / name).glob("plugins/profile/*/*.xplane.pb"))


def all_host_files() -> list:
    return [f for name in fixture_names() for f in host_files(name)]


def load_reference(name: str, filename: str):
    """A reference JSON file, gzip-compressed or not; None if absent."""
    for candidate in (REFERENCE / name / filename, REFERENCE / name / (filename + ".gz")):
        if candidate.exists():
            data = candidate.read_bytes()
            if candidate.suffix == ".gz":
                data = gzip.decompress(data)
            return json.loads(data)
    return None


@pytest.fixture(scope="session")
def fixtures_dir() -> pathlib.Path:
    if not FIXTURES.is_dir():
        pytest.fail(f"test fixtures not found at {FIXTURES}")
    return FIXTURES
