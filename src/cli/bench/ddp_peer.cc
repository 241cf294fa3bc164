#include "cli/bench/ddp_peer.h"

#include <unistd.h>

#include <fstream>

#include "base/error.h"
#include "cluster/local_cluster.h"

namespace dynacomm::cli::bench {

std::pair<Stats, std::int64_t> run_ddp(const BenchFlags& f, const JobFlags& j,
                                       cluster::NetnsTopology& topology, const std::string& dir,
                                       int threads) {
  if (::access(f.peer_script.c_str(), R_OK) != 0)
    throw Error("bench: the DDP peer script " + f.peer_script + " is missing");
  cluster::LocalCluster c("/usr/bin/python3", dir, std::chrono::seconds(30));
  const std::string master = cluster::NetnsTopology::worker_address(0) + ":29511";
  for (int r = 0; r < j.workers; ++r)
    c.start_process("DDP rank " + std::to_string(r),
                    {"/usr/bin/python3",
                     f.peer_script,
                     "--rank",
                     std::to_string(r),
                     "--world",
                     std::to_string(j.workers),
                     "--master",
                     master,
                     "--model",
                     j.model,
                     "--batch",
                     std::to_string(j.batch),
                     "--iterations",
                     std::to_string(f.iterations),
                     "--warmup",
                     std::to_string(j.warmup),
                     "--threads",
                     std::to_string(threads),
                     "--ifname",
                     topology.worker_interface(r),
                     "--out",
                     dir + "/ddp-rank" + std::to_string(r) + ".json"},
                    "ddp-rank" + std::to_string(r) + ".log", topology.worker_namespace(r));
  c.wait();
  std::ifstream in(dir + "/ddp-rank0.json");
  const nlohmann::json res = nlohmann::json::parse(in);
  return {stats_of(res["iteration_ms"].get<std::vector<double>>()),
          res["params"].get<std::int64_t>()};
}

std::string ddp_note(std::int64_t params, const JobFlags& j, const RunSummary& summary) {
  return "PyTorch DDP (Gloo) trained " + std::to_string(params) + " parameters; dynacomm's " +
         j.model + " has " + std::to_string(summary.units()) + " units and " +
         std::to_string(summary.params()) +
         " parameters. DDP's traffic gets no added latency (netem is unavailable).\n\n";
}

}  // namespace dynacomm::cli::bench
