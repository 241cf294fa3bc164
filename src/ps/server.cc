#include "ps/server.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <deque>
#include <future>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "base/error.h"
#include "net/endpoint.h"
#include "net/wire.h"
#include "net/zmq_message.h"
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

std::string units_name(int first, int last) {
  return first == last ? "unit " + std::to_string(first)
                       : "units " + std::to_string(first) + ".." + std::to_string(last);
}
}  // namespace

struct PsServer::Impl {
  ServerOptions options;
  zmq::context_t context{1};
  zmq::socket_t socket{context, zmq::socket_type::router};
  std::string endpoint;
  std::thread thread;
  std::atomic<bool> stopping{false};
  std::promise<std::vector<float>> done;
  std::future<std::vector<float>> result = done.get_future();
  std::atomic<std::uint64_t> received{0}, sent{0}, dropped{0};

  // I/O thread state.
  net::WireLimits limits;
  nlohmann::json job;                // the first hello's description
  std::map<int, std::string> peers;  // rank -> routing id
  std::unique_ptr<ParameterStore> store;
  std::deque<PendingPull> pending;
  int shut_down = 0;
  std::int64_t trace_from = 0, trace_count = 0;
  std::vector<PsEvent> events;
  // Per iteration, the largest compute time and predicted iteration time any worker sent
  // with its pushes (compute_us, predicted_us), for the pull replies of the next; only the
  // last few iterations are kept.
  struct Slowest {
    std::uint64_t compute_us = 0, predicted_us = 0;
  };
  std::map<std::int64_t, Slowest> slowest;
  // The workers' plans offered after their warm-ups (rank -> offer), until all are in.
  std::map<int, nlohmann::json> offered;
  bool plans_agreed = false;
  // Re-planning the job's full-duplex plan together (on_replan): each worker's latest
  // report on the plan in use (rank -> {current_ms, proposal?}), made from replan_from on.
  std::map<int, nlohmann::json> reports;
  std::int64_t replan_from = 0;   // the job's plan in use runs from this iteration
  std::int64_t newest = 0;        // the highest iteration any pull request or push named
  net::UpdateReport last_update;  // every push ack carries it (the aggregation)

  bool traced(std::int64_t iteration) const {
    return iteration >= trace_from && iteration < trace_from + trace_count;
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
    try {
      socket.send(zmq::buffer(peer), zmq::send_flags::sndmore);
      socket.send(net::owned_message(std::move(msg)), zmq::send_flags::none);
    } catch (const zmq::error_t& e) {
      if (e.num() != EHOSTUNREACH) throw;
      if (type != net::MessageType::kPushAck)  // acks to a worker that left are expected
        log(std::string("dropped a ") + net::to_string(type) + " for " + who(peer) +
            ", which has disconnected");
      return;
    }
    sent += size;
  }
  std::string who(const std::string& peer) const {
    for (const auto& [rank, id] : peers)
      if (id == peer) return "rank " + std::to_string(rank);
    return "an unknown peer";
  }
  // A JSON text for every worker that has joined (the job's plans, a change of them).
  void to_every_worker(net::MessageType type, std::int64_t iteration, const std::string& text) {
    for (const auto& [rank, id] : peers)
      send(id, net::Header{type, -1, iteration, 0, 0}, text.data(), text.size());
  }
  void send_error(const std::string& peer, const std::string& why) {
    send(peer, net::Header{net::MessageType::kError, -1, 0, 0, 0}, why.data(), why.size());
  }
  void on_plans(const std::string& peer, const net::DecodeResult& m);
  void on_replan(const std::string& peer, const net::DecodeResult& m);
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
  nlohmann::json hello;
  try {
    hello = nlohmann::json::parse(m.payload, m.payload + m.header.payload_bytes);
    (void)hello.at("model").get<std::string>();
    (void)hello.at("workers").get<int>();
    (void)hello.at("unit_bytes").get<std::vector<std::int64_t>>();
  } catch (const std::exception& e) {
    return send_error(peer, std::string("hello: malformed job description: ") + e.what());
  }
  if (rank < 0 || rank >= options.workers)
    return send_error(peer, "refused: rank " + std::to_string(rank) + " but the job has " +
                                std::to_string(options.workers) + " workers (ranks 0.." +
                                std::to_string(options.workers - 1) + ")");
  if (hello["workers"].get<int>() != options.workers)
    return send_error(peer,
                      "refused: worker expects " + std::to_string(hello["workers"].get<int>()) +
                          " workers, the PS runs a job of " + std::to_string(options.workers));
  const std::string model =
      options.model.empty() && !job.is_null() ? job["model"].get<std::string>() : options.model;
  if (!model.empty() && hello["model"].get<std::string>() != model)
    return send_error(peer, "refused: worker runs model '" + hello["model"].get<std::string>() +
                                "', the PS serves '" + model + "'");
  if (!job.is_null() && hello["unit_bytes"] != job["unit_bytes"])
    return send_error(peer, "refused: unit layout differs from the other workers'");
  if (peers.count(rank) && peers[rank] != peer)
    return send_error(peer, "refused: rank " + std::to_string(rank) + " has already joined");
  if (job.is_null()) {
    job = hello;
    if (hello.contains("trace_from") && hello.contains("trace_count") &&
        hello["trace_from"].is_number_integer() && hello["trace_count"].is_number_integer()) {
      trace_from = hello["trace_from"].get<std::int64_t>();
      trace_count = std::min<std::int64_t>(hello["trace_count"].get<std::int64_t>(), 1000);
    }
    limits.unit_bytes = hello["unit_bytes"].get<std::vector<std::int64_t>>();
    limits.max_sender = options.workers - 1;
  }
  peers[rank] = peer;
  net::Header welcome{net::MessageType::kHello, -1, 0, 0, 0};
  welcome.arrived_us = wire_us(arrived);  // the worker takes the clocks' offset from it
  send(peer, welcome, nullptr, 0);
}

