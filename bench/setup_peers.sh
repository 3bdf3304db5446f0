#!/usr/bin/env bash
# Installs the peers we measure against, each into its own virtualenv under bench/ (never beside
# this package: both xprof and tensorboard-plugin-profile register TensorBoard's `profile` plugin).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 -m venv "$here/.venv-xprof"
"$here/.venv-xprof/bin/pip" install --quiet --upgrade pip
"$here/.venv-xprof/bin/pip" install --quiet "xprof==2.24.2"
python3 -m venv "$here/.venv-xprof-rs"
"$here/.venv-xprof-rs/bin/pip" install --quiet --upgrade pip
"$here/.venv-xprof-rs/bin/pip" install --quiet "xprof-rs==0.1.3"
echo "peers ready: $here/.venv-xprof/bin/xprof, $here/.venv-xprof-rs/bin/xprof-rs"
