// What `dynacomm bench` was asked: the job (its flags) and the bench's own settings.
#pragma once

#include <string>
#include <vector>

#include "cli/job_flags.h"

namespace dynacomm::cli::bench {

struct BenchFlags {
  JobFlags job;
  std::string schedulers = "all";
  int iterations = 20;  // measured iterations per strategy and setting (--iterations)
  int block = 3;        // iterations per turn
  int settle = 1;       // the first iterations of each turn not measured (at most block - 1)
  std::string sweep;    // bandwidths, comma-separated
  std::vector<std::string> peers;
  std::string out;
  int threads = 0;
  int repeat = 1;  // --compress lists: rounds of the codecs taking turns
  bool past_target = false;  // --target-accuracy: train on to the epochs' end (--past-target)
  // Per-worker overrides (the --compress / --sync benches): "R:down,up,latency", "R:FACTOR".
  std::vector<std::string> links, slowdowns;
  std::string peer_script = DYNACOMM_DDP_PEER;
  std::string policies = "dynacomm,dynacomm-static,dynacomm-epoch,oracle";  // --link-trace
};

}  // namespace dynacomm::cli::bench
