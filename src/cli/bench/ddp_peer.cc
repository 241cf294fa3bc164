#include "cli/bench/ddp_peer.h"

#include <unistd.h>

#include <fstream>

#include "base/error.h"
#include "cluster/local_cluster.h"
#include "data/fashion_mnist.h"

namespace dynacomm::cli::bench {

DdpRun run_ddp(const BenchFlags& f, const JobFlags& j, cluster::NetnsTopology& topology,
               const std::string& dir, int threads) {
  if (::access(f.peer_script.c_str(), R_OK) != 0)
    throw Error("bench: the DDP peer script " + f.peer_script + " is missing");
  cluster::LocalCluster c("/usr/bin/python3", dir, std::chrono::seconds(30));
  const std::string master = cluster::NetnsTopology::worker_address(0) + ":29511";
  for (int r = 0; r < j.workers; ++r) {
    std::vector<std::string> args = {"/usr/bin/python3",
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
                                     dir + "/ddp-rank" + std::to_string(r) + ".json"};
    if (j.target_accuracy > 0)  // the same data, epochs and evaluations as dynacomm's job
      args.insert(args.end(),
                  {"--data", j.data_dir.empty() ? data::default_fashion_mnist_dir() : j.data_dir,
                   "--epochs", std::to_string(j.epochs), "--eval-every",
                   std::to_string(j.eval_every > 0 ? j.eval_every : 50), "--target-accuracy",
                   fmt("%g", j.target_accuracy), "--train-samples", std::to_string(j.train_samples),
                   "--test-samples", std::to_string(j.test_samples)});
    c.start_process("DDP rank " + std::to_string(r), args, "ddp-rank" + std::to_string(r) + ".log",
                    topology.worker_namespace(r));
  }
  c.wait();
  std::ifstream in(dir + "/ddp-rank0.json");
  const nlohmann::json res = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (res.is_discarded() || !res.contains("iteration_ms") || !res.contains("params"))
    throw Error("bench: the DDP peer left no readable " + dir + "/ddp-rank0.json");
  DdpRun run{stats_of(res["iteration_ms"].get<std::vector<double>>()),
             res["params"].get<std::int64_t>(),
             {},
             {}};
  auto evaluation = [](const nlohmann::json& e) {
    return DdpRun::Evaluation{e.at("iteration").get<std::int64_t>(), e.at("accuracy").get<double>(),
                              e.at("train_s").get<double>()};
  };
  if (res.contains("evaluations"))
    for (const nlohmann::json& e : res["evaluations"]) run.evaluations.push_back(evaluation(e));
  if (res.contains("reached") && res["reached"].is_object())
    run.reached = evaluation(res["reached"]);
  return run;
}

std::string ddp_note(std::int64_t params, const JobFlags& j, const RunSummary& summary) {
  return "PyTorch DDP (Gloo) trained " + std::to_string(params) + " parameters; dynacomm's " +
         j.model + " has " + std::to_string(summary.units()) + " units and " +
         std::to_string(summary.params()) +
         " parameters. DDP's traffic gets no added latency (netem is unavailable).\n\n";
}

}  // namespace dynacomm::cli::bench
