#!/usr/bin/env bash
# The reliability measurement of docs/reliability.md: `dynacomm train` with workers killed
# (SIGKILL) and restarted (--max-restarts) every PERIOD seconds, against the same job
# undisturbed, run one after the other on this machine. Prints, per kill, the seconds from
# the kill to the launcher's restart and to the PS's log of the rejoin, and both runs'
# final accuracies.
#   scripts/kill_restart.sh OUT_DIR [PERIOD_S] [-- train flags...]
set -euo pipefail
out=${1:?usage: scripts/kill_restart.sh OUT_DIR [PERIOD_S] [-- train flags]}
period=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
[ "${1:-}" = "--" ] && shift
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(--workers 4 --epochs 2)
exe=$(cd "$(dirname "$0")/.." && pwd)/build/src/cli/dynacomm
mkdir -p "$out"
now() { date +%s.%N; }

"$exe" train "${flags[@]}" --out "$out/undisturbed" > "$out/undisturbed.txt" 2> "$out/undisturbed.err"

"$exe" train "${flags[@]}" --max-restarts 100 --out "$out/killed" > "$out/killed.txt" 2> "$out/killed.err" &
train=$!
kills=0
while kill -0 "$train" 2>/dev/null; do
  sleep "$period"
  workers=$(pgrep -f "worker --rank .*--out $out/killed\$" || true)
  [ -z "$workers" ] && continue
  victim=$(echo "$workers" | shuf -n 1)
  rank=$(tr '\0' ' ' < "/proc/$victim/cmdline" | sed -E 's/.*--rank ([0-9]+).*/\1/')
  joins_before=$(grep -c "joined the running job" "$out/killed/ps.log" || true)
  restarts_before=$(grep -c "started it again" "$out/killed.err" || true)
  t0=$(now)
  kill -9 "$victim" 2>/dev/null || continue
  kills=$((kills + 1))
  restarted="" rejoined=""
  for _ in $(seq 1 600); do
    [ -z "$restarted" ] && [ "$(grep -c "started it again" "$out/killed.err" || true)" -gt "$restarts_before" ] && restarted=$(now)
    [ -z "$rejoined" ] && [ "$(grep -c "joined the running job" "$out/killed/ps.log" || true)" -gt "$joins_before" ] && rejoined=$(now)
    [ -n "$restarted" ] && [ -n "$rejoined" ] && break
    kill -0 "$train" 2>/dev/null || break
    sleep 0.05
  done
  awk -v k="$kills" -v r="$rank" -v t0="$t0" -v a="${restarted:-0}" -v b="${rejoined:-0}" \
    'BEGIN { printf "kill %d: worker %s; restarted after %.2f s, rejoined after %.2f s\n", k, r, a ? a - t0 : -1, b ? b - t0 : -1 }'
done
wait "$train" || echo "the disturbed run failed: see $out/killed.err"
echo "undisturbed: $(grep -m1 'test accuracy' "$out/undisturbed.txt")"
echo "killed $kills times: $(grep -m1 'test accuracy' "$out/killed.txt")"
