#include "worker/gossip_worker.h"

#include <torch/torch.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <exception>
#include <thread>

#include "base/stats.h"
#include "plan/model/gossip.h"
#include "train/local_training.h"
#include "worker/peer_job.h"

namespace dynacomm::worker {

namespace {

// The deadline rides in one float slot after the model, as its int32 bits.
void put_deadline(std::vector<float>& message, std::int32_t deadline) {
  std::memcpy(&message.back(), &deadline, sizeof deadline);
}
std::int32_t get_deadline(const std::vector<float>& message) {
  std::int32_t d = 0;
  std::memcpy(&d, &message.back(), sizeof d);
  return d;
}

// x <- sum_j W_ij x_j over the first x.size() floats, in the row's (rank) order.
void mix(std::vector<float>& x, const std::vector<std::pair<int, double>>& row, int self,
         const std::vector<int>& peers, const std::vector<std::vector<float>>& from) {
  std::vector<double> out(x.size(), 0.0);
  for (const auto& [j, w] : row) {
    const std::vector<float>& xj =
        j == self ? x : from[std::find(peers.begin(), peers.end(), j) - peers.begin()];
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += w * xj[i];
  }
  for (std::size_t i = 0; i < out.size(); ++i) x[i] = static_cast<float>(out[i]);
}

// One exchange on its own thread; what it threw is rethrown by join().
class BackgroundExchange {
 public:
  BackgroundExchange(collective::RingGroup& group, const std::vector<float>& message,
                     const std::vector<int>& peers, std::vector<std::vector<float>>& from,
                     std::int64_t it)
      : thread_([&, it] {
          try {
            const auto start = Clock::now();
            std::vector<float*> into;
            for (auto& f : from) into.push_back(f.data());
            group.exchange(message.data(), static_cast<std::int64_t>(message.size()), peers, into,
                           "iteration " + std::to_string(it));
            ms_ = ms_between(start, Clock::now());
          } catch (...) {
            error_ = std::current_exception();
          }
        }) {}
  ~BackgroundExchange() {
    if (thread_.joinable()) thread_.join();
  }
  // Waits for the exchange; its time (the sends and receives, from its start).
  double join() {
    thread_.join();
    if (error_) std::rethrow_exception(error_);
    return ms_;
  }

 private:
  double ms_ = 0;
  std::exception_ptr error_;
  std::thread thread_;
};

// The whole iteration's compute; its time.
std::pair<double, double> forward_backward(PeerJob& job, std::int64_t step) {
  const auto start = Clock::now();
  torch::Tensor loss =
      train::batch_loss(*job.model, job.train, job.order, step * job.o.batch, job.o.batch);
  loss.backward();
  return {loss.item<double>(), ms_between(start, Clock::now())};
}

// The prediction (plan/model/gossip.h) from the warm-up's compute and exchanges (the first
// of each left out: it opens the connections and starts TCP; one warm-up iteration: the
// link's nominal rate).
void predict(PeerJob& job, plan::Topology t, const std::vector<double>& compute_ms,
             const std::vector<double>& exchange_ms, std::ostream& progress) {
  plan::ModelProfile p;
  p.model = job.o.model;
  p.batch = job.o.batch;
  plan::UnitProfile whole;
  whole.name = "model";
  whole.params = job.model->num_params();
  whole.bytes = whole.params * 4;
  whole.backward_ms =
      median(std::vector<double>(compute_ms.begin() + (compute_ms.size() > 1), compute_ms.end()));
  p.units.push_back(whole);
  WorkerResult& r = job.result;
  r.profile = p;
  const double exchange =
      exchange_ms.size() > 1
          ? median(std::vector<double>(exchange_ms.begin() + 1, exchange_ms.end()))
          : 0;
  r.predicted_ms = r.predicted_slowest_ms = r.predicted_sequential_ms =
      plan::simulate_gossip(p, job.o.link, t, job.o.workers, exchange);
  r.planned_link = job.o.link;
  const int n = job.model->num_units();
  r.plan = plan::Plan("gossip-" + plan::topology_name(t), {{0, n - 1}}, {{0, n - 1}});
  r.plans.push_back({1, r.plan.scheduler, r.plan, r.predicted_ms, r.predicted_ms, 0, 0});
  if (job.o.rank == 0)
    progress << "gossip: " << plan::topology_name(t) << " of " << job.o.workers
             << " workers, predicted " << r.predicted_ms << " ms per iteration ("
             << (exchange > 0 ? "the exchange measured in the warm-up: " +
                                    std::to_string(std::lround(exchange)) + " ms"
                              : std::string("the exchange from the link's rate"))
             << ")\n";
}

// After the last iteration: every rank's model becomes the workers' average.
void consensus(PeerJob& job) {
  std::vector<float> x = job.model->flat_params();
  job.group->allreduce_sum(x.data(), static_cast<std::int64_t>(x.size()), 0,
                           "the final average of the models");
  const float n = static_cast<float>(job.o.workers);
  for (float& v : x) v /= n;
  job.model->set_flat_params(x);
}

}  // namespace

WorkerResult run_gossip_worker(const WorkerOptions& options, std::ostream& progress) {
  PeerJob job(options, progress);
  const WorkerOptions& o = job.o;
  model::Model& model = *job.model;
  const plan::Topology topology = plan::parse_topology(o.topology);
  const std::vector<int> peers = plan::gossip_neighbours(topology, o.rank, o.workers);
  const auto row = plan::mixing_weights(topology, o.rank, o.workers);
  const std::size_t n = static_cast<std::size_t>(model.num_params());
  std::vector<float> message(n + 1);
  std::vector<std::vector<float>> from(peers.size(), std::vector<float>(n + 1));
  std::vector<double> warmup_ms, warmup_exchange_ms;
  std::int32_t deadline = INT32_MAX;
  for (std::int64_t it = 0; it < job.share.total; ++it) {
    const std::int64_t step = job.begin_iteration(it);
    if (it == o.warmup) predict(job, topology, warmup_ms, warmup_exchange_ms, progress);
    const auto start = Clock::now();
    const std::int64_t sent_before = job.group->bytes_sent();
    if (stop_requested()) deadline = std::min<std::int64_t>(deadline, it + o.workers);
    std::vector<float> x = model.flat_params();
    std::copy(x.begin(), x.end(), message.begin());
    put_deadline(message, deadline);
    BackgroundExchange exchange(*job.group, message, peers, from, it);
    model::seed_dropout(o.seed, o.rank, it);
    const auto [loss, compute_ms] = forward_backward(job, step);
    const double exchange_ms = exchange.join();
    job.check_loss(loss, it);
    for (const auto& f : from) deadline = std::min(deadline, get_deadline(f));
    mix(x, row, o.rank, peers, from);
    model.set_flat_params(x);
    for (int u = 0; u < model.num_units(); ++u)
      job.sgd->step(u, model.params(u), model.grads(u), it);
    IterationRecord r = job.record(it, loss, start, sent_before, 1);
    r.compute_ms = compute_ms;
    if (it < o.warmup) {
      warmup_ms.push_back(compute_ms);
      warmup_exchange_ms.push_back(exchange_ms);
    }
    job.result.iterations.push_back(r);
    job.log.iteration_done(job.result, step, it < o.warmup ? "warm-up" : "training");
    if (it >= deadline && it + 1 < job.share.total) {  // every worker stops here
      job.result.interrupted_at = it + 1;
      break;
    }
    job.maybe_evaluate(it);
  }
  consensus(job);
  return job.finish();
}

}  // namespace dynacomm::worker
