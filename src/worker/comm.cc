#include "worker/comm.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <utility>

#include "base/error.h"
#include "worker/catch_up.h"

namespace dynacomm::worker {

namespace {
Clock::duration ms(double x) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(x));
}

}  // namespace

Comm::Comm(net::Transport& transport, model::Model& model, const CommOptions& options)
    : model_(model),
      options_(options),
      slowdown_(options.device_slowdown),
      latency_now_(options.latency_ms),
      codec_(std::make_unique<compress::PushCodec>(options.compression, options.seed,
                                                   options.momentum)),
      pulls_(options.pull_compression, options.seed),
      latency_ms_(options.latency_ms),
      link_(transport, net::LinkEmulation{options.down_bps, options.up_bps, options.latency_ms,
                                          options.extra_overhead_ms}),
      ps_clock_(options.ps_clock_offset_ms) {
  if (!options.cloud_link.empty()) {
    cloud_ = net::SharedCloudLink::open(options.cloud_link);
    link_.set_cloud(cloud_.get());
  }
  const std::size_t n = static_cast<std::size_t>(model.num_units());
  if (options_.slicing.first_atom.size() != n + 1)
    throw Error("worker " + std::to_string(options_.rank) + ": the job's atoms describe " +
                std::to_string(static_cast<long>(options_.slicing.first_atom.size()) - 1) +
                " units, the model has " + std::to_string(n));
  gate_called.resize(n);
  gate_passed.resize(n);
  grads_ready.resize(n);
  cpu_called.resize(n);
  cpu_passed.resize(n);
  cpu_ready.resize(n);
  std::lock_guard lock(mu_);
  push_method_.assign(options_.slicing.atoms.size(), 0);  // dense until told otherwise
  held_version_.assign(options_.slicing.atoms.size(), -1);
}

Comm::~Comm() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake();
  if (thread_.joinable()) thread_.join();
}

void Comm::start() {
  thread_ = std::thread([this] { loop(); });
}

std::string Comm::where(int unit) const {
  return "worker " + std::to_string(options_.rank) + ": unit " + std::to_string(unit) + " (" +
         model_.units()[static_cast<std::size_t>(unit)].name + ") of iteration " +
         std::to_string(iteration_);
}

void Comm::check_failed() {
  if (error_) std::rethrow_exception(error_);
}

void Comm::fail(std::exception_ptr e) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!error_) error_ = e;
  cv_.notify_all();
}

Comm::PullRound Comm::round_for(std::int64_t iteration, const plan::Plan& plan) const {
  PullRound r;
  r.iteration = iteration;
  r.segments = plan.pull;
  r.segment_of_atom.assign(static_cast<std::size_t>(slicing_.num_atoms()), 0);
  for (std::size_t j = 0; j < plan.pull.size(); ++j)
    for (int a = plan.pull[j].first; a <= plan.pull[j].last; ++a)
      r.segment_of_atom[static_cast<std::size_t>(a)] = static_cast<int>(j);
  r.arrived.assign(plan.pull.size(), false);
  r.sent.assign(plan.pull.size(), Clock::time_point{});
  return r;
}

Comm::PullRound Comm::request_round(std::int64_t iteration, const plan::Plan& plan) {
  PullRound r = round_for(iteration, plan);
  // A full-duplex plan's order is kept by the PS; a priority-scheduled one is answered as
  // ready, the requests ascending.
  for (int j : plan.pull_sequence())
    requests_.push_back({iteration, j, plan.pull[static_cast<std::size_t>(j)],
                         plan.full_duplex && plan.credit_bytes == 0, fetch_exact_});
  return r;
}

Comm::PullRound* Comm::round_of(std::int64_t iteration) {
  if (current_.iteration == iteration) return &current_;
  if (next_.iteration == iteration) return &next_;
  return nullptr;
}

