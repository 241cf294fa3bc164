#include "worker/ring_worker.h"

#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>

#include "base/error.h"
#include "base/stats.h"
#include "collective/ring_group.h"
#include "compress/compressor.h"
#include "compress/powersgd.h"
#include "data/fashion_mnist.h"
#include "model/model.h"
#include "optim/sgd.h"
#include "plan/estimate/link_fit.h"
#include "plan/model/ring.h"
#include "plan/planners/ring_buckets.h"
#include "train/local_training.h"
#include "worker/bucket_ring.h"
#include "worker/data_share.h"
#include "worker/peer_job.h"
#include "worker/ring_replan.h"

namespace dynacomm::worker {

namespace {

std::vector<plan::Segment> layerwise(int units) {
  std::vector<plan::Segment> out;
  for (int u = units - 1; u >= 0; --u) out.push_back({u, u});
  return out;
}

// What the warm-up measured: every unit's times per iteration, every bucket's all-reduce.
struct WarmupLog {
  std::vector<std::vector<double>> forward, backward;  // [iteration][unit]
  std::vector<plan::TransferSample> allreduces;
  // [unit]: the codec's arithmetic (PowerSGD's, random-k's encoding and decoding) for the
  // unit alone (its buckets of one unit), ms.
  std::vector<std::vector<double>> codec;

  void add_buckets(const std::vector<plan::Segment>& buckets,
                   const std::vector<BucketRing::BucketTime>& times) {
    for (const plan::TransferSample& s : transfer_samples(times)) allreduces.push_back(s);
    for (std::size_t b = 0; b < times.size(); ++b) {
      const BucketRing::BucketTime& t = times[b];
      if (t.compute_ms > 0 && buckets[b].first == buckets[b].last) {
        codec.resize(std::max(codec.size(), static_cast<std::size_t>(buckets[b].first) + 1));
        codec[buckets[b].first].push_back(t.compute_ms);
      }
    }
  }

