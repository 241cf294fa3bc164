#include "ps/server.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <deque>
#include <future>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "base/error.h"
#include "base/log_limiter.h"
#include "compress/compressor.h"
#include "net/endpoint.h"
#include "net/job_protocol.h"
#include "net/wire.h"
#include "net/zmq_router.h"
#include "ps/agreement.h"
#include "ps/membership.h"
#include "ps/store.h"

namespace dynacomm::ps {

namespace {
using Clock = std::chrono::steady_clock;

struct PendingPull {
  std::string peer;
  int rank;
  std::int64_t iteration;
  int first, last;
  bool in_order;  // answered only after this worker's earlier in-order requests
  Clock::time_point received;
};

// The steady clock as the wire's arrived_us says it.
std::uint64_t wire_us(Clock::time_point t) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count());
}

double clock_ms(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t.time_since_epoch()).count();
}

// The first unit of first..last whose gradients hold a NaN or an infinity, or -1.
int first_non_finite(const ParameterStore& store, int first, int last, const float* grads) {
  for (int u = first; u <= last; ++u) {
    const std::int64_t n = store.unit_floats(u);
    bool finite = true;
    for (std::int64_t i = 0; i < n; ++i) finite &= std::isfinite(grads[i]);
    if (!finite) return u;
    grads += n;
  }
  return -1;
}

std::string units_name(int first, int last) {
  return first == last ? "unit " + std::to_string(first)
                       : "units " + std::to_string(first) + ".." + std::to_string(last);
}
}  // namespace

struct PsServer::Impl {
  ServerOptions options;
  std::unique_ptr<net::ZmqRouter> router;
  std::thread thread;
  std::atomic<bool> stopping{false};
  std::promise<std::vector<float>> done;
  std::future<std::vector<float>> result = done.get_future();
  std::atomic<std::uint64_t> received{0}, sent{0}, dropped{0};

  // I/O thread state.
  net::WireLimits limits;
  std::optional<net::Hello> job;        // the first hello: what the job runs
  std::unique_ptr<Membership> members;  // who is in the job
  // Pushes decoded with it (the wire's codec field; only float32 so far, net/wire.h).
  std::unique_ptr<compress::Compressor> codec = compress::make_compressor("none");
  std::vector<float> scratch;  // what the codec decodes into when it must copy
  std::unique_ptr<ParameterStore> store;
  std::deque<PendingPull> pending;
  std::int64_t trace_from = 0, trace_count = 0;
  std::vector<PsEvent> events;
  // Per iteration, the largest compute time and predicted iteration time any worker sent
  // with its pushes (compute_us, predicted_us), for the pull replies of the next; only the
  // last few iterations are kept.
  struct Slowest {
    std::uint64_t compute_us = 0, predicted_us = 0;
  };
  std::map<std::int64_t, Slowest> slowest;
  std::unique_ptr<PlanAgreement> agreement;  // the job's full-duplex plans
  std::string failure;                       // why the job stopped (empty: it runs)
  Clock::time_point failed_at;
  std::set<int> told;             // the ranks that have heard it
  std::int64_t newest = 0;        // the highest iteration any pull request or push named
  net::UpdateReport last_update;  // every push ack carries it (the aggregation)

  bool traced(std::int64_t iteration) const {
    return iteration >= trace_from && iteration < trace_from + trace_count;
  }