// The atoms' encodings lie back to back (net/wire.h checked the payload's size).
// With compressed pulls an atom is the PS's public copy or the update onto the version
// before, which this worker must hold (the PS sends one only then).
void Comm::write_params(const net::Message& m) {
  const std::uint8_t* at = m.payload();
  std::size_t left = static_cast<std::size_t>(m.header.payload_bytes);
  const std::int64_t v = m.header.iteration;
  for (auto a = m.header.first_unit; a <= m.header.last_unit; ++a) {
    const plan::Atom& atom = slicing_.atoms[a];
    std::int64_t& held = held_version_[a];
    if (!pulls_.dense() && left > 0 && *at == compress::PullCodec::kDelta && held != v - 1)
      throw Error("worker " + std::to_string(options_.rank) + ": the PS at " + link_.endpoint() +
                  " sent the update of atom " + std::to_string(a) + " to version " +
                  std::to_string(v) + ", but this worker holds version " + std::to_string(held) +
                  " (not the one before)");
    const std::size_t used = pulls_.apply({a, v}, at, left, atom.params,
                                          model_.params(atom.unit) + atom.offset, nullptr);
    held = v;
    at += used;
    left -= used;
  }
}

void Comm::begin_iteration(std::int64_t iteration, const plan::Plan& plan, double predicted_ms,
                           Exchange exchange) {
  std::lock_guard<std::mutex> lock(mu_);
  check_failed();
  iteration_ = iteration;
  push_label_ = iteration;
  plan_ = plan;
  predicted_ms_ = std::isfinite(predicted_ms) && predicted_ms > 0 ? predicted_ms : 0;
  // The prefetched replies that came before it began count in this iteration.
  const std::int64_t prefetched_bytes = next_.iteration == iteration ? next_bytes_down_ : 0;
  if (next_.iteration == iteration) {  // prefetched during the previous backward pass
    current_ = std::move(next_);
    for (const net::Message& m : current_.held) {  // the model is free to take them now
      write_params(m);
      current_.arrived[static_cast<std::size_t>(current_.segment_of_atom[m.header.first_unit])] =
          true;
    }
    current_.held.clear();
  } else if (exchange.pull) {
    current_ = request_round(iteration, plan);
  } else {  // a local step: the weights the model has
    current_ = round_for(iteration, plan);
    current_.arrived.assign(current_.arrived.size(), true);
  }
  next_ = PullRound{};
  ready_.assign(static_cast<std::size_t>(slicing_.num_atoms()), false);
  compute_so_far_ms_ = 0;
  forward_compute_ms_ = 0;
  // A step that does not push has every push "built" already: none is.
  push_built_.assign(plan.push.size(), !exchange.push);
  next_push_ = exchange.push ? 0 : plan.push.size();
  bytes_up_ = 0;
  bytes_down_ = prefetched_bytes;
  next_bytes_down_ = 0;
  acks_of_iteration_ = 0;
  wake();  // the requests to send
}

std::int64_t Comm::next_iteration() const {
  std::lock_guard<std::mutex> lock(mu_);
  return push_label(iteration_, current_.oldest_version, options_.catch_up) + 1;
}

void Comm::prefetch(std::int64_t iteration, const plan::Plan& plan) {
  std::lock_guard<std::mutex> lock(mu_);
  check_failed();
  if (iteration <= iteration_ || !plan.full_duplex)
    throw Error("worker " + std::to_string(options_.rank) + ": prefetch of iteration " +
                std::to_string(iteration) + " during iteration " + std::to_string(iteration_) +
                (plan.full_duplex ? "" : " with a phase-separated plan"));
  next_ = request_round(iteration, plan);
  wake();
}

// Emulating a slower device: after each piece of compute, wait as long again times
// (slowdown - 1), on the training thread, so everything downstream sees a slower device.
void Comm::stretch(Clock::time_point since) {
  const double f = slowdown_.load();
  if (f <= 1) return;
  const auto sleep = (Clock::now() - since) * (f - 1);
  std::this_thread::sleep_for(sleep);
  slept_ms_ += std::chrono::duration<double, std::milli>(sleep).count();
}

std::string Comm::codec_state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return codec_->state();
}

void Comm::codec_state_into(std::string& out) const {
  std::lock_guard<std::mutex> lock(mu_);
  codec_->state_into(out);
}

void Comm::set_codec_state(const std::string& state) {
  std::lock_guard<std::mutex> lock(mu_);
  codec_->set_state(state);
}