// One plan per full-duplex strategy for the whole job: the releases of a full-duplex plan
// wait for every worker's gradients, so workers that push in different orders stall each
// other. For each index, the plan the slowest worker (by its own prediction) made for
// itself: the one that sets the pace.
void PsServer::Impl::on_plans(const std::string& peer, const net::DecodeResult& m) {
  const int rank = m.header.sender;
  if (plans_agreed || offered.count(rank))
    return send_error(peer,
                      "plans: rank " + std::to_string(rank) + " has already offered its plans");
  const auto* text = reinterpret_cast<const char*>(m.payload);
  nlohmann::json j =
      nlohmann::json::parse(text, text + m.header.payload_bytes, nullptr, /*exceptions=*/false);
  const bool shaped = j.is_object() && j.contains("plans") && j["plans"].is_array() &&
                      std::all_of(j["plans"].begin(), j["plans"].end(), [](const auto& e) {
                        return e.is_object() && e.contains("index") &&
                               e["index"].is_number_integer() &&
                               e["index"].template get<int>() >= 0 && e.contains("predicted_ms") &&
                               e["predicted_ms"].is_number() &&
                               std::isfinite(e["predicted_ms"].template get<double>()) &&
                               e.contains("plan") && e["plan"].is_object();
                      });
  if (!shaped) {
    ++dropped;
    log("rank " + std::to_string(rank) + ": plans: not {\"plans\": [{index, predicted_ms, plan}]}");
    return send_error(peer, "plans: payload is not {\"plans\": [{index, predicted_ms, plan}]}");
  }
  offered[rank] = std::move(j);
  if (static_cast<int>(offered.size()) < options.workers) return;
  std::map<int, std::pair<int, const nlohmann::json*>> pick;  // index -> (rank, entry)
  for (const auto& [r, offer] : offered)
    for (const auto& e : offer["plans"]) {
      const int index = e["index"].get<int>();
      auto it = pick.find(index);
      if (it == pick.end() ||
          e["predicted_ms"].get<double>() > (*it->second.second)["predicted_ms"].get<double>())
        pick[index] = {r, &e};  // ties: the lower rank (offers in rank order)
    }
  nlohmann::json agreed = {{"plans", nlohmann::json::array()}};
  for (const auto& [index, chosen] : pick) {
    nlohmann::json e = *chosen.second;
    e["rank"] = chosen.first;
    log("plans: strategy " + std::to_string(index) + " runs rank " + std::to_string(chosen.first) +
        "'s plan (predicted " + std::to_string(e["predicted_ms"].get<double>()) + " ms there)");
    agreed["plans"].push_back(std::move(e));
  }
  const std::string text_out = agreed.dump();
  to_every_worker(net::MessageType::kPlans, m.header.iteration, text_out);
  plans_agreed = true;
  offered.clear();
}

