// `dynacomm bench`: every chosen strategy on the same cluster, data and link, taking turns
// (A A A B B B C C C A A A ...) so machine drift hits all alike; optionally the PyTorch
// DDP peer on the same links; per strategy the median iteration time with min-max, the
// planner's prediction, the ideal, and the speed-up over sequential; bench.json,
// bench.csv, bench.md and SVG charts in --out. With a link or device trace: the
// re-planning policies instead (cli/bench/trace_bench.h).
#pragma once

#include "cli/bench/options.h"

namespace dynacomm::cli::bench {

void run_bench(const BenchFlags& f);

}  // namespace dynacomm::cli::bench