void Comm::set_push_methods(const std::vector<int>& per_unit) {
  const plan::Slicing& sl = options_.slicing;
  if (per_unit.size() + 1 != sl.first_atom.size())
    throw InvalidInput("push methods for " + std::to_string(per_unit.size()) +
                       " units, the model has " + std::to_string(sl.first_atom.size() - 1));
  std::vector<std::size_t> atoms(sl.atoms.size());
  for (std::size_t a = 0; a < atoms.size(); ++a) {
    const int k = per_unit[static_cast<std::size_t>(sl.atoms[a].unit)];
    if (k < 0 || static_cast<std::size_t>(k) >= codec_->size())
      throw InvalidInput("push method " + std::to_string(k) + " of a job with " +
                         std::to_string(codec_->size()));
    atoms[a] = static_cast<std::size_t>(k);
  }
  std::lock_guard lock(mu_);
  push_method_ = std::move(atoms);
}

void Comm::set_device_slowdown(double factor) {
  if (!(factor >= 1) || factor > 1000)
    throw InvalidInput("device slowdown must be in 1..1000, got " + std::to_string(factor));
  slowdown_.store(factor);
}

// A trace step's link change, applied by the comm thread (the emulation is its own). A
// direction paced here keeps its rate when the change gives none (0: the kernel's).
void Comm::set_link(double down_bps, double up_bps, double latency_ms) {
  if (!(down_bps >= 0) || !(up_bps >= 0) || !std::isfinite(down_bps) || !std::isfinite(up_bps) ||
      !(latency_ms >= 0) || !std::isfinite(latency_ms))
    throw InvalidInput("link change: bandwidths and latency must be finite and >= 0");
  latency_now_.store(latency_ms);
  defer([this, down_bps, up_bps, latency_ms] {
    net::LinkEmulation e = link_.link();
    if (e.down_bps > 0 && down_bps > 0) e.down_bps = down_bps;
    if (e.up_bps > 0 && up_bps > 0) e.up_bps = up_bps;
    e.latency_ms = latency_ms;
    link_.set_link(e);
    std::lock_guard<std::mutex> lock(mu_);
    latency_ms_ = latency_ms;
  });
}

double Comm::latency_ms() const { return latency_now_.load(); }

void Comm::defer(std::function<void()> call) {
  {
    std::lock_guard<std::mutex> lock(deferred_mu_);
    deferred_.push_back(std::move(call));
  }
  wake();
}

void Comm::run_deferred() {
  std::vector<std::function<void()>> calls;
  {
    std::lock_guard<std::mutex> lock(deferred_mu_);
    calls.swap(deferred_);
  }
  for (auto& call : calls) call();
}

// The training thread's own work so far: its CPU time, plus the emulated slowdown's sleeps
// (work a slower device would have done).
double Comm::thread_cpu_ms() const {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6 + slept_ms_;
}

Clock::time_point Comm::forward_done() {
  stretch(gate_passed.back());
  backward_mark_ = Clock::now();
  cpu_forward_end = thread_cpu_ms();
  if (std::this_thread::get_id() != training_thread_) cpu_valid = false;
  forward_compute_ms_ += ms_between(gate_passed.back(), backward_mark_);
  backward_start_ = backward_mark_;
  return backward_mark_;
}

void Comm::before_forward(int unit) {
  if (unit > 0) stretch(gate_passed[static_cast<std::size_t>(unit) - 1]);
  gate_called[static_cast<std::size_t>(unit)] = Clock::now();
  cpu_called[static_cast<std::size_t>(unit)] = thread_cpu_ms();
  if (unit == 0) {
    training_thread_ = std::this_thread::get_id();
    cpu_valid = true;
  } else if (std::this_thread::get_id() != training_thread_) {
    cpu_valid = false;
  }
  if (unit > 0)
    forward_compute_ms_ += ms_between(gate_passed[static_cast<std::size_t>(unit) - 1],
                                      gate_called[static_cast<std::size_t>(unit)]);
  std::unique_lock<std::mutex> lock(mu_);
  // The pull segments holding the unit's atoms: consecutive, since pulls ascend.
  const auto first = static_cast<std::size_t>(current_.segment_of_atom[static_cast<std::size_t>(
      slicing_.first_atom[static_cast<std::size_t>(unit)])]);
  const auto last = static_cast<std::size_t>(
      current_.segment_of_atom[static_cast<std::size_t>(slicing_.last_atom(unit))]);
  if (!cv_.wait_for(lock, options_.timeout, [&] {
        if (error_) return true;
        for (std::size_t j = first; j <= last; ++j)
          if (!current_.arrived[j]) return false;
        return true;
      }))
    throw Timeout(where(unit) + ": parameters did not arrive from the PS at " + link_.endpoint() +
                  " within " + std::to_string(options_.timeout.count()) + " ms");
  check_failed();
  if (fault_ && unit == model_.num_units() / 2)
    fault_->at(Fault::Phase::kForward, current_.iteration);
  gate_passed[static_cast<std::size_t>(unit)] = Clock::now();
  cpu_passed[static_cast<std::size_t>(unit)] = thread_cpu_ms();
}