  // Lines about dropped or refused messages: a flood must not become a flood of writes.
  LogLimiter drops{20, std::chrono::seconds(10)};
  void log_drop(const std::string& s) {
    ++dropped;
    if (auto line = drops.admit(Clock::now(), s)) log(*line);
  }
  void log(const std::string& s) {
    if (options.log)
      options.log(s);
    else
      std::cerr << "dynacomm ps: " << s << "\n";
  }
  // A peer that has gone (a worker that finished or died) is not an error of the PS: what
  // was meant for it is dropped with a note, and the server carries on.
  void send(const std::string& peer, const net::Header& h, const void* data, std::size_t size) {
    send_frame(peer, h.type, net::encode(h, data, size));
  }
  // Sends a finished frame; ZeroMQ takes its bytes over without copying them.
  void send_frame(const std::string& peer, net::MessageType type, std::string&& msg) {
    const std::size_t size = msg.size();
    if (!router->send(peer, std::move(msg))) {
      if (type != net::MessageType::kPushAck)  // acks to a worker that left are expected
        log(std::string("dropped a ") + net::to_string(type) + " for " + who(peer) +
            ", which has disconnected");
      return;
    }
    sent += size;
  }
  std::string who(const std::string& peer) const { return members->who(peer); }
  // A JSON text for every worker that has joined (the job's plans, a change of them).
  void to_every_worker(net::MessageType type, std::int64_t iteration, const std::string& text) {
    for (const auto& [rank, id] : members->peers())
      send(id, net::Header{type, -1, iteration, 0, 0}, text.data(), text.size());
  }
  void send_error(const std::string& peer, const std::string& why) {
    send(peer, net::Header{net::MessageType::kError, -1, 0, 0, 0}, why.data(), why.size());
  }
  // The job cannot go on: every worker that joined hears why, and the PS stops with it.
  // Every worker that joined hears why at once; one that has not yet hears it at its next
  // message. The PS stops (wait() throws why) once every rank has heard, or after its
  // timeout.
  void stop_job(const std::string& why, int told_rank = -1) {
    if (!failure.empty()) return;
    failure = why;
    failed_at = Clock::now();
    if (told_rank >= 0) told.insert(told_rank);
    for (const auto& [rank, id] : members->peers()) {
      send_error(id, why);
      told.insert(rank);
    }
  }
  // After stop_job: each message is answered with why; true once every rank has heard.
  bool all_told() const { return static_cast<int>(told.size()) >= options.workers; }
  // A worker's refusal at hello: to it, and (the job cannot run) to the others.
  void refuse(const std::string& peer, int rank, const std::string& why) {
    send_error(peer, "refused: " + why);
    stop_job("worker " + std::to_string(rank) + " was refused: " + why, rank);
  }
  std::string config_conflict(const net::Hello& hello) const;
  void on_plans(const net::DecodeResult& m);
  void on_replan(const net::DecodeResult& m);
  // arrived: when the message was taken off the socket.
  void handle(const std::string& peer, const net::DecodeResult& m, Clock::time_point arrived);
  void on_hello(const std::string& peer, const net::DecodeResult& m, Clock::time_point arrived);
  void answer_pulls();
  void run();
};

void ServerOptions::validate() const {
  if (workers < 1) throw InvalidInput("ps: --workers must be at least 1");
  if (timeout.count() <= 0) throw InvalidInput("ps: timeout must be positive");
  net::check_endpoint(listen, "ps: --listen");
  StoreOptions s;
  s.workers = workers;
  s.sgd = sgd;
  s.validate();
}

void PsServer::Impl::on_hello(const std::string& peer, const net::DecodeResult& m,
                              Clock::time_point arrived) {
  const int rank = m.header.sender;
  net::Hello hello;
  try {
    hello = net::decode_hello(m.payload, m.header.payload_bytes);
  } catch (const InvalidInput& e) {
    return send_error(peer, std::string("hello: malformed job description: ") + e.what());
  }
  if (rank < 0 || rank >= options.workers) return send_error(peer, members->join(rank, peer));
  if (hello.workers != options.workers)
    return refuse(peer, rank,
                  "worker expects " + std::to_string(hello.workers) +
                      " workers, the PS runs a job of " + std::to_string(options.workers));
  const std::string model = options.model.empty() && job ? job->model : options.model;
  if (!model.empty() && hello.model != model)
    return refuse(peer, rank,
                  "worker runs model '" + hello.model + "', the PS serves '" + model + "'");
  if (const std::string c = config_conflict(hello); !c.empty()) return refuse(peer, rank, c);
  if (job && hello.unit_bytes != job->unit_bytes)
    return refuse(peer, rank, "unit layout differs from the other workers'");
  if (!job) {
    job = hello;
    trace_from = hello.trace_from;
    trace_count = std::min<std::int64_t>(hello.trace_count, 1000);
    limits.unit_bytes = hello.unit_bytes;
    limits.max_sender = options.workers - 1;
  }
  if (const std::string refused = members->join(rank, peer); !refused.empty())
    return send_error(peer, refused);
  net::Header welcome{net::MessageType::kHello, -1, 0, 0, 0};
  welcome.arrived_us = wire_us(arrived);  // the worker takes the clocks' offset from it
  send(peer, welcome, nullptr, 0);
}