// Re-planning together: a job runs one full-duplex plan (on_plans), so its workers change
// it together. Once every worker has reported on the plan in use (its own prediction of
// it, and a plan it proposes when its re-planning would change), the slowest of them by
// that prediction decides: its proposal, if it made one, becomes every worker's plan from
// three iterations past the newest the PS has seen (by then each worker has its answer:
// it arrives before the parameters of the iteration before that, which need gradients
// not yet pushed). A report made before the plan in use began is about the one before.
void PsServer::Impl::on_replan(const std::string& peer, const net::DecodeResult& m) {
  const int rank = m.header.sender;
  if (!plans_agreed) return send_error(peer, "replan: the job's plans have not been agreed yet");
  const auto* text = reinterpret_cast<const char*>(m.payload);
  nlohmann::json j =
      nlohmann::json::parse(text, text + m.header.payload_bytes, nullptr, /*exceptions=*/false);
  auto positive = [](const nlohmann::json& o, const char* key) {
    return o.contains(key) && o[key].is_number() && std::isfinite(o[key].get<double>()) &&
           o[key].get<double>() > 0;
  };
  const bool shaped = j.is_object() && positive(j, "current_ms") &&
                      (!j.contains("proposal") || j["proposal"].is_null() ||
                       (j["proposal"].is_object() && positive(j["proposal"], "predicted_ms") &&
                        j["proposal"].contains("plan") && j["proposal"]["plan"].is_object()));
  if (!shaped) {
    ++dropped;
    log("rank " + std::to_string(rank) + ": replan: not {\"current_ms\", \"proposal\"?}");
    return send_error(peer,
                      "replan: payload is not {\"current_ms\": > 0, \"proposal\": "
                      "{\"predicted_ms\": > 0, \"plan\": {...}} or null}");
  }
  if (m.header.iteration < replan_from) return;  // about the plan before
  {  // what each worker decided, for the log: the job's re-planning is read from it
    char line[160];
    std::snprintf(line, sizeof line, "replan: rank %d at iteration %lld: the plan in use %.1f ms",
                  rank, static_cast<long long>(m.header.iteration), j["current_ms"].get<double>());
    std::string text = line;
    const nlohmann::json& p = j["proposal"];
    if (p.is_object()) {
      std::snprintf(line, sizeof line, ", proposes one of %.1f ms",
                    p["predicted_ms"].get<double>());
      text += line;
    } else {
      text += ", keeps it";
    }
    log(text);
  }
  reports[rank] = std::move(j);
  if (static_cast<int>(reports.size()) < options.workers) return;
  auto slowest = reports.begin();  // ties: the lower rank
  for (auto r = reports.begin(); r != reports.end(); ++r)
    if (r->second["current_ms"].get<double>() > slowest->second["current_ms"].get<double>())
      slowest = r;
  const nlohmann::json& proposal = slowest->second["proposal"];
  if (!proposal.is_object()) return;  // the slowest keeps the plan: so does the job
  // (A peer's iteration is any non-negative int64: no overflow past the largest.)
  replan_from =
      newest + std::min<std::int64_t>(3, std::numeric_limits<std::int64_t>::max() - newest);
  nlohmann::json change = {
      {"plan", proposal["plan"]},
      {"predicted_ms", proposal["predicted_ms"]},
      {"current_ms", slowest->second["current_ms"]},
      {"rank", slowest->first},
      {"from_iteration", replan_from},
      {"why", proposal.contains("why") && proposal["why"].is_string() ? proposal["why"]
                                                                      : nlohmann::json("")}};
  char line[160];  // in the reports' format, the lines above it in the log
  std::snprintf(line, sizeof line,
                "replan: the job runs rank %d's plan from iteration %lld (predicted %.1f -> %.1f "
                "ms there)",
                slowest->first, static_cast<long long>(replan_from),
                slowest->second["current_ms"].get<double>(),
                proposal["predicted_ms"].get<double>());
  log(line);
  const std::string out = change.dump();
  to_every_worker(net::MessageType::kReplan, replan_from, out);
  reports.clear();
}

