"""Records the `pytorch_cpu_train_ns` and `pytorch_ddp_ns` fixtures: real torch profiler traces.

Runs a few training steps of a small CNN under ``torch.profiler.profile`` (CPU activities, a
schedule with warm-up and three active steps, ``tensorboard_trace_handler``, input shapes
recorded, no stacks); with ``--ranks 2``, the model is wrapped in DistributedDataParallel and
two processes train it over Gloo on loopback (one trace per rank, ``rank<N>``). torch 2.13
writes ``ts``/``dur`` in microseconds with three decimals (``ts`` counted from the trace's
``baseTimeNanoseconds``), so the traces carry nanosecond times: what
tests/chrome_trace/test_pytorch_reference.py compares with torch-tb-profiler (issue 28, item 3).

Needs torch, which is never a dependency of this project: run it from its own venv::

    python3.11 -m venv bench/.venv-torch && bench/.venv-torch/bin/pip install torch==2.13.0
    bench/.venv-torch/bin/python bench/record_pytorch_trace.py OUT_LOGDIR             # worker0
    bench/.venv-torch/bin/python bench/record_pytorch_trace.py OUT_LOGDIR --ranks 2   # DDP

It writes ``OUT_LOGDIR/run/<worker>.<span>.pt.trace.json.gz``.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn


def model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(4),
        nn.Flatten(),
        nn.Linear(16 * 16, 32),
        nn.ReLU(),
        nn.Linear(32, 10),
    )


def train(rank: int, ranks: int, logdir: pathlib.Path, worker: str, port: int) -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    net = model()
    if ranks > 1:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        dist.init_process_group("gloo", rank=rank, world_size=ranks)
        net = nn.parallel.DistributedDataParallel(net)
        worker = f"rank{rank}"
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    data = [(torch.randn(16, 1, 28, 28), torch.randint(0, 10, (16,))) for _ in range(4)]
    handler = torch.profiler.tensorboard_trace_handler(
        str(logdir / "run"), worker_name=worker, use_gzip=True
    )
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        schedule=schedule,
        on_trace_ready=handler,
        record_shapes=True,
        with_stack=False,
    ) as prof:
        for step in range(6):
            x, y = data[step % len(data)]
            optimizer.zero_grad()
            loss = loss_fn(net(x), y)
            loss.backward()
            optimizer.step()
            prof.step()
    if ranks > 1:
        dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logdir", type=pathlib.Path)
    parser.add_argument("--worker", default="worker0")
    parser.add_argument("--ranks", type=int, default=1, help="DDP over Gloo with this many ranks")
    args = parser.parse_args()
    if args.ranks > 1:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        mp.spawn(train, args=(args.ranks, args.logdir, args.worker, port), nprocs=args.ranks)
    else:
        train(0, 1, args.logdir, args.worker, 0)
    print("torch", torch.__version__, "->", sorted((args.logdir / "run").iterdir()))


if __name__ == "__main__":
    main()