// The first of the hello's settings that differs from the job's ("" when none does).
std::string PsServer::Impl::config_conflict(const net::Hello& hello) const {
  for (const auto& [flag, value] : options.job.settings)
    for (const auto& [their_flag, theirs] : hello.config)
      if (their_flag == flag && theirs != value)
        return "worker runs " + flag + " " + theirs.substr(0, 100) + ", the job " + flag + " " +
               value;
  return "";
}

// The job's full-duplex plans (ps/agreement.h decides; this sends what it returns).
void PsServer::Impl::on_plans(const net::DecodeResult& m) {
  net::PlanOffer offer = net::decode_plan_offer(m.payload, m.header.payload_bytes);
  if (auto agreed = agreement->offer(m.header.sender, std::move(offer)))
    to_every_worker(net::MessageType::kPlans, m.header.iteration, net::encode(*agreed));
}

void PsServer::Impl::on_replan(const net::DecodeResult& m) {
  net::ReplanReport report = net::decode_replan_report(m.payload, m.header.payload_bytes);
  if (auto change =
          agreement->report(m.header.sender, m.header.iteration, std::move(report), newest))
    to_every_worker(net::MessageType::kReplan, change->from_iteration, net::encode(*change));
}

void PsServer::Impl::answer_pulls() {
  if (!store) return;
  std::vector<char> blocked(static_cast<std::size_t>(options.workers), 0);  // by rank
  for (auto it = pending.begin(); it != pending.end();) {
    char& waits = blocked[static_cast<std::size_t>(it->rank)];
    // The wire has checked the unit range against the job's layout, which is the store's.
    if ((it->in_order && waits) ||
        !store->ready(it->first, it->last, it->iteration)) {  // before allocating the reply
      if (it->in_order) waits = true;
      ++it;
      continue;
    }
    // Held from before the store existed, or overtaken since: refused now, never thrown.
    if (const std::string why = store->unanswerable(it->first, it->last, it->iteration);
        !why.empty()) {
      log_drop("rank " + std::to_string(it->rank) + ": " + why);
      send_error(it->peer, "rank " + std::to_string(it->rank) + ": " + why);
      it = pending.erase(it);
      continue;
    }
    std::int64_t floats = 0;
    for (int u = it->first; u <= it->last; ++u) floats += store->unit_floats(u);
    // The parameters go straight from the store into the frame, and the frame to ZeroMQ.
    std::string frame = net::make_frame(static_cast<std::size_t>(floats) * sizeof(float));
    store->pull(it->first, it->last, it->iteration,
                reinterpret_cast<float*>(&frame[net::kHeaderBytes]));
    net::Header h{net::MessageType::kPullReply, -1, it->iteration,
                  static_cast<std::uint32_t>(it->first), static_cast<std::uint32_t>(it->last)};
    const auto now = Clock::now();
    h.held_us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(now - it->received).count());
    h.arrived_us = wire_us(it->received);
    if (auto s = slowest.find(it->iteration - 1); s != slowest.end()) {
      h.compute_us = s->second.compute_us;
      h.predicted_us = s->second.predicted_us;
    }
    net::seal_frame(frame, h);
    send_frame(it->peer, h.type, std::move(frame));
    if (traced(it->iteration))
      events.push_back({it->rank,
                        "pull " + units_name(it->first, it->last) + " (it " +
                            std::to_string(it->iteration) + ")",
                        "ps-pull", clock_ms(it->received), clock_ms(Clock::now())});
    it = pending.erase(it);
  }
}