void Comm::gradients_ready(int unit) {
  stretch(backward_mark_);
  const auto now = Clock::now();
  backward_mark_ = now;
  cpu_ready[static_cast<std::size_t>(unit)] = thread_cpu_ms();
  if (std::this_thread::get_id() != training_thread_) cpu_valid = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    grads_ready[static_cast<std::size_t>(unit)] = now;
    compute_so_far_ms_ = forward_compute_ms_ + ms_between(backward_start_, now);
    for (int a = slicing_.first_atom[static_cast<std::size_t>(unit)]; a <= slicing_.last_atom(unit);
         ++a)
      ready_[static_cast<std::size_t>(a)] = true;
  }
  wake();  // the pushes to build
}

std::optional<double> Comm::slowest_compute_factor(std::int64_t iteration) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = barrier_.find(iteration);
  if (it == barrier_.end() || !(it->second.own_ms > 0) || !(it->second.slowest_ms > 0))
    return std::nullopt;
  // The slowest includes this worker, so >= 1 but for rounding; a PS reporting nonsense
  // (beyond an hour) was dropped on arrival, and the factor is capped all the same.
  return std::clamp(it->second.slowest_ms / it->second.own_ms, 1.0, 100.0);
}

std::optional<double> Comm::slowest_predicted_ms(std::int64_t iteration) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = barrier_.find(iteration);
  if (it == barrier_.end() || !(it->second.slowest_predicted_ms > 0)) return std::nullopt;
  return it->second.slowest_predicted_ms;
}

std::vector<Comm::LinkEvent> Comm::take_link_events() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(link_events_);
}

void Comm::finish_iteration() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, options_.timeout,
                    [&] { return error_ || next_push_ == plan_.push.size(); }))
    throw Timeout("worker " + std::to_string(options_.rank) + ": pushes of iteration " +
                  std::to_string(iteration_) + " not sent within " +
                  std::to_string(options_.timeout.count()) + " ms");
  check_failed();
}

net::AgreedPlans Comm::agree_plans(const net::PlanOffer& plans) {
  defer([this, offer = net::encode(plans)] {
    std::int64_t iteration;
    {
      std::lock_guard<std::mutex> lock(mu_);
      iteration = iteration_;
    }
    link_.send(net::Header{net::MessageType::kPlans, options_.rank, iteration, 0, 0}, offer.data(),
               offer.size());
  });
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, options_.timeout, [&] { return error_ || agreed_plans_.has_value(); }))
    throw Timeout("worker " + std::to_string(options_.rank) + ": the PS at " + link_.endpoint() +
                  " did not answer with the job's plans within " +
                  std::to_string(options_.timeout.count()) +
                  " ms (it waits for every worker's, made after its warm-up)");
  check_failed();
  try {
    return net::decode_agreed_plans(agreed_plans_->data(), agreed_plans_->size());
  } catch (const InvalidInput& e) {
    throw Error("worker " + std::to_string(options_.rank) +
                ": the job's plans from the PS: " + e.what());
  }
}

std::vector<plan::TransferSample> Comm::take_aggregations() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(aggregations_, {});
}

std::vector<PushCosts> Comm::take_push_costs() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(push_costs_done_, {});
}

void Comm::report_replan(std::int64_t iteration, const net::ReplanReport& report) {
  std::string text = net::encode(report);
  {
    std::lock_guard<std::mutex> lock(mu_);
    replan_report_.emplace(iteration, std::move(text));  // replaces one not yet sent
  }
  wake();
}

