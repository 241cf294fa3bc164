#!/usr/bin/env bash
# Configures and builds dynacomm into build/ (or $BUILD_DIR). Used by run.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
scripts/install-deps.sh
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDYNACOMM_WERROR=ON >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
