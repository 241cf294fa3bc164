#!/usr/bin/env bash
# Lists the functions in src/ (tests aside) longer than N lines (default 150), counted by
# Universal Ctags from a function's first line to its end. Exit 1 when any is.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-150}
ctags --fields=+ne --c++-kinds=f -o - $(git ls-files 'src/*.cc' | grep -v _test.cc) |
  awk -F'\t' -v limit="$limit" '{
    line = 0; end = 0
    for (i = 4; i <= NF; i++) {
      if ($i ~ /^line:/) line = substr($i, 6)
      if ($i ~ /^end:/) end = substr($i, 5)
    }
    if (end && end - line + 1 > limit) { printf "%5d  %s  %s\n", end - line + 1, $1, $2; n++ }
  } END { exit n > 0 }'