std::optional<net::JobPlanChange> Comm::take_job_replan() {
  std::optional<std::string> text;
  {
    std::lock_guard<std::mutex> lock(mu_);
    text = std::exchange(job_replan_, std::nullopt);
  }
  if (!text) return std::nullopt;
  try {
    return net::decode_job_plan_change(text->data(), text->size());
  } catch (const InvalidInput& e) {
    throw Error("worker " + std::to_string(options_.rank) +
                ": the job's next plan from the PS: " + e.what());
  }
}

void Comm::wait_for_acks() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, options_.timeout, [&] {
        return error_ || acks_of_iteration_ >= static_cast<std::int64_t>(plan_.push.size());
      }))
    throw Timeout("worker " + std::to_string(options_.rank) + ": the PS at " + link_.endpoint() +
                  " did not acknowledge the pushes of iteration " + std::to_string(iteration_) +
                  " within " + std::to_string(options_.timeout.count()) + " ms");
  check_failed();
}

void Comm::wait_for_pushes_before(std::int64_t iteration) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, options_.timeout, [&] {
        if (error_) return true;
        if (!pushes_.empty() && pushes_.begin()->first.first < iteration) return false;
        return !push_queue_.has_before(iteration);
      }))
    throw Timeout("worker " + std::to_string(options_.rank) + ": the PS at " + link_.endpoint() +
                  " did not acknowledge the pushes before iteration " + std::to_string(iteration) +
                  " within " + std::to_string(options_.timeout.count()) + " ms");
  check_failed();
}

// A push has arrived at the PS when its ack left, less the PS's processing time; the ack's
// own trip is the transport's (unemulated) one-way time.
void Comm::on_ack(const net::Message& m) {
  const Clock::time_point received = m.received;  // timed from the socket
  std::lock_guard<std::mutex> lock(mu_);
  if (auto c = push_costs_.find({m.header.iteration, m.header.first_unit});
      c != push_costs_.end()) {
    // The PS's decoding of the push (net/wire.h: a push ack's compute_us).
    if (m.header.compute_us < 60'000'000)
      c->second.decode_ms = static_cast<double>(m.header.compute_us) / 1000.0;
    push_costs_done_.push_back(std::move(c->second));
    push_costs_.erase(c);
    if (push_costs_done_.size() > 4096) push_costs_done_.erase(push_costs_done_.begin());
  }
  auto it = pushes_.find({m.header.iteration, m.header.first_unit});
  if (it == pushes_.end()) return;  // not ours to time (e.g. already timed)
  const PushInFlight p = it->second;
  pushes_.erase(it);
  push_queue_.acked(p.bytes);
  // Arrived when the PS says (the ack may have queued on the downlink behind pull
  // replies), else when the ack left less the PS's processing and the one-way time.
  Clock::time_point done =
      received - ms(static_cast<double>(m.header.held_us) / 1000.0 + options_.transport_one_way_ms);
  if (const auto a = ps_clock_.arrival(m.header.arrived_us, p.start, received)) done = *a;
  const double busy = push_clock_.busy_ms(p.start, done, latency_ms_);
  link_events_.push_back({true, p.round, p.segment, p.bytes, p.start, done,
                          static_cast<double>(m.header.held_us) / 1000.0, busy});
  const net::UpdateReport u = net::get_update_report(m.payload());
  if (u.sequence > last_update_ && u.bytes > 0 && u.us < 60'000'000) {  // new and plausible
    last_update_ = u.sequence;
    aggregations_.push_back(
        {static_cast<double>(u.bytes), static_cast<double>(u.us) / 1000.0, 1.0});
    if (aggregations_.size() > 4096) aggregations_.erase(aggregations_.begin());
  }
  if (m.header.iteration == push_label_) ++acks_of_iteration_;
  cv_.notify_all();
}

// Plan order: the next segment once all its gradients are in. Priority: any segment whose
// gradients are all in.
std::optional<std::size_t> Comm::next_push_to_build(bool priority) const {
  auto ready = [&](std::size_t k) {
    for (int a = plan_.push[k].first; a <= plan_.push[k].last; ++a)
      if (!ready_[static_cast<std::size_t>(a)]) return false;
    return true;
  };
  if (!priority) {
    if (next_push_ < plan_.push.size() && ready(next_push_)) return next_push_;
    return std::nullopt;
  }
  for (std::size_t k = 0; k < plan_.push.size(); ++k)
    if (!push_built_[k] && ready(k)) return k;
  return std::nullopt;
}

