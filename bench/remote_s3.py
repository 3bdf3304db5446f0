"""A profile from S3 on loopback against the same profile on local disk (docs/remote_logdirs.md).

    python bench/remote_s3.py BIG.xplane.pb      # e.g. a 200 MB profile (make_large_profile.py)
    python bench/remote_s3.py W.pt.trace.json    # a PyTorch trace (bench/chrome_trace.py)

Starts moto's S3 server (``.venv-moto``, see tests/remote_servers.py), uploads the file as
``s3://bench/logs/plugins/profile/s/host.xplane.pb`` (a PyTorch trace as
``s3://bench/logs/s/worker0.1.pt.trace.json[.gz]``, its overview ``pytorch_overview``) and
times the overview request after the run list (as the page asks), each with a fresh disk cache:

1. the overview page of the local copy (cold: decode + analysis);
2. the overview page of the S3 copy (cold: download + decode + analysis); target <= 1.3x of 1;
3. a restarted server on the cache of 2 answering the overview again; target <= 0.5 s, with
   no GET of the object (requests counted by a proxy in front of the store).

``--breakdown`` also says where the cold S3 time went: the listing and stat requests, the
download (wall, CPU of this process and of fsspec's I/O thread, where s3fs/aiobotocore run),
the decoder's walk, the rest of the decode, preprocessing, and the CPU seconds of moto's
server in each phase (it shares the cores with us).

Needs the ``[cloud]`` extra. Run it on a quiet machine: it uses every core it is given.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests")
)

from remote_servers import CountingProxy, MotoServer, moto_server_command  # noqa: E402

from tensorboard_plugin_profile.service import ProfileService  # noqa: E402
from tensorboard_plugin_profile.store import remote, remote_fetch  # noqa: E402
from tensorboard_plugin_profile.store.cache_config import CacheConfig  # noqa: E402

RUN = "s"


class Breakdown:
    """Wall and CPU seconds of the steps of a cold S3 overview, by wrapping them (bench only)."""

    def __init__(self, server_pid: int) -> None:
        import psutil

        self.server = psutil.Process(server_pid)
        self.me = psutil.Process()
        self.rows: list = []
        self.calls: dict = {}
        self.spans: dict = {}  # step -> (first start, last end), perf_counter seconds
        self.phase = ""

    def _io_thread_cpu(self) -> float:
        import fsspec.asyn

        thread = fsspec.asyn.iothread[0]
        if thread is None:
            return 0.0
        for t in self.me.threads():
            if t.id == thread.native_id:
                return t.user_time + t.system_time
        return 0.0

    def _server_cpu(self) -> float:
        times = self.server.cpu_times()
        return times.user + times.system

    def wrap(self, module, name: str, label: str) -> None:
        original = getattr(module, name)
        lock = threading.Lock()

        def timed(*args, **kwargs):
            before = (time.perf_counter(), time.process_time(), self._io_thread_cpu(),
                      self._server_cpu())  # fmt: skip
            key = f"{self.phase}: {label}"
            try:
                return original(*args, **kwargs)
            finally:
                after = (time.perf_counter(), time.process_time(), self._io_thread_cpu(),
                         self._server_cpu())  # fmt: skip
                with lock:
                    self.calls[key] = self.calls.get(key, 0) + 1
                    self.rows.append((key, *[b - a for a, b in zip(before, after)]))
                    first = self.spans.get(key, (before[0], after[0]))[0]
                    self.spans[key] = (first, after[0])

        setattr(module, name, timed)

    def mark(self, owner, name: str, label: str) -> None:
        """Only when a call often made (per piece of a download) first started, last ended."""
        original = getattr(owner, name)

        def marked(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                key = f"{self.phase}: {label}"
                first = self.spans.get(key, (started, 0.0))[0]
                self.spans[key] = (first, time.perf_counter())

        setattr(owner, name, marked)

    def report(self) -> None:
        print(f"{'step':<36}{'calls':>6}{'wall s':>9}{'our CPU':>9}{'I/O thr':>9}{'moto CPU':>9}")
        for label in dict.fromkeys(r[0] for r in self.rows):
            rows = [r[1:] for r in self.rows if r[0] == label]
            sums = [sum(col) for col in zip(*rows)]
            print(f"{label:<36}{self.calls[label]:>6}" + "".join(f"{v:>9.2f}" for v in sums))
        download = self.spans.get("S3: download + cache write")
        first = self.spans.get("S3: first bytes arrived")
        walk = self.spans.get("S3: decoder walk (compiled)")
        if download and first and walk:
            print(f"S3: first bytes {first[0] - download[0]:.2f} s after the download started; "
                  f"the walk ended {walk[1] - download[1]:.2f} s after its last byte")  # fmt: skip


def _instrument(breakdown: Breakdown) -> None:
    from tensorboard_plugin_profile.store import formats
    from tensorboard_plugin_profile.xspace import decode, filebytes

    breakdown.wrap(remote, "list_folder", "listing (one request each)")
    breakdown.wrap(remote, "stat", "stat (HEAD)")
    breakdown.wrap(remote_fetch, "_download", "download + cache write")
    breakdown.wrap(decode, "compiled_raw", "decoder walk (compiled)")
    breakdown.mark(filebytes.Arrival, "arrived", "first bytes arrived")  # a span: first..last
    breakdown.wrap(formats, "decode_xspace", "decode (walk + tables)")
    breakdown.wrap(formats, "preprocess_decoded", "preprocess")


def _overview(logdir: str, cache_dir: str, tool: str = "overview_page") -> float:
    service = ProfileService(logdir, config=CacheConfig(disk_dir=cache_dir))
    try:
        (run,) = service.runs()  # the page lists the runs first (and the store's client starts)
        started = time.perf_counter()
        b"".join(service.tool_data(run, tool).chunks())
        return time.perf_counter() - started
    finally:
        service.close()


def main(profile: str, breakdown: bool = False) -> int:
    command = moto_server_command()
    if command is None:
        sys.exit(
            "moto_server not found: python -m venv .venv-moto && "
            ".venv-moto/bin/pip install 'moto[server]'"
        )
    work = tempfile.mkdtemp(prefix="bench-remote-")
    server = MotoServer(command)
    proxy = CountingProxy(server.port)
    try:
        os.environ.update(
            AWS_ACCESS_KEY_ID="bench",
            AWS_SECRET_ACCESS_KEY="bench",
            AWS_DEFAULT_REGION="us-east-1",
            AWS_ENDPOINT_URL=f"http://127.0.0.1:{server.port}",
        )
        remote.forget_filesystems()
        fs = remote.filesystem("s3://bench")
        fs.mkdir("bench")
        trace = profile.endswith((".json", ".json.gz"))
        name = "worker0.1.pt.trace.json" + (".gz" if profile.endswith(".gz") else "")
        folder = RUN if trace else f"plugins/profile/{RUN}"
        name = name if trace else "host.xplane.pb"
        tool = "pytorch_overview" if trace else "overview_page"
        fs.put_file(profile, f"bench/logs/{folder}/{name}")
        local = os.path.join(work, "local", *folder.split("/"))
        os.makedirs(local)
        shutil.copyfile(profile, os.path.join(local, name))
        size_mb = os.path.getsize(profile) / 1e6

        steps = Breakdown(server.process.pid) if breakdown else None
        if steps is not None:
            _instrument(steps)
            steps.phase = "local"
        local_cpu = time.process_time()
        local_s = _overview(os.path.join(work, "local"), os.path.join(work, "cache-local"), tool)
        local_cpu = time.process_time() - local_cpu
        if steps is not None:
            steps.phase = "S3"
        cpu, server_cpu = time.process_time(), steps._server_cpu() if steps else 0.0
        remote_s = _overview("s3://bench/logs", os.path.join(work, "cache-remote"), tool)
        cpu = time.process_time() - cpu
        os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{proxy.port}"
        remote.forget_filesystems()
        proxy.requests.clear()
        restart_s = _overview("s3://bench/logs", os.path.join(work, "cache-remote"), tool)
        object_gets = [r for r in proxy.requests if r[0] == "GET" and "list-type" not in r[1]]

        print(f"profile: {size_mb:.0f} MB")
        print(f"local cold overview:     {local_s:.2f} s")
        print(
            f"S3 cold overview:        {remote_s:.2f} s  "
            f"({remote_s / local_s:.2f}x, target <= 1.3x)"
        )
        print(f"  CPU of this process: local {local_cpu:.2f} s, S3 {cpu:.2f} s (runs() included)")
        if steps is not None:
            print(f"  CPU of moto's server {steps._server_cpu() - server_cpu:.2f} s")
            steps.report()
        print(f"restarted, from cache:   {restart_s:.2f} s  (target <= 0.5 s)")
        print(f"GETs of the object after the restart: {len(object_gets)} (target 0)")
        print(f"requests after the restart: {len(proxy.requests)}")
    finally:
        proxy.stop()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    flags = [a for a in sys.argv[1:] if a.startswith("-")]
    arguments = [a for a in sys.argv[1:] if not a.startswith("-")]
    if len(arguments) != 1 or set(flags) - {"--breakdown"}:
        sys.exit(__doc__)  # --help, an unknown flag or no file: the usage, not a traceback
    sys.exit(main(arguments[0], breakdown="--breakdown" in flags))