  // Medians over the warm-up, the cold first iteration left out when there are more.
  // The codec's arithmetic runs on the device's cores beside backward: it is counted in
  // the unit's backward time, as a PS codec's encoding is (plan/model/profile.h).
  plan::ModelProfile profile(plan::ModelProfile p) const {
    const std::size_t from = forward.size() > 1 ? 1 : 0;
    for (std::size_t u = 0; u < p.units.size(); ++u) {
      std::vector<double> f, b;
      for (std::size_t i = from; i < forward.size(); ++i) {
        f.push_back(forward[i][u]);
        b.push_back(backward[i][u]);
      }
      p.units[u].forward_ms = median(f);
      p.units[u].backward_ms = median(b);
      if (u < codec.size() && !codec[u].empty()) p.units[u].backward_ms += median(codec[u]);
    }
    return p;
  }
  // The ring's cost: fitted to the all-reduces, else the link's (one worker: none).
  plan::RingCost cost(const WorkerOptions& o) const {
    if (o.workers == 1) return {};
    const plan::LinkFit fit = plan::fit_link(allreduces);
    if (!fit.bandwidth_fitted) return plan::RingCost::of(o.link, o.workers);
    return {fit.overhead_ms, fit.bandwidth_bps};
  }
};

std::vector<plan::Segment> buckets_by_rule(const std::string& rule, const plan::ModelProfile& p,
                                           const plan::RingCost& cost) {
  if (rule == "planned") return plan::optimal_ring_buckets(p, cost);
  if (rule == "ddp") return plan::fixed_ring_buckets(p, 25 << 20, 1 << 20);
  if (rule == "one") return {{0, p.num_units() - 1}};
  return layerwise(p.num_units());
}

// --compress powersgd:R: the model's tensors under PowerSGD (nullptr for another codec).
std::unique_ptr<compress::PowerSgd> low_rank_of(const WorkerOptions& o, const model::Model& m) {
  const std::optional<int> rank = compress::powersgd_rank(o.compression);
  if (!rank) return nullptr;
  std::vector<compress::TensorShape> tensors;
  std::int64_t at = 0;
  for (const model::UnitInfo& u : m.units())
    for (const std::vector<std::int64_t>& sizes : u.shapes) {
      tensors.push_back({at, sizes});
      at += std::accumulate(sizes.begin(), sizes.end(), std::int64_t{1},
                            std::multiplies<std::int64_t>());
    }
  return std::make_unique<compress::PowerSgd>(std::move(tensors), *rank, o.seed);
}

// --compress randomk:R: the shared-seed random-k codec (nullptr for another codec).
std::unique_ptr<compress::Compressor> selected_of(const WorkerOptions& o) {
  if (!compress::sums_selected_values(o.compression)) return nullptr;
  return compress::make_compressor(o.compression, o.seed);
}

plan::ModelProfile unit_bytes(const WorkerOptions& o, const model::Model& model,
                              const compress::PowerSgd* low_rank,
                              const compress::Compressor* selected) {
  plan::ModelProfile p;
  p.model = o.model;
  p.batch = o.batch;
  p.measured_with = "dynacomm all-reduce warm-up";
  std::int64_t at = 0;
  for (const model::UnitInfo& u : model.units()) {
    plan::UnitProfile up;
    up.name = u.name;
    up.params = u.params;
    up.bytes = u.params * (o.compression == "fp16" ? 2 : 4);  // what crosses the ring
    if (low_rank) {                                           // both factors' sums
      const auto [t0, t1] = low_rank->tensors_in(at, at + u.params);
      up.bytes = 4 * (low_rank->first_offset(t1) - low_rank->first_offset(t0) +
                      low_rank->second_offset(t1) - low_rank->second_offset(t0));
    }
    if (selected) up.bytes = static_cast<std::int64_t>(selected->encoded_bytes(u.params, 0));
    at += u.params;
    p.units.push_back(up);
  }
  return p;
}

// After the warm-up: rank 0 plans the job's buckets and publishes them; every rank runs
// them. The prediction and the plan go into the result.
std::vector<plan::Segment> plan_buckets(const WorkerOptions& o, collective::RingGroup& group,
                                        const WarmupLog& log, const plan::ModelProfile& bytes,
                                        WorkerResult& result, std::ostream& progress) {
  const int n = bytes.num_units();
  std::vector<plan::Segment> buckets;
  if (o.rank == 0) {
    const plan::ModelProfile profile = log.profile(bytes);
    const plan::RingCost cost = log.cost(o);
    buckets = buckets_by_rule(o.buckets, profile, cost);
    group.publish("buckets", encode_buckets(buckets));
    result.profile = profile;
    result.predicted_ms = plan::simulate_ring(profile, cost, buckets);
    result.predicted_slowest_ms = result.predicted_ms;  // rank 0's profile plans for all
    result.predicted_sequential_ms = plan::simulate_ring(profile, cost, {{0, n - 1}});
    result.planned_link = cost.as_push_link();
    char line[200];
    std::snprintf(line, sizeof line,
                  "all-reduce: %zu bucket(s) (%s), predicted %.1f ms per iteration (one bucket: "
                  "%.1f ms); ring cost %.2f ms + %.1f Mbit/s\n",
                  buckets.size(), o.buckets.c_str(), result.predicted_ms,
                  result.predicted_sequential_ms, cost.fixed_ms, cost.bps / 1e6);
    progress << line;
  } else {
    buckets = decode_buckets(group.read("buckets"), n);
  }
  result.plan = plan::Plan("allreduce-" + o.buckets, {{0, n - 1}}, buckets);
  result.plans.push_back(
      {1, result.plan.scheduler, result.plan, result.predicted_ms, result.predicted_ms, 0, 0});
  return buckets;
}

// The link trace's rows due as iteration `it` starts (`elapsed_s` into the trace): keyed
// by iteration, under the user-space emulation, the whole row; in seconds, under --net
// netns, the latency only (the launcher changes the rates with tc; the latency is the
// ring's to add, so it follows at the first iteration after its time).
void follow_link_rows(const WorkerOptions& o, collective::RingGroup& group,
                      const std::vector<plan::LinkTracePoint>& rows, std::int64_t it,
                      double elapsed_s, std::size_t& next) {
  for (; next < rows.size(); ++next) {
    const plan::LinkTracePoint& p = rows[next];
    if (o.link_trace.by_iteration ? p.iteration > it : p.time_s > elapsed_s) break;
    if (o.kernel_shaped)
      group.set_emulation({0, 0, p.latency_ms});
    else
      group.set_emulation({p.down_bps, p.up_bps, p.latency_ms});
  }
}

// One mini-batch forward and backward; the loss and when forward ended.
std::pair<double, Clock::time_point> forward_backward(model::Model& model,
                                                      const data::Dataset& train,
                                                      const std::vector<std::int64_t>& order,
                                                      std::int64_t begin, std::int64_t batch) {
  torch::Tensor loss = train::batch_loss(model, train, order, begin, batch);
  const auto forward_end = Clock::now();
  loss.backward();
  return {loss.item<double>(), forward_end};
}

// The mean of the sums, and the optimiser's step on every unit: the same on every worker.
void apply_mean(model::Model& model, const BucketRing& ring, optim::Sgd& sgd, int workers,
                std::int64_t it, std::vector<float>& mean) {
  const std::vector<float>& sums = ring.sums();
  mean.resize(sums.size());
  const float n = static_cast<float>(workers);
  for (std::size_t i = 0; i < sums.size(); ++i) mean[i] = sums[i] / n;
  for (int u = 0; u < model.num_units(); ++u)
    sgd.step(u, model.params(u), mean.data() + ring.offset(u), it);
}

}  // namespace

WorkerResult run_ring_worker(const WorkerOptions& options, std::ostream& progress) {
  PeerJob job(options, progress);
  const WorkerOptions& o = job.o;
  model::Model& model = *job.model;
  WorkerResult& result = job.result;
  const int n_units = model.num_units();
  const std::unique_ptr<compress::PowerSgd> low_rank = low_rank_of(o, model);
  const std::unique_ptr<compress::Compressor> selected = selected_of(o);
  BucketRing ring(model, *job.group, o.timeout, low_rank.get(), selected.get());
  model.set_observer(&ring);
  const plan::ModelProfile bytes = unit_bytes(o, model, low_rank.get(), selected.get());
  WarmupLog warmup;
  RingReplanner replanner(o, *job.group, result, job.log, progress);
  const std::vector<plan::LinkTracePoint> link_rows = o.link_trace.for_worker(o.rank);
  std::size_t link_row = 0;
  std::vector<float> mean;
  for (std::int64_t it = 0; it < job.share.total; ++it) {
    const std::int64_t step = job.begin_iteration(it);
    follow_link_rows(o, *job.group, link_rows, it,
                     ms_between(o.trace_origin.value_or(job.started), Clock::now()) / 1e3,
                     link_row);
    if (it == o.warmup) {  // rank 0's profile (result.profile) and cost plan the buckets
      std::vector<plan::Segment> first =
          plan_buckets(o, *job.group, warmup, bytes, result, progress);
      replanner.start(it, std::move(first), result.profile,
                      o.rank == 0 ? warmup.cost(o) : plan::RingCost{});
    }
    const std::vector<plan::Segment> plan =
        it < o.warmup ? (it % 2 ? layerwise(n_units) : std::vector<plan::Segment>{{0, n_units - 1}})
                      : replanner.before_iteration(it, step);
    const auto start = Clock::now();
    const std::int64_t sent_before = job.group->bytes_sent();
    model::seed_dropout(o.seed, o.rank, it);
    ring.begin(it, plan);
    const auto [loss, forward_end] =
        forward_backward(model, job.train, job.order, step * o.batch, o.batch);
    ring.finish();
    job.check_loss(loss, it);
    apply_mean(model, ring, *job.sgd, o.workers, it, mean);
    IterationRecord r = job.record(it, loss, start, sent_before, plan.size());
    const UnitTimes times = unit_times(ring.marks(forward_end));
    r.compute_ms = times.compute_ms;
    if (it < o.warmup) {
      warmup.forward.push_back(times.forward_ms);
      warmup.backward.push_back(times.backward_ms);
      warmup.add_buckets(plan, ring.bucket_times());
    } else {
      replanner.record(ring.bucket_times());
      r.plan_id = replanner.plan_id();
    }
    result.iterations.push_back(r);
    job.log.iteration_done(result, step, it < o.warmup ? "warm-up" : "training");
    if (ring.stop_votes() > 0 && it + 1 < job.share.total) {  // every worker stops here
      result.interrupted_at = it + 1;
      break;
    }
    job.maybe_evaluate(it);
  }
  return job.finish();  // every rank's final weights: the same bits
}

}  // namespace dynacomm::worker