void Comm::fetch_all(std::int64_t iteration) {
  const int last = slicing_.num_atoms() - 1;
  plan::Plan all{"fetch", {{0, last}}, {{0, last}}};
  all.atom_params = slicing_.atom_params;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fetch_exact_ = true;  // the parameters themselves, not the public copy
  }
  begin_iteration(iteration, all);
  std::unique_lock<std::mutex> lock(mu_);
  next_push_ = 1;  // nothing to push
  if (!cv_.wait_for(lock, options_.timeout, [&] { return error_ || current_.arrived[0]; }))
    throw Timeout("worker " + std::to_string(options_.rank) + ": final parameters (iteration " +
                  std::to_string(iteration) + ") did not arrive from the PS at " +
                  link_.endpoint());
  check_failed();
}

void Comm::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    send_goodbye_ = true;
    goodbye_deadline_ = Clock::now() + options_.timeout;
  }
  wake();
  if (thread_.joinable()) thread_.join();
  check_failed();
}

std::pair<std::int64_t, std::int64_t> Comm::bytes_moved() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {bytes_up_, bytes_down_};
}

void Comm::loop() {
  try {
    while (true) {
      run_deferred();
      const auto now = Clock::now();
      // Nothing is timed here but the goodbye's deadline: the link emulation wakes its
      // own poll when a held frame is due.
      auto until = now + std::chrono::milliseconds(100);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) return;
        queue_pull_requests();
        send_control();
        build_pushes();
        release_pushes(now);
        if (goodbye_done()) return;
      }
      net::Message m;
      if (link_.poll(until, &m)) take(std::move(m));
    }
  } catch (...) {
    fail(std::current_exception());
  }
}

// The comm thread's steps; those named "under mu_" are called with it held.

// Under mu_: the pull requests asked for; they reach the PS one latency later.
void Comm::queue_pull_requests() {
  for (const PullRequest& r : requests_) {
    net::Header h{net::MessageType::kPullRequest, options_.rank, r.iteration,
                  static_cast<std::uint32_t>(r.units.first),
                  static_cast<std::uint32_t>(r.units.last)};
    if (r.in_order) h.flags = net::kFlagInOrder;
    if (r.exact) h.flags |= net::kFlagExact;
    const auto leaves = link_.send_timed(net::encode(h, nullptr, 0));
    if (PullRound* round = round_of(r.iteration))
      round->sent[static_cast<std::size_t>(r.segment)] = leaves;
    if (fault_) fault_->at(Fault::Phase::kPull, r.iteration);
  }
  requests_.clear();
}

// Under mu_: the re-planning report, control traffic (neither paced nor delayed).
void Comm::send_control() {
  // Alive, every second: the PS drops a worker it has not heard from (ps/membership.h).
  if (const auto now = Clock::now(); now - last_heartbeat_ >= std::chrono::seconds(1)) {
    link_.send(net::Header{net::MessageType::kHeartbeat, options_.rank, 0, 0, 0}, nullptr, 0);
    last_heartbeat_ = now;
  }
  if (replan_report_) {
    const auto& [iteration, text] = *replan_report_;
    link_.send(net::Header{net::MessageType::kReplan, options_.rank, iteration, 0, 0}, text.data(),
               text.size());
    replan_report_.reset();
  }
}

