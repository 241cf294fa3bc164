#!/usr/bin/env bash
# The main job: installs dependencies, builds, and runs `dynacomm train` (the embedded
# default: a PS and 2 edge workers on this machine over emulated links, Fashion-MNIST).
# Arguments replace the default command line, e.g. scripts/run.sh plan --profile P.json --down 50mbit
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
if [ $# -eq 0 ]; then
  set -- train
fi
exec "${BUILD_DIR:-build}/src/cli/dynacomm" "$@"