void PsServer::Impl::handle(const std::string& peer, const net::DecodeResult& m,
                            Clock::time_point arrived) {
  const net::Header& h = m.header;
  if (!failure.empty()) {  // the job has stopped: whoever speaks hears why
    if (h.type != net::MessageType::kError) send_error(peer, failure);
    if (h.sender >= 0 && h.sender < options.workers) told.insert(h.sender);
    return;
  }
  if (h.type == net::MessageType::kHello) return on_hello(peer, m, arrived);
  if (h.type == net::MessageType::kJobConfig) {  // before a hello: any peer may ask
    const std::string text = net::encode(options.job);
    return send(peer, net::Header{net::MessageType::kJobConfig, -1, 0, 0, 0}, text.data(),
                text.size());
  }
  // A worker's error: its own rank, and (a worker that refused the job before joining)
  // a rank no other peer holds.
  if (h.type == net::MessageType::kError && h.sender >= 0 && h.sender < options.workers &&
      (members->is(h.sender, peer) || !members->peers().count(h.sender)))
    return stop_job("worker " + std::to_string(h.sender) + " failed: " +
                        std::string(reinterpret_cast<const char*>(m.payload),
                                    std::min<std::size_t>(m.header.payload_bytes, 2000)),
                    h.sender);
  if (!members->is(h.sender, peer))
    return log_drop(std::string("dropped ") + net::to_string(h.type) +
                    " from a peer that has not joined as rank " + std::to_string(h.sender));
  const int first = static_cast<int>(h.first_unit), last = static_cast<int>(h.last_unit);
  try {
    switch (h.type) {
      case net::MessageType::kInit: {
        if (h.sender != 0) return send_error(peer, "init: only rank 0 sends initial parameters");
        if (store) return send_error(peer, "init: the parameters are already initialised");
        const auto* values = reinterpret_cast<const float*>(m.payload);
        std::vector<std::vector<float>> units;
        for (auto b : limits.unit_bytes) {
          units.emplace_back(values, values + b / 4);
          values += b / 4;
        }
        StoreOptions s;
        s.workers = options.workers;
        s.sgd = options.sgd;
        if (s.sgd.total_iterations <= 0 && job)  // for schedules
          s.sgd.total_iterations = job->total_iterations;
        store = std::make_unique<ParameterStore>(s, std::move(units));
        break;
      }
      case net::MessageType::kPullRequest: {
        // Refused at once, naming why, rather than held forever or thrown later.
        if (store)
          if (const std::string why = store->unanswerable(first, last, h.iteration); !why.empty())
            throw InvalidInput("rank " + std::to_string(h.sender) + ": " + why);
        const auto mine = std::count_if(pending.begin(), pending.end(),
                                        [&](const PendingPull& p) { return p.rank == h.sender; });
        // A worker has at most two iterations' pulls out (a full-duplex plan's early
        // requests), one per unit at most in each: a bound on what a peer can make us hold.
        if (static_cast<std::size_t>(mine) >= 4 * limits.unit_bytes.size() + 64)
          throw InvalidInput("rank " + std::to_string(h.sender) + " has " + std::to_string(mine) +
                             " pulls waiting already; this one is refused");
        newest = std::max(newest, h.iteration);
        pending.push_back({peer, h.sender, h.iteration, first, last,
                           (h.flags & net::kFlagInOrder) != 0, arrived});
        break;
      }
      case net::MessageType::kPush: {
        if (!store) return send_error(peer, "push before the parameters were initialised");
        const auto start = Clock::now();
        std::int64_t floats = 0;
        for (int u = first; u <= last; ++u) floats += store->unit_floats(u);
        const float* grads = codec->decode(m.payload, h.payload_bytes, floats, scratch);
        if (const int bad = first_non_finite(*store, first, last, grads); bad >= 0)
          throw InvalidInput("push from rank " + std::to_string(h.sender) + ", iteration " +
                             std::to_string(h.iteration) + ": unit " + std::to_string(bad) +
                             " has NaN or infinite gradients; not applied (has training "
                             "diverged? a lower --lr may help)");
        const std::vector<int> advanced = store->push(h.sender, first, last, h.iteration, grads);
        newest = std::max(newest, h.iteration);
        const auto end = Clock::now();
        Slowest& s = slowest[h.iteration];
        s.compute_us = std::max(s.compute_us, h.compute_us);
        s.predicted_us = std::max(s.predicted_us, h.predicted_us);
        while (slowest.size() > 8) slowest.erase(slowest.begin());
        net::Header ack{net::MessageType::kPushAck, -1, h.iteration, h.first_unit, h.last_unit};
        ack.held_us = static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(end - start).count());
        ack.arrived_us = wire_us(arrived);
        if (!advanced.empty())  // this push completed its units: the aggregation
          last_update = {last_update.sequence + 1, h.payload_bytes, ack.held_us};
        char report[net::kUpdateReportBytes];
        net::put_update_report(report, last_update);
        send(peer, ack, report, sizeof report);
        if (traced(h.iteration)) {
          const std::string what =
              units_name(first, last) + " (it " + std::to_string(h.iteration) + ")";
          events.push_back({h.sender, "push " + what, "ps-push", clock_ms(start), clock_ms(end)});
          if (!advanced.empty())
            events.push_back(
                {options.workers, "update " + what, "ps-update", clock_ms(start), clock_ms(end)});
        }
        break;
      }
      case net::MessageType::kPlans:
        on_plans(m);
        break;
      case net::MessageType::kReplan:
        on_replan(m);
        break;
      case net::MessageType::kShutdown:
        members->leave(h.sender);
        break;
      default:
        return log_drop(std::string("dropped unexpected ") + net::to_string(h.type) +
                        " from rank " + std::to_string(h.sender));
    }
  } catch (const InvalidInput& e) {
    log_drop(std::string("rank ") + std::to_string(h.sender) + ": " + e.what());
    return send_error(peer, e.what());
  }
  answer_pulls();
}