// Under mu_: a frame for every push segment whose gradients are in, queued.
void Comm::build_pushes() {
  const bool priority = plan_.credit_bytes > 0;
  // Catching up: every pull is in (the backward pass has begun), and the gradients are of
  // versions the oldest of which the pushes name: on time for it, or late, never ahead.
  if (next_push_ == 0)
    push_label_ = push_label(iteration_, current_.oldest_version, options_.catch_up);
  const std::int64_t iteration = push_label_;
  while (const std::optional<std::size_t> k = next_push_to_build(priority)) {
    const plan::Segment& s = plan_.push[*k];
    // The gradients go straight into the frame (one copy: the model's buffers are
    // reused by the next backward pass), and the frame to ZeroMQ without another.
    std::int64_t bytes = 0;
    for (int a = s.first; a <= s.last; ++a) {
      const auto i = static_cast<std::size_t>(a);
      bytes += static_cast<std::int64_t>(
          codec_->encoded_bytes(push_method_[i], slicing_.atoms[i].params, iteration));
    }
    std::string frame = net::make_frame(static_cast<std::size_t>(bytes));
    auto* at = reinterpret_cast<std::uint8_t*>(&frame[net::kHeaderBytes]);
    // Compressed: each atom's encoding timed, here where it competes for the cores
    // (worker/codec_times.h).
    const bool timed = options_.compression != "none";
    PushCosts costs{iteration, {}, -1};
    for (int a = s.first; a <= s.last; ++a) {
      const auto i = static_cast<std::size_t>(a);
      const plan::Atom& atom = slicing_.atoms[i];
      const auto t0 = Clock::now();
      codec_->encode(push_method_[i], {a, iteration}, model_.grads(atom.unit) + atom.offset,
                     atom.params, at);
      if (timed)
        costs.atoms.push_back({atom.unit, static_cast<int>(push_method_[i]), atom.params,
                               ms_between(t0, Clock::now())});
      at += codec_->encoded_bytes(push_method_[i], atom.params, iteration);
    }
    if (timed) {
      push_costs_[{iteration, static_cast<std::uint32_t>(s.first)}] = std::move(costs);
      while (push_costs_.size() > 1024) push_costs_.erase(push_costs_.begin());
    }
    net::Header h{net::MessageType::kPush, options_.rank, iteration,
                  static_cast<std::uint32_t>(s.first), static_cast<std::uint32_t>(s.last)};
    h.codec = static_cast<net::Codec>(codec_->wire_codec());
    h.compute_us = static_cast<std::uint64_t>(std::llround(compute_so_far_ms_ * 1000));
    h.predicted_us = static_cast<std::uint64_t>(std::llround(predicted_ms_ * 1000));
    net::seal_frame(frame, h);
    Barrier& b = barrier_[iteration];
    b.own_ms = std::max(b.own_ms, compute_so_far_ms_);
    while (barrier_.size() > 16) barrier_.erase(barrier_.begin());
    push_queue_.add({iteration, static_cast<int>(*k), static_cast<std::uint32_t>(s.first), bytes,
                     plan_.credit_bytes, std::move(frame)});
    bytes_up_ += bytes;
    push_built_[*k] = true;
    unpushed_round_ = std::max(unpushed_round_, iteration + 1);
    ++next_push_;
    cv_.notify_all();
  }
}

// Under mu_: queued pushes onto the (emulated) uplink, as the plan or the credit allows.
void Comm::release_pushes(Clock::time_point now) {
  while (std::optional<PushQueue::Push> q = push_queue_.next()) {
    pushes_[{q->iteration, q->first_atom}] = PushInFlight{q->segment, q->bytes, now, iteration_};
    link_.send_timed(std::move(q->frame));  // paced by the emulated uplink
    if (fault_) fault_->at(Fault::Phase::kPush, q->iteration);
  }
}

// Under mu_: true once goodbye has been sent; Timeout when pushes stay unacknowledged.
bool Comm::goodbye_done() {
  // Goodbye only once the PS has acknowledged every push: on a slow link the last
  // pushes may still be in flight, and leaving would lose them.
  if (send_goodbye_ && !push_queue_.empty() && Clock::now() > goodbye_deadline_)
    throw Timeout("worker " + std::to_string(options_.rank) + ": " +
                  std::to_string(push_queue_.size()) + " push(es) could not leave: the PS at " +
                  link_.endpoint() + " did not acknowledge the ones before them within " +
                  std::to_string(options_.timeout.count()) + " ms");
  if (send_goodbye_ && link_.idle() && push_queue_.empty() && !pushes_.empty() &&
      Clock::now() > goodbye_deadline_) {
    const auto& [key, p] = *pushes_.begin();
    throw Timeout("worker " + std::to_string(options_.rank) + ": the PS at " + link_.endpoint() +
                  " did not acknowledge " + std::to_string(pushes_.size()) +
                  " push(es), the first of iteration " + std::to_string(key.first) + " from unit " +
                  std::to_string(key.second) + ", within " +
                  std::to_string(options_.timeout.count()) + " ms");
  }
  if (send_goodbye_ && link_.idle() && push_queue_.empty() && pushes_.empty()) {
    std::string bye = net::encode(
        net::Header{net::MessageType::kShutdown, options_.rank, unpushed_round_, 0, 0}, nullptr, 0);
    link_.send(std::move(bye));
    return true;
  }
  return false;
}

