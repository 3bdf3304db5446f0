"""Records the bundled demo profile: a small JAX MLP trained on the CPU.

    pip install jax jaxlib
    python -m tensorboard_plugin_profile.demo.record [OUT_DIR]

Writes ``OUT_DIR/plugins/profile/<session>/demo.xplane.pb`` (default: this
package's ``demo/`` folder, which ``install_and_run.py`` opens when no
``--logdir`` is given). Steps are marked with ``StepTraceAnnotation`` so the
step-based tools have data; the run is kept short so the file stays small.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile

STEPS = 12


# The training loop, compiled under a bare file name: profiles record source locations, and
# a demo that ships in the package should not carry the recording machine's paths.
_TRAIN_SOURCE = """
import jax
import jax.numpy as jnp


def train(out, steps):
    key = jax.random.PRNGKey(0)
    k1, k2, k3 = jax.random.split(key, 3)
    params = {
        "w1": jax.random.normal(k1, (64, 128)) * 0.1,
        "w2": jax.random.normal(k2, (128, 10)) * 0.1,
    }

    def loss(p, x, y):
        hidden = jax.nn.relu(x @ p["w1"])
        logits = hidden @ p["w2"]
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))

    @jax.jit
    def train_step(p, x, y):
        grads = jax.grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda w, g: w - 0.01 * g, p, grads)

    def data_load(step):
        x = jax.random.normal(jax.random.fold_in(k3, step), (256, 64))
        y = jax.nn.one_hot(jnp.arange(256) % 10, 10)
        return x, y

    params = train_step(params, *data_load(0))  # compile outside the trace
    with jax.profiler.trace(out):
        for step in range(steps):
            with jax.profiler.StepTraceAnnotation("train", step_num=step):
                with jax.profiler.TraceAnnotation("data_load"):
                    x, y = data_load(step)
                params = train_step(params, x, y)
                jax.block_until_ready(params)
"""


def _train(out: str) -> None:
    # In a fresh interpreter, so no frame of this file is on the stack the Python tracer records.
    runner = (
        "import sys\n"
        f"namespace = {{}}\nexec(compile({_TRAIN_SOURCE!r}, 'demo_train.py', 'exec'), namespace)\n"
        "namespace['train'](sys.argv[1], int(sys.argv[2]))\n"
    )
    subprocess.run([sys.executable, "-c", runner, out, str(STEPS)], check=True, cwd=out)


def record(out_dir: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        _train(tmp)
        found = glob.glob(os.path.join(tmp, "plugins", "profile", "*", "*.xplane.pb"))
        if not found:
            raise SystemExit("JAX wrote no .xplane.pb")
        session = os.path.basename(os.path.dirname(found[0]))
        target_dir = os.path.join(out_dir, "plugins", "profile", session)
        os.makedirs(target_dir, exist_ok=True)
        target = os.path.join(target_dir, "demo.xplane.pb")
        shutil.copyfile(found[0], target)
        return target


if __name__ == "__main__":
    default = os.path.dirname(os.path.abspath(__file__))
    path = record(sys.argv[1] if len(sys.argv) > 1 else default)
    print(f"wrote {path} ({os.path.getsize(path) / 1e6:.2f} MB)")
