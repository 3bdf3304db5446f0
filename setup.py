"""Packaging: ``pip install .`` builds the frontend and installs the plugin.

The build runs ``npm ci && npm run build`` in ``frontend/`` (output in
``tensorboard_plugin_profile/static/``, not committed). Set
``TBPROF_SKIP_FRONTEND=1`` to reuse an existing build.

``python -m build`` puts the built frontend into the sdist and the wheel and leaves
``frontend/`` out of the sdist, so users install either without Node.js
(``install_and_run.py --test`` checks that in a fresh virtualenv without Node).
"""

import os
import re
import shutil
import subprocess

from setuptools import Extension, find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
FRONTEND = os.path.join(HERE, "frontend")
STATIC = os.path.join(HERE, "tensorboard_plugin_profile", "static")


def _version():
    with open(os.path.join(HERE, "tensorboard_plugin_profile", "__init__.py")) as f:
        return re.search(r'__version__ = "([^"]+)"', f.read()).group(1)


def build_frontend():
    """Builds frontend/ into the package's static/ folder."""
    if os.environ.get("TBPROF_SKIP_FRONTEND") and os.path.isfile(
        os.path.join(STATIC, "index.html")
    ):
        return
    if not os.path.isdir(FRONTEND):
        if os.path.isfile(os.path.join(STATIC, "index.html")):
            return  # building from an sdist that already holds the bundle
        raise RuntimeError("frontend/ is missing and no built frontend was found")
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(
            "npm is needed to build the Profile frontend but was not found. Install Node.js "
            "20.19 or newer with npm (from nodejs.org, or your distribution's nodejs and npm "
            "packages if recent enough), then run pip install again."
        )
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=FRONTEND, check=True)
    subprocess.run([npm, "run", "build"], cwd=FRONTEND, check=True)


class BuildPyWithFrontend(build_py):
    def run(self):
        build_frontend()
        super().run()


class SdistWithFrontend(sdist):
    """The sdist carries the built frontend (listed as package data once it exists)."""

    def run(self):
        build_frontend()
        super().run()


# Buffer helpers shared by the analysis extensions (each includes it).
BUFFERS_H = "tensorboard_plugin_profile/kernels/_buffers.h"
# The (key, lane) min-heap of greedy lanes and open ends (_passes.c, trace depths and layout).
LANE_HEAP_H = "tensorboard_plugin_profile/kernels/_lane_heap.h"
# One pass split across threads over disjoint output ranges (_edit_passes.c, _graph_passes.c,
# chrome_trace/_collect.c).
THREADS_H = "tensorboard_plugin_profile/kernels/_threads.h"

