// The trace bench's report: per policy its iterations on the trace against the oracle's
// after each change of the link (bench.md, bench.json, bench.csv) and the chart of
// iteration times over the trace with the link beneath (trace.svg).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/bench/options.h"
#include "cli/bench/trace_windows.h"
#include "cli/job_flags.h"
#include "plan/replan/trace_file.h"

namespace dynacomm::cli::bench {

// `rows`: the link trace's rows for worker 0; into folder `out`, and the table to stdout.
void write_trace_report(const BenchFlags& f, const JobFlags& base,
                        const std::vector<plan::LinkTracePoint>& rows,
                        const std::vector<PolicyRun>& runs, std::int64_t epoch_iterations,
                        const std::string& out);

}  // namespace dynacomm::cli::bench
