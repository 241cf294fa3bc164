#include "cli/arch_choice.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <thread>

#include "base/error.h"
#include "cli/cluster_job.h"
#include "compress/compressor.h"
#include "data/npy_dataset.h"
#include "train/profiler.h"

namespace dynacomm::cli {

namespace {

std::vector<JobFlags> with_arch(std::vector<JobFlags> flags, const std::string& arch) {
  for (JobFlags& f : flags) f.arch = arch;
  return flags;
}

// The slowest worker's link: every architecture here waits for it each iteration.
plan::LinkProfile slowest_link(const std::vector<JobFlags>& per_worker) {
  plan::LinkProfile slowest = per_worker.front().worker_options().link;
  for (const JobFlags& w : per_worker) {
    const plan::LinkProfile l = w.worker_options().link;
    slowest.down_bps = std::min(slowest.down_bps, l.down_bps);
    slowest.up_bps = std::min(slowest.up_bps, l.up_bps);
    slowest.latency_ms = std::max(slowest.latency_ms, l.latency_ms);
  }
  return slowest;
}

// The model's profile on this machine, its compute stretched by the workers' sharing of
// its cores (all of them run here).
plan::ModelProfile local_profile(const JobFlags& job, int threads) {
  train::ProfileOptions o;
  o.model = job.model;
  o.classes = 10;
  o.batch = job.batch;
  o.threads = threads;
  o.iterations = 5;
  o.warmup = 2;
  o.seed = job.seed;
  if (data::is_npy_dataset_dir(job.data_dir)) {  // the user's images, of their shape
    const std::vector<std::int64_t> chw = data::npy_image_shape(job.data_dir);
    o.input = {static_cast<int>(chw[0]), static_cast<int>(chw[1]), static_cast<int>(chw[2])};
  }
  plan::ModelProfile p = train::profile_model(o);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const double sharing = std::max(1.0, static_cast<double>(job.workers) * threads / cores);
  // The codecs all-reduce sums (fp16, random-k; powersgd runs on all-reduce alone).
  const std::unique_ptr<compress::Compressor> selected =
      compress::sums_selected_values(job.compress) ? compress::make_compressor(job.compress)
                                                   : nullptr;
  for (plan::UnitProfile& u : p.units) {
    u.forward_ms *= sharing;
    u.backward_ms *= sharing;
    if (job.compress == "fp16") u.push_bytes = u.bytes / 2;
    if (selected)  // random-k: what both all-reduce and the PS's pushes carry
      u.push_bytes = static_cast<std::int64_t>(selected->encoded_bytes(u.params, 0));
  }
  return p;
}

}  // namespace

std::vector<std::string> architectures_that_fit(const JobFlags& job,
                                                const std::vector<JobFlags>& per_worker) {
  std::vector<std::string> fit;
  std::string why_not_ps;
  for (const char* arch : {"ps", "allreduce", "gossip"}) {
    JobFlags j = job;
    j.arch = arch;
    try {
      validate_job(j, with_arch(per_worker, arch));
      fit.push_back(arch);
    } catch (const InvalidInput& e) {
      if (fit.empty() && why_not_ps.empty()) why_not_ps = e.what();
    }
  }
  if (fit.empty()) throw InvalidInput(why_not_ps);
  return fit;
}

plan::ArchitectureChoice choose_job_architecture(JobFlags& job, std::vector<JobFlags>& per_worker,
                                                 int threads) {
  const std::vector<std::string> candidates = architectures_that_fit(job, per_worker);
  std::fprintf(stderr, "dynacomm: --arch auto: profiling %s on this machine...\n",
               job.model.c_str());
  const plan::ModelProfile profile = local_profile(job, threads);
  const cluster::CloudLinkRates cloud = cloud_rates(job);
  const plan::ArchitectureChoice c = plan::choose_architecture(
      profile, slowest_link(per_worker), {cloud.in_bps, cloud.out_bps}, job.workers, candidates,
      job.scheduler, plan::parse_topology(job.topology));
  std::fprintf(stderr, "dynacomm: --arch auto: predicted per iteration: %s\n", c.text().c_str());
  job.arch = c.chosen;
  per_worker = with_arch(per_worker, c.chosen);
  return c;
}

}  // namespace dynacomm::cli
