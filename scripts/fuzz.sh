#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, with clang) and runs each for SECONDS (default 30)
# from its corpus in fuzz/corpus/. New inputs it finds go to a temporary folder, not into
# the repo. A crash leaves crash-* files in the current folder and exits non-zero.
#   scripts/fuzz.sh            # CI: half a minute each
#   scripts/fuzz.sh 3600       # the long run docs/reliability.md reports
set -euo pipefail
secs=${1:-30}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
CXX=clang++ cmake -S "$root/fuzz" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
for target in wire_decode ps_session codecs; do
  found=$(mktemp -d)
  echo "fuzz: $target for ${secs} s" >&2
  status=0
  "$build/fuzz_$target" -max_total_time="$secs" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$found" "$root/fuzz/corpus/$target" > "$found.log" 2>&1 || status=$?
  grep -E "^stat::(number_of_executed_units|peak_rss_mb)|ERROR|SUMMARY" "$found.log" >&2 || true
  [ "$status" -eq 0 ] || tail -n 40 "$found.log" >&2
  rm -rf "$found" "$found.log"
  [ "$status" -eq 0 ] || { echo "fuzz: $target failed (exit $status)" >&2; exit 1; }
done
