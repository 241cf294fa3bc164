#include "worker/peer_job.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/stats.h"
#include "data/npy_dataset.h"
#include "worker/evaluation.h"

namespace dynacomm::worker {

collective::RingGroupOptions group_options(const WorkerOptions& o) {
  collective::RingGroupOptions g;
  const auto colon = o.ring_store.rfind(':');
  g.store_host = o.ring_store.substr(0, colon);
  g.store_port = std::stoi(o.ring_store.substr(colon + 1));
  g.host = o.ring_host;
  g.rank = o.rank;
  g.size = o.workers;
  g.timeout = o.timeout;
  g.half_wire = o.arch == "allreduce" && o.compression == "fp16";
  // Kernel-shaped links pace the bytes; the latency is still the transport's (netns.h).
  g.emulate.latency_ms = o.link.latency_ms;
  if (!o.kernel_shaped) {
    g.emulate.down_bps = o.link.down_bps;
    g.emulate.up_bps = o.link.up_bps;
  }
  return g;
}

namespace {

const WorkerOptions& validated(const WorkerOptions& o) {
  o.validate();
  torch::set_num_threads(o.threads);
  return o;
}

}  // namespace

PeerJob::PeerJob(const WorkerOptions& options, std::ostream& progress)
    : o(validated(options)),
      started(Clock::now()),
      train(data::load_dataset(o.data_dir, data::Split::kTrain)),
      share(share_of(o, train)),
      model(model_for(o, train)),
      group(collective::RingGroup::connect(group_options(o))),
      log(o, share.total, o.warmup, 0, progress) {
  std::vector<float> flat = model->flat_params();  // rank 0's: the job's initial weights
  group->broadcast(flat.data(), static_cast<std::int64_t>(flat.size()), 0, "the initial weights");
  model->set_flat_params(flat);
  optim::SgdOptions sgd_options = o.sgd;
  if (sgd_options.total_iterations == 0) sgd_options.total_iterations = share.total;
  std::vector<std::int64_t> sizes;
  for (const model::UnitInfo& u : model->units()) sizes.push_back(u.params);
  sgd = std::make_unique<optim::Sgd>(sgd_options, sizes);
  if (o.rank == 0)
    test = std::make_unique<data::Dataset>(data::load_dataset(o.data_dir, data::Split::kTest));
  result.steps_per_epoch = share.steps_per_epoch;
  model->train(true);
}

std::int64_t PeerJob::begin_iteration(std::int64_t it) {
  const std::int64_t step = it % share.steps_per_epoch;
  if (step == 0) {
    order = share.mine;
    data::shuffle(order, o.seed * 1000003 + static_cast<std::uint64_t>(epoch(it)));
    log.epoch_begins(epoch(it), std::min(share.steps_per_epoch, share.total - it),
                     share.steps_per_epoch);
  }
  return step;
}

void PeerJob::check_loss(double loss, std::int64_t it) const {
  if (!std::isfinite(loss))
    throw Error("worker " + std::to_string(o.rank) + ": training diverged at iteration " +
                std::to_string(it) + " (loss " + std::to_string(loss) + ")");
}

void PeerJob::maybe_evaluate(std::int64_t it) {
  const bool epoch_end = (it + 1) % share.steps_per_epoch == 0;
  if (o.rank == 0 && it + 1 < share.total &&
      (epoch_end || (o.eval_every > 0 && (it + 1) % o.eval_every == 0)))
    evaluate_now(*model, *test, o, log, result, false, epoch_end, true);
}

IterationRecord PeerJob::record(std::int64_t it, double loss, Clock::time_point start,
                                std::int64_t sent_before, std::size_t segments) const {
  IterationRecord r;
  r.iteration = it;
  r.epoch = epoch(it);
  r.loss = loss;
  r.ms = ms_between(start, Clock::now());
  r.start_s = ms_between(o.trace_origin.value_or(started), start) / 1e3;
  r.bytes_up = r.bytes_down = group->bytes_sent() - sent_before;
  r.plan_id = it < o.warmup ? 0 : 1;
  r.push_segments = segments;
  r.predicted_slowest_ms = it < o.warmup ? 0 : result.predicted_ms;
  return r;
}

WorkerResult PeerJob::finish() {
  model->set_observer(nullptr);
  result.final_weights = model->flat_params();
  if (o.rank == 0) {
    result.state_dict = model->export_pt();
    evaluate_now(*model, *test, o, log, result, true, false, true);
  }
  std::vector<double> ms;
  for (std::size_t i = static_cast<std::size_t>(std::min<std::int64_t>(o.warmup, share.total));
       i < result.iterations.size(); ++i)
    ms.push_back(result.iterations[i].ms);
  result.median_iteration_ms = ms.empty() ? 0 : median(ms);
  log.status(result, "done", true);
  return std::move(result);
}

}  // namespace dynacomm::worker
