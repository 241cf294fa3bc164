// `dynacomm bench --link-trace / --device-slowdown-trace`: the re-planning policies, one
// job each on the same trace, one after the other; per policy its iteration times, plan
// changes, and how fast it followed each change of the link against the oracle.
#pragma once

#include <string>

#include "cli/bench/options.h"
#include "plan/replan/replan.h"

namespace dynacomm::cli::bench {

void run_trace_bench(const BenchFlags& f);
// The --replan mode of a policy name; InvalidInput naming the known ones.
plan::ReplanMode policy_mode(const std::string& name);

}  // namespace dynacomm::cli::bench