setup(
    name="tensorboard_plugin_profile",
    version=_version(),
    description="Profile tab for TensorBoard: performance tools for TensorFlow and JAX profiles",
    long_description=open(os.path.join(HERE, "README.md")).read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.9",
    classifiers=[
        "Programming Language :: Python :: 3",
        *(f"Programming Language :: Python :: 3.{minor}" for minor in range(9, 14)),
    ],
    packages=find_packages(include=["tensorboard_plugin_profile", "tensorboard_plugin_profile.*"]),
    package_data={
        "tensorboard_plugin_profile": ["static/*", "static/**/*", "demo/**/*"],
    },
    install_requires=[
        "tensorboard>=2.10",
        "werkzeug>=2.0",
        "protobuf>=4.21",
        "grpcio>=1.48",
        "pandas>=1.5",
        "numpy>=1.22",
        "gviz-api>=1.10",
    ],
    extras_require={
        # Per-host work of pod sessions on a Dask cluster (--dask_scheduler, docs/pod_scale.md).
        "dask": ["distributed>=2022.2"],
        # Profile.sql and `tbprof sql`: read-only SQL over a profile (docs/notebook.md).
        "sql": ["duckdb>=1.0"],
        # `tbprof mcp`: the MCP server for coding agents; the SDK needs Python 3.10+.
        "mcp": ["mcp>=1.10; python_version >= '3.10'"],
        # gs://, s3:// and az:// logdirs, read through fsspec (docs/remote_logdirs.md).
        "cloud": ["fsspec>=2023.1", "s3fs>=2023.1", "gcsfs>=2023.1", "adlfs>=2023.1"],
        "test": [
            "pytest>=7",
            "hypothesis>=6",
            "ruff>=0.4",
            "mypy>=1.8",
            "grpcio-tools>=1.48",
            "jax[cpu]",
            "distributed>=2022.2",
            "duckdb>=1.0",
            "mcp>=1.10; python_version >= '3.10'",
        ],
    },
    entry_points={
        "tensorboard_plugins": [
            "profile = tensorboard_plugin_profile.web.profile_plugin_loader:ProfilePluginLoader",
        ],
        "console_scripts": ["tbprof = tensorboard_plugin_profile.web.cli:main"],
    },
    # The compiled extensions are optional: without a C compiler the package installs
    # and uses the pure-Python reader and numpy passes (same results, slower).
    ext_modules=[
        Extension(
            "tensorboard_plugin_profile.xspace._decode",
            ["tensorboard_plugin_profile/xspace/_decode.c"],
            # Included by _decode.c (one compilation unit); listed for rebuilds and sdists.
            depends=[
                "tensorboard_plugin_profile/xspace/_wire.h",
                "tensorboard_plugin_profile/xspace/_layout.h",
            ],
            optional=True,
        ),
        # Sequential analysis passes (stacks, sweeps); numpy fallbacks otherwise.
        Extension(
            "tensorboard_plugin_profile.kernels._passes",
            ["tensorboard_plugin_profile/kernels/_passes.c"],
            depends=[BUFFERS_H, LANE_HEAP_H],
            optional=True,
        ),
        # The host step database's walk over events (markers, packed span keys).
        Extension(
            "tensorboard_plugin_profile.analysis.steps._keys",
            ["tensorboard_plugin_profile/analysis/steps/_keys.c"],
            depends=[BUFFERS_H, "tensorboard_plugin_profile/analysis/steps/_step_walk.h"],
            optional=True,
        ),
        # Step grouping over the event forest (nesting stack, floods) and csr; numpy otherwise.
        Extension(
            "tensorboard_plugin_profile.kernels._graph_passes",
            ["tensorboard_plugin_profile/kernels/_graph_passes.c"],
            depends=[BUFFERS_H, THREADS_H],
            optional=True,
        ),
        # PlaneEdit: new events put among sorted old ones by runs; numpy otherwise.
        Extension(
            "tensorboard_plugin_profile.preprocessing._edit_passes",
            ["tensorboard_plugin_profile/preprocessing/_edit_passes.c"],
            depends=[BUFFERS_H, THREADS_H],
            optional=True,
        ),
        # PlaneEdit's stats table: rows written once into the merged columns; numpy otherwise.
        Extension(
            "tensorboard_plugin_profile.preprocessing._stat_merge",
            ["tensorboard_plugin_profile/preprocessing/_stat_merge.c"],
            depends=[
                BUFFERS_H,
                "tensorboard_plugin_profile/preprocessing/_stat_merge_sorted.h",
            ],
            optional=True,
        ),
        # Nesting depths of trace rows; numpy in analysis/trace/depths.py.
        Extension(
            "tensorboard_plugin_profile.analysis.trace._depths",
            ["tensorboard_plugin_profile/analysis/trace/_depths.c"],
            depends=[BUFFERS_H, LANE_HEAP_H],
            optional=True,
        ),
        # Trace index layout (per row: depths, a counting sort; big rows split on threads);
        # numpy in analysis/trace/layout.py.
        Extension(
            "tensorboard_plugin_profile.analysis.trace._layout",
            ["tensorboard_plugin_profile/analysis/trace/_layout.c"],
            depends=[
                BUFFERS_H,
                LANE_HEAP_H,
                THREADS_H,
                "tensorboard_plugin_profile/analysis/trace/_row_depths.h",
                "tensorboard_plugin_profile/analysis/trace/_row_split.h",
                "tensorboard_plugin_profile/analysis/trace/_position_scans.h",
            ],
            optional=True,
        ),
        # Chrome-trace events straight from JSON text to columns; collect.py otherwise.
        Extension(
            "tensorboard_plugin_profile.chrome_trace._collect",
            ["tensorboard_plugin_profile/chrome_trace/_collect.c"],
            depends=[THREADS_H],
            optional=True,
        ),
        # Large numpy buffers reused within a cold conversion (Linux); numpy's own otherwise.
        Extension(
            "tensorboard_plugin_profile.kernels._blockpool",
            ["tensorboard_plugin_profile/kernels/_blockpool.c"],
            optional=True,
        ),
    ],
    cmdclass={"build_py": BuildPyWithFrontend, "sdist": SdistWithFrontend},
)
