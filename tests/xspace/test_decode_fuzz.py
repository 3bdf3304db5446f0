"""Fuzz: 10,000 mutated files through both readers, checked against the protobuf library.

Every mutated file must either parse in all three (the protobuf library, the
compiled reader, the pure-Python reader) with identical raw columns, or be
refused by all three; decoding it must raise nothing but our typed errors. A
second test builds the compiled reader with AddressSanitizer and
UndefinedBehaviorSanitizer and replays a slice of the corpus through it.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import time

import pytest
from fuzz_corpus import anonymous_copy, cases, raw_digest
from google.protobuf.message import DecodeError

from tensorboard_plugin_profile.common.errors import CorruptProfile, ProfileTooLarge
from tensorboard_plugin_profile.kernels.compiled import load
from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.xspace import decode_xspace, rawform, wire
from tensorboard_plugin_profile.xspace.decode import compiled_raw
from tensorboard_plugin_profile.xspace.limits import Limits, gunzip

READER = load("tensorboard_plugin_profile.xspace.decode")  # the compiled reader, or None
CASES = 10_000
TYPED = (CorruptProfile, ProfileTooLarge)
LIMITS = Limits(max_decompressed_bytes=64 << 20)
SOURCE = pathlib.Path(__file__).resolve().parents[2] / "tensorboard_plugin_profile" / "xspace"


def _outcome(read, data: bytes):
    """(True, digest) or (False, exception type name) for one reader."""
    try:
        return True, raw_digest(read(data))
    except (ValueError, RuntimeError, OverflowError, DecodeError) as e:
        return False, type(e).__name__


def _protobuf_parses(data: bytes) -> bool:
    try:
        xplane_pb2.XSpace.FromString(data)
        return True
    except DecodeError:
        return False


def check_case(label: str, data: bytes, gzipped: bool, fast) -> None:
    """One case: the readers agree with protobuf and with each other."""
    if gzipped:
        try:
            data = bytes(gunzip(data, label, LIMITS))
        except TYPED:
            return
    parses = _protobuf_parses(data)
    slow_ok, slow = _outcome(lambda data: rawform.finish(wire.read(data)), data)
    fast_ok, fast_out = _outcome(lambda data: compiled_raw(fast, data), data)
    # Walking a private copy whose pages go back to the OS behind the walk changes nothing.
    discarding = _outcome(lambda d: compiled_raw(fast, anonymous_copy(d), discard=True), data)
    assert discarding == (fast_ok, fast_out), f"{label}: discarding the walked pages differs"
    assert slow_ok == parses, f"{label}: pure reader {slow} but protobuf parses={parses}"
    assert fast_ok == parses, f"{label}: compiled reader {fast_out} but protobuf parses={parses}"
    if parses:
        assert fast_out == slow, f"{label}: the readers disagree"


@pytest.mark.skipif(READER is None, reason="compiled reader not built")
def test_fuzzed_files_agree_with_protobuf_and_raise_only_typed_errors():
    started = time.perf_counter()
    counts = {"parsed": 0, "refused": 0, "gzip": 0}
    for i, (label, data, gzipped) in enumerate(cases(CASES)):
        check_case(label, data, gzipped, READER)
        if gzipped:
            counts["gzip"] += 1
        elif _protobuf_parses(data):
            counts["parsed"] += 1
        else:
            counts["refused"] += 1
        if i % 20 == 0:  # the table building on top, for both readers
            for pure in (True, False):
                try:
                    decode_xspace(data, label, pure_python=pure, limits=LIMITS)
                except TYPED:
                    pass
    elapsed = time.perf_counter() - started
    print(f"fuzz: {CASES} cases in {elapsed:.1f} s: {counts}")
    # Both outcomes must be exercised, or the mutations are too weak or too strong.
    assert counts["parsed"] > CASES // 20 and counts["refused"] > CASES // 20, counts


def _sanitizer_build(tmp: pathlib.Path) -> pathlib.Path:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed: no sanitizer build")
    libasan = subprocess.run(
        [gcc, "-print-file-name=libasan.so"], capture_output=True, text=True
    ).stdout.strip()
    if not os.path.isabs(libasan) or not os.path.exists(libasan):
        pytest.skip("gcc has no AddressSanitizer runtime (libasan.so)")
    target = tmp / ("_decode" + sysconfig.get_config_var("EXT_SUFFIX"))
    build = subprocess.run(
        [
            gcc,
            "-shared",
            "-fPIC",
            "-O1",
            "-g",
            "-fno-omit-frame-pointer",
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=undefined",
            f"-I{sysconfig.get_paths()['include']}",
            str(SOURCE / "_decode.c"),
            "-o",
            str(target),
        ],
        capture_output=True,
        text=True,
    )
    if build.returncode != 0:
        pytest.skip(f"the sanitizer build failed (toolchain): {build.stderr[-500:]}")
    return pathlib.Path(libasan)


_REPLAY = """
import importlib.util, sys
sys.path[:0] = {paths!r}  # fuzz_corpus (tests/) and this file (tests/xspace/)
spec = importlib.util.spec_from_file_location("_decode", {module!r})
fast = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fast)
from fuzz_corpus import cases
from xspace.test_decode_fuzz import check_case
n = 0
for label, data, gzipped in cases({count}):
    check_case(label, data, gzipped, fast)
    n += 1
print("replayed", n)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="sanitizer runtime preloading is Linux-only")
def test_sanitizer_build_survives_the_fuzz_corpus(tmp_path):
    libasan = _sanitizer_build(tmp_path)
    module = next(tmp_path.glob("_decode*"))
    env = dict(
        os.environ,
        LD_PRELOAD=str(libasan),
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1",
        PYTHONPATH=os.pathsep.join([str(SOURCE.parent.parent)] + sys.path),
    )
    here = pathlib.Path(__file__).resolve().parent
    paths = [str(here.parent), str(here)]
    script = _REPLAY.format(paths=paths, module=str(module), count=3000)
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600
    )
    assert run.returncode == 0, run.stderr[-4000:]
    assert "replayed" in run.stdout
    assert "runtime error" not in run.stderr, run.stderr[-4000:]