void PsServer::Impl::answer_pulls() {
  if (!store) return;
  std::vector<char> blocked(static_cast<std::size_t>(options.workers), 0);  // by rank
  for (auto it = pending.begin(); it != pending.end();) {
    char& waits = blocked[static_cast<std::size_t>(it->rank)];
    if ((it->in_order && waits) ||
        !store->ready(it->first, it->last, it->iteration)) {  // before allocating the reply
      if (it->in_order) waits = true;
      ++it;
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
  if (h.type == net::MessageType::kHello) return on_hello(peer, m, arrived);
  auto known = peers.find(h.sender);
  if (known == peers.end() || known->second != peer) {
    ++dropped;
    return log(std::string("dropped ") + net::to_string(h.type) +
               " from a peer that has not joined as rank " + std::to_string(h.sender));
  }
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
        if (s.sgd.total_iterations <= 0 && job.contains("total_iterations"))  // for schedules
          s.sgd.total_iterations = job["total_iterations"].get<std::int64_t>();
        store = std::make_unique<ParameterStore>(s, std::move(units));
        break;
      }
      case net::MessageType::kPullRequest:
        newest = std::max(newest, h.iteration);
        pending.push_back({peer, h.sender, h.iteration, first, last,
                           (h.flags & net::kFlagInOrder) != 0, arrived});
        break;
      case net::MessageType::kPush: {
        if (!store) return send_error(peer, "push before the parameters were initialised");
        newest = std::max(newest, h.iteration);
        const auto start = Clock::now();
        const std::vector<int> advanced = store->push(h.sender, first, last, h.iteration,
                                                      reinterpret_cast<const float*>(m.payload));
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
        on_plans(peer, m);
        break;
      case net::MessageType::kReplan:
        on_replan(peer, m);
        break;
      case net::MessageType::kShutdown:
        ++shut_down;
        break;
      default:
        ++dropped;
        return log(std::string("dropped unexpected ") + net::to_string(h.type) + " from rank " +
                   std::to_string(h.sender));
    }
  } catch (const InvalidInput& e) {
    ++dropped;
    log(std::string("rank ") + std::to_string(h.sender) + ": " + e.what());
    return send_error(peer, e.what());
  }
  answer_pulls();
}

void PsServer::Impl::run() {
  auto last_message = std::chrono::steady_clock::now();
  try {
    while (!stopping) {
      zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(100));
      if (!(item.revents & ZMQ_POLLIN)) {
        if (std::chrono::steady_clock::now() - last_message > options.timeout) {
          std::string missing;
          for (int r = 0; r < options.workers; ++r)
            if (!peers.count(r)) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
          throw Timeout("ps: no message for " + std::to_string(options.timeout.count()) + " ms" +
                        (missing.empty() ? "" : " (workers not joined: " + missing + ")"));
        }
        continue;
      }
      last_message = std::chrono::steady_clock::now();
      std::vector<zmq::message_t> parts;
      while (true) {
        zmq::message_t part;
        if (!socket.recv(part, zmq::recv_flags::dontwait)) break;
        parts.push_back(std::move(part));
        if (!parts.back().more()) break;
      }
      if (parts.size() != 2) {
        ++dropped;
        log("dropped a message of " + std::to_string(parts.size()) + " frames");
        continue;
      }
      const auto arrived = Clock::now();
      received += parts[1].size();
      const std::string peer = parts[0].to_string();
      net::DecodeResult m = net::decode(parts[1].data(), parts[1].size(), limits);
      if (!m.ok()) {
        ++dropped;
        log("dropped a malformed message from " + who(peer) + ": " + m.error);
        continue;
      }
      handle(peer, m, arrived);
      if (shut_down >= options.workers && store) {
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
  // Give queued replies up to 2 s to leave when the server closes.
  impl_->socket.set(zmq::sockopt::linger, 2000);
  impl_->socket.set(zmq::sockopt::router_mandatory, 1);
  std::string addr = options.listen;
  if (addr.size() > 2 && addr.compare(addr.size() - 2, 2, ":0") == 0)
    addr.replace(addr.size() - 1, 1, "*");
  try {
    impl_->socket.bind(addr);
  } catch (const zmq::error_t& e) {
    throw Error("ps: cannot listen on " + options.listen + ": " + e.what());
  }
  impl_->endpoint = impl_->socket.get(zmq::sockopt::last_endpoint);
}

PsServer::~PsServer() { stop(); }

const std::string& PsServer::endpoint() const { return impl_->endpoint; }

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
