#!/usr/bin/env bash
# The main job: installs dependencies, builds, and runs dynacomm's default. Today that is
# the planner on a shipped profile over a 20 Mbit/s edge link; arguments replace the
# default command line, e.g. scripts/run.sh plan --profile P.json --down 50mbit
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
if [ $# -eq 0 ]; then
  set -- plan --profile profiles/cnn-1x28x28-b32.json --down 20mbit --up 20mbit \
    --latency 10ms --overhead 5ms
fi
exec "${BUILD_DIR:-build}/src/cli/dynacomm" "$@"