void PsServer::Impl::run() {
  auto last_message = std::chrono::steady_clock::now();
  try {
    while (!stopping) {
      net::Inbound in;
      if (!failure.empty() && (all_told() || Clock::now() - failed_at > options.timeout))
        throw Error("ps: " + failure);
      const bool got = router->poll(Clock::now() + std::chrono::milliseconds(100), &in);
      if (std::chrono::steady_clock::now() - last_message > options.timeout) {  // message or not
        const std::string missing = members->missing();
        throw Timeout("ps: no message from the job's workers for " +
                      std::to_string(options.timeout.count()) + " ms" +
                      (missing.empty() ? "" : " (workers not joined: " + missing + ")"));
      }
      if (!got) continue;
      if (!in.ok()) {
        log_drop("dropped a message of " + std::to_string(in.parts + 1) + " frames");
        continue;
      }
      const auto arrived = in.received;
      received += in.size();
      const std::string& peer = in.peer;
      net::DecodeResult m = net::decode(in.data(), in.size(), limits);
      if (!m.ok()) {
        log_drop("dropped a malformed message from " + who(peer) + ": " + m.error);
        continue;
      }
      handle(peer, m, arrived);
      // Only the job's own workers keep the PS waiting: junk, or a stranger's messages,
      // must not hold off its timeout.
      if (members->is(m.header.sender, peer)) last_message = std::chrono::steady_clock::now();
      if (members->all_left() && store) {
        done.set_value(store->snapshot());
        return;
      }
    }
    throw Error("ps: stopped before the workers finished");
  } catch (...) {
    done.set_exception(std::current_exception());
  }
}

PsServer::PsServer(const ServerOptions& options) : impl_(std::make_unique<Impl>()) {
  options.validate();
  impl_->options = options;
  impl_->router = std::make_unique<net::ZmqRouter>(options.listen);
  impl_->members = std::make_unique<Membership>(options.workers);
  impl_->agreement = std::make_unique<PlanAgreement>(
      options.workers, [impl = impl_.get()](const std::string& line) { impl->log(line); });
}

PsServer::~PsServer() { stop(); }

const std::string& PsServer::endpoint() const { return impl_->router->endpoint(); }

void PsServer::start() {
  if (impl_->thread.joinable()) return;
  impl_->thread = std::thread([this] { impl_->run(); });
}

std::vector<float> PsServer::wait() {
  std::vector<float> out = impl_->result.get();
  stop();
  return out;
}

void PsServer::stop() {
  impl_->stopping = true;
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::uint64_t PsServer::bytes_received() const { return impl_->received; }
std::uint64_t PsServer::bytes_sent() const { return impl_->sent; }
std::uint64_t PsServer::messages_dropped() const { return impl_->dropped; }
std::vector<PsEvent> PsServer::trace_events() const {
  if (impl_->thread.joinable()) return {};  // owned by the I/O thread until it stops
  return impl_->events;
}

}  // namespace dynacomm::ps
