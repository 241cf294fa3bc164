#include "worker/comm.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"

namespace dynacomm::worker {

namespace {
Clock::duration ms(double x) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(x));
}
}  // namespace

Comm::Comm(net::Connection& connection, model::Model& model, const CommOptions& options)
    : conn_(connection),
      model_(model),
      options_(options),
      up_(options.up_bps, options.latency_ms, 0),
      down_(options.down_bps, options.latency_ms, 0) {
  const std::size_t n = static_cast<std::size_t>(model.num_units());
  gate_called.resize(n);
  gate_passed.resize(n);
  grads_ready.resize(n);
}

Comm::~Comm() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
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

void Comm::begin_iteration(std::int64_t iteration, const plan::Plan& plan) {
  std::lock_guard<std::mutex> lock(mu_);
  check_failed();
  iteration_ = iteration;
  plan_ = plan;
  segment_of_unit_.assign(static_cast<std::size_t>(model_.num_units()), 0);
  for (std::size_t j = 0; j < plan.pull.size(); ++j)
    for (int u = plan.pull[j].first; u <= plan.pull[j].last; ++u)
      segment_of_unit_[static_cast<std::size_t>(u)] = static_cast<int>(j);
  arrived_.assign(plan.pull.size(), false);
  ready_.assign(static_cast<std::size_t>(model_.num_units()), false);
  next_push_ = 0;
  send_pulls_ = true;
  bytes_up = bytes_down = 0;
  link_events_.clear();
  pull_sent_.assign(plan.pull.size(), Clock::time_point{});
}

void Comm::before_forward(int unit) {
  gate_called[static_cast<std::size_t>(unit)] = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  const int seg = segment_of_unit_[static_cast<std::size_t>(unit)];
  if (!cv_.wait_for(lock, options_.timeout,
                    [&] { return error_ || arrived_[static_cast<std::size_t>(seg)]; }))
    throw Timeout(where(unit) + ": parameters did not arrive from the PS at " + conn_.endpoint() +
                  " within " + std::to_string(options_.timeout.count()) + " ms");
  check_failed();
  gate_passed[static_cast<std::size_t>(unit)] = Clock::now();
}

void Comm::gradients_ready(int unit) {
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  grads_ready[static_cast<std::size_t>(unit)] = now;
  ready_[static_cast<std::size_t>(unit)] = true;
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

void Comm::fetch_all(std::int64_t iteration) {
  const int last = model_.num_units() - 1;
  begin_iteration(iteration, plan::Plan{"fetch", {{0, last}}, {{0, last}}});
  std::unique_lock<std::mutex> lock(mu_);
  next_push_ = 1;  // nothing to push
  if (!cv_.wait_for(lock, options_.timeout, [&] { return error_ || arrived_[0]; }))
    throw Timeout("worker " + std::to_string(options_.rank) + ": final parameters (iteration " +
                  std::to_string(iteration) + ") did not arrive from the PS at " +
                  conn_.endpoint());
  check_failed();
}

void Comm::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    send_goodbye_ = true;
  }
  if (thread_.joinable()) thread_.join();
  check_failed();
}

void Comm::loop() {
  try {
    while (true) {
      const auto now = Clock::now();
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) return;
        if (send_pulls_) {  // requests reach the PS one latency later
          for (std::size_t j = 0; j < plan_.pull.size(); ++j) pull_sent_[j] = now;
          for (const auto& s : plan_.pull)
            outgoing_.emplace(
                now + ms(options_.latency_ms),
                net::encode(net::Header{net::MessageType::kPullRequest, options_.rank, iteration_,
                                        static_cast<std::uint32_t>(s.first),
                                        static_cast<std::uint32_t>(s.last)},
                            nullptr, 0));
          send_pulls_ = false;
        }
        while (next_push_ < plan_.push.size()) {
          const plan::Segment& s = plan_.push[next_push_];
          bool all = true;
          for (int u = s.first; u <= s.last && all; ++u) all = ready_[static_cast<std::size_t>(u)];
          if (!all) break;
          std::vector<float> grads;
          for (int u = s.first; u <= s.last; ++u) {
            const float* g = model_.grads(u);
            grads.insert(grads.end(), g, g + model_.units()[static_cast<std::size_t>(u)].params);
          }
          const std::int64_t bytes = static_cast<std::int64_t>(grads.size() * sizeof(float));
          const auto extra =
              static_cast<std::int64_t>(options_.extra_overhead_ms * options_.up_bps / 8e3);
          const auto delivered = up_.deliver_at(now, bytes + extra);
          link_events_.push_back({true, static_cast<int>(next_push_), now, delivered});
          outgoing_.emplace(
              delivered, net::encode(net::Header{net::MessageType::kPush, options_.rank, iteration_,
                                                 static_cast<std::uint32_t>(s.first),
                                                 static_cast<std::uint32_t>(s.last)},
                                     grads.data(), static_cast<std::size_t>(bytes)));
          bytes_up += bytes;
          ++next_push_;
          cv_.notify_all();
        }
        if (send_goodbye_ && outgoing_.empty()) {
          std::string bye = net::encode(
              net::Header{net::MessageType::kShutdown, options_.rank, 0, 0, 0}, nullptr, 0);
          conn_.send_frame(bye);
          return;
        }
      }
      // Hand due frames to the socket.
      while (!outgoing_.empty() && outgoing_.begin()->first <= Clock::now()) {
        conn_.send_frame(outgoing_.begin()->second);
        outgoing_.erase(outgoing_.begin());
      }
      // Deliver pull replies whose emulated arrival time has come.
      while (!incoming_.empty() && incoming_.front().first <= Clock::now()) {
        net::Message m = std::move(incoming_.front().second);
        incoming_.pop_front();
        std::lock_guard<std::mutex> lock(mu_);
        const float* v = reinterpret_cast<const float*>(m.payload());
        for (auto u = m.header.first_unit; u <= m.header.last_unit; ++u) {
          const auto n = model_.units()[u].params;
          std::memcpy(model_.params(static_cast<int>(u)), v,
                      static_cast<std::size_t>(n) * sizeof(float));
          v += n;
        }
        bytes_down += static_cast<std::int64_t>(m.header.payload_bytes);
        if (m.header.iteration == iteration_) {
          const int seg = segment_of_unit_[m.header.first_unit];
          arrived_[static_cast<std::size_t>(seg)] = true;
          link_events_.push_back(
              {false, seg, pull_sent_[static_cast<std::size_t>(seg)], Clock::now()});
        }
        cv_.notify_all();
      }
      auto wait = std::chrono::milliseconds(1);
      net::Message m;
      if (conn_.poll(wait, &m)) {
        if (m.header.type != net::MessageType::kPullReply) continue;
        const auto bytes = static_cast<std::int64_t>(m.header.payload_bytes);
        const auto extra =
            static_cast<std::int64_t>(options_.extra_overhead_ms * options_.down_bps / 8e3);
        incoming_.emplace_back(down_.deliver_at(Clock::now(), bytes + extra), std::move(m));
      }
    }
  } catch (...) {
    fail(std::current_exception());
  }
}

}  // namespace dynacomm::worker
