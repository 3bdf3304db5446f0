"""A profile from S3 on loopback against the same profile on local disk (docs/remote_logdirs.md).

    python bench/remote_s3.py BIG.xplane.pb      # e.g. a 200 MB profile (make_large_profile.py)

Starts moto's S3 server (``.venv-moto``, see tests/remote_servers.py), uploads the file as
``s3://bench/logs/plugins/profile/s/host.xplane.pb`` and times the overview request after
the run list (as the page asks), each with a fresh disk cache:

1. the overview page of the local copy (cold: decode + analysis);
2. the overview page of the S3 copy (cold: download + decode + analysis); target <= 1.3x of 1;
3. a restarted server on the cache of 2 answering the overview again; target <= 0.5 s, with
   no GET of the object (requests counted by a proxy in front of the store).

Needs the ``[cloud]`` extra. Run it on a quiet machine: it uses every core it is given.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests")
)

from remote_servers import CountingProxy, MotoServer, moto_server_command  # noqa: E402

from tensorboard_plugin_profile.service import ProfileService  # noqa: E402
from tensorboard_plugin_profile.store import remote  # noqa: E402
from tensorboard_plugin_profile.store.cache_config import CacheConfig  # noqa: E402

RUN = "s"


def _overview(logdir: str, cache_dir: str) -> float:
    service = ProfileService(logdir, config=CacheConfig(disk_dir=cache_dir))
    try:
        service.runs()  # the page lists the runs first (and the store's client starts)
        started = time.perf_counter()
        b"".join(service.tool_data(RUN, "overview_page").chunks())
        return time.perf_counter() - started
    finally:
        service.close()


def main(profile: str) -> int:
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
        fs.put_file(profile, "bench/logs/plugins/profile/s/host.xplane.pb")
        local = os.path.join(work, "local", "plugins", "profile", RUN)
        os.makedirs(local)
        shutil.copyfile(profile, os.path.join(local, "host.xplane.pb"))
        size_mb = os.path.getsize(profile) / 1e6

        local_s = _overview(os.path.join(work, "local"), os.path.join(work, "cache-local"))
        remote_s = _overview("s3://bench/logs", os.path.join(work, "cache-remote"))
        os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{proxy.port}"
        remote.forget_filesystems()
        proxy.requests.clear()
        restart_s = _overview("s3://bench/logs", os.path.join(work, "cache-remote"))
        object_gets = [r for r in proxy.requests if r[0] == "GET" and "list-type" not in r[1]]

        print(f"profile: {size_mb:.0f} MB")
        print(f"local cold overview:     {local_s:.2f} s")
        print(
            f"S3 cold overview:        {remote_s:.2f} s  "
            f"({remote_s / local_s:.2f}x, target <= 1.3x)"
        )
        print(f"restarted, from cache:   {restart_s:.2f} s  (target <= 0.5 s)")
        print(f"GETs of the object after the restart: {len(object_gets)} (target 0)")
        print(f"requests after the restart: {len(proxy.requests)}")
    finally:
        proxy.stop()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