// A message the (emulated) link has delivered.
void Comm::take(net::Message m) {
  switch (m.header.type) {
    case net::MessageType::kPushAck:
      return on_ack(m);  // the credit comes back now
    case net::MessageType::kPullReply: {
      std::lock_guard<std::mutex> lock(mu_);
      return on_pull_reply(std::move(m));
    }
    case net::MessageType::kPlans:
    case net::MessageType::kReplan: {
      std::lock_guard<std::mutex> lock(mu_);
      (m.header.type == net::MessageType::kPlans ? agreed_plans_ : job_replan_)
          .emplace(reinterpret_cast<const char*>(m.payload()),
                   static_cast<std::size_t>(m.header.payload_bytes));
      cv_.notify_all();
      return;
    }
    case net::MessageType::kCheckpoint:
      if (m.header.iteration > checkpoint_.load()) checkpoint_.store(m.header.iteration);
      return;
    default:
      return;  // nothing else is meant for a running worker
  }
}

// Under mu_: a pull reply of a round asked for: timed, then into the model (this
// iteration's) or held (the next one's).
void Comm::on_pull_reply(net::Message m) {
  const Clock::time_point delivered = m.delivered;
  PullRound* round = round_of(m.header.iteration);
  if (round == nullptr) return;  // not asked for (any more): nothing to do with it
  const int seg = round->segment_of_atom[m.header.first_unit];
  round->oldest_version = round->oldest_version < 0
                              ? m.header.version
                              : std::min(round->oldest_version, m.header.version);
  const plan::Segment asked = round->segments[static_cast<std::size_t>(seg)];
  if (asked.first != static_cast<int>(m.header.first_unit) ||
      asked.last != static_cast<int>(m.header.last_unit))
    return;  // not a segment we asked for; the gate's timeout names what is missing
  // Counted in the iteration they are for (a prefetched reply may come before it begins).
  (round == &next_ ? next_bytes_down_ : bytes_down_) +=
      static_cast<std::int64_t>(m.header.payload_bytes);
  // The barrier's figures of t - 1; beyond an hour is nonsense from the PS, dropped.
  if (auto b = barrier_.find(round->iteration - 1); round->iteration > 0 && b != barrier_.end()) {
    const double compute_ms = static_cast<double>(m.header.compute_us) / 1000.0;
    const double predicted_ms = static_cast<double>(m.header.predicted_us) / 1000.0;
    if (compute_ms > 0 && compute_ms < 3.6e6)
      b->second.slowest_ms = std::max(b->second.slowest_ms, compute_ms);
    if (predicted_ms > 0 && predicted_ms < 3.6e6)
      b->second.slowest_predicted_ms = std::max(b->second.slowest_predicted_ms, predicted_ms);
  }
  // The reply left the PS once the request had arrived and waited held_us; the link
  // was busy with it from then (or from the previous reply's end) until it arrived,
  // less the one-way latency. The request arrived when the PS says (it may have
  // queued on the uplink behind pushes), else one way after it left.
  const double held_ms = static_cast<double>(m.header.held_us) / 1000.0;
  const Clock::time_point sent = round->sent[static_cast<std::size_t>(seg)];
  Clock::time_point reached = sent + ms(options_.transport_one_way_ms);
  if (const auto a = ps_clock_.arrival(m.header.arrived_us, sent, delivered, held_ms)) reached = *a;
  const double busy = pull_clock_.busy_ms(reached + ms(held_ms), delivered, latency_ms_);
  link_events_.push_back({false, round->iteration, seg,
                          static_cast<std::int64_t>(m.header.payload_bytes), sent, delivered,
                          held_ms, busy});
  if (round == &current_) {
    write_params(m);
    current_.arrived[static_cast<std::size_t>(seg)] = true;
  } else {  // the next iteration's: the model's units may still be in use
    next_.held.push_back(std::move(m));
  }
  cv_.notify_all();
}

}  // namespace dynacomm::worker
