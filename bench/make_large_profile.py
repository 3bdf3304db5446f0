"""Records a large real JAX profile for the benchmarks: a small CNN trained on the CPU.

    python bench/make_large_profile.py OUT [--steps 1200]

Writes ``OUT/plugins/profile/<timestamp>/<host>.xplane.pb`` through ``jax.profiler.trace``
with the Python tracer on. Each step is one ``StepTraceAnnotation("train", step_num=i)``
around a jitted training step and some plain Python work (a batch made and checked element
by element), so the Python tracer records about 3,000 events per step. The file grows
linearly with ``--steps``: about 60 KB per step, so 800 steps give ~50 MB and ~2.4 M events,
1200 steps ~75 MB and ~3.6 M events, 3200 steps ~200 MB and ~10 M events (JAX 0.10 on
Linux; other versions record somewhat more or fewer events). Needs ``jax`` (the CPU build
is enough); the recording machine's paths end up in the profile's source locations.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

BATCH = 32
IMAGE = 16
CLASSES = 10


def _init_params(jax, key):
    k1, k2, k3 = jax.random.split(key, 3)
    return {
        "conv1": jax.random.normal(k1, (3, 3, 1, 8)) * 0.3,
        "conv2": jax.random.normal(k2, (3, 3, 8, 16)) * 0.1,
        "dense": jax.random.normal(k3, ((IMAGE // 4) ** 2 * 16, CLASSES)) * 0.05,
    }


def _make_train_step(jax):
    jnp = jax.numpy

    def conv(x, w):
        return jax.lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )

    def pool(x):
        return jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4

    def loss(params, images, labels):
        x = pool(jax.nn.relu(conv(images, params["conv1"])))
        x = pool(jax.nn.relu(conv(x, params["conv2"])))
        logits = x.reshape(x.shape[0], -1) @ params["dense"]
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))

    @jax.jit
    def train_step(params, images, labels):
        value, grads = jax.value_and_grad(loss)(params, images, labels)
        return jax.tree_util.tree_map(lambda w, g: w - 0.05 * g, params, grads), value

    return train_step


# Plain Python per step: many short calls, each one an event of the Python tracer.
def _pixel(seed: int, row: int, col: int) -> float:
    return ((seed * 31 + row * 17 + col * 7) % 101) / 101.0


def _row(seed: int, row: int) -> list:
    return [_pixel(seed, row, col) for col in range(0, IMAGE, 4)]


def _example(seed: int) -> tuple:
    rows = [_row(seed, row) for row in range(0, IMAGE, 4)]
    return rows, seed % CLASSES


def _check(example: tuple) -> bool:
    rows, label = example
    return {len(row) for row in rows} == {IMAGE // 4} and 0 <= label < CLASSES


def _python_batch(step: int) -> list:
    examples = [_example(step * BATCH + i) for i in range(BATCH)]
    for example in examples:
        if not _check(example):
            raise AssertionError(f"bad example at step {step}")
    return [label for _, label in examples]


def _batch(jax, key, step: int):
    labels = _python_batch(step)
    images = jax.random.normal(jax.random.fold_in(key, step), (BATCH, IMAGE, IMAGE, 1))
    return images, jax.nn.one_hot(jax.numpy.array(labels), CLASSES)


def record(out: str, steps: int) -> str:
    """Trains ``steps`` steps under the profiler; returns the written ``.xplane.pb``."""
    import jax

    key = jax.random.PRNGKey(0)
    params = _init_params(jax, key)
    train_step = _make_train_step(jax)
    params, _ = train_step(params, *_batch(jax, key, 0))  # compile outside the trace
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 1
    options.host_tracer_level = 2
    before = set(glob.glob(os.path.join(out, "plugins", "profile", "*", "*.xplane.pb")))
    with jax.profiler.trace(out, profiler_options=options):
        for step in range(steps):
            with jax.profiler.StepTraceAnnotation("train", step_num=step):
                params, value = train_step(params, *_batch(jax, key, step))
                value.block_until_ready()
    written = set(glob.glob(os.path.join(out, "plugins", "profile", "*", "*.xplane.pb")))
    new = sorted(written - before)
    if not new:
        raise RuntimeError(f"the profiler wrote no .xplane.pb under {out}")
    return new[-1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="log directory to write the profile into")
    parser.add_argument("--steps", type=int, default=1200, help="training steps (default 1200)")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    start = time.perf_counter()
    path = record(args.out, args.steps)
    size_mb = os.path.getsize(path) / 1e6
    print(f"{path}: {size_mb:.1f} MB, {args.steps} steps, {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
