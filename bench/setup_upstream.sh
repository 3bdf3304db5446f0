#!/usr/bin/env bash
# Installs upstream xprof into bench/.venv-upstream (and nowhere else).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 -m venv "$here/.venv-upstream"
"$here/.venv-upstream/bin/pip" install --quiet --upgrade pip
"$here/.venv-upstream/bin/pip" install --quiet xprof
"$here/.venv-upstream/bin/python" -c "import xprof; print('upstream xprof ready')"
