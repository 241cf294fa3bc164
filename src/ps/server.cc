#include "ps/server.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <future>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "base/error.h"
#include "base/log_limiter.h"
#include "compress/pull_codec.h"
#include "compress/push_codec.h"
#include "net/endpoint.h"
#include "net/job_protocol.h"
#include "net/wire.h"
#include "net/zmq_router.h"
#include "ps/agreement.h"
#include "ps/backup_chooser.h"
#include "ps/checkpoint.h"
#include "ps/membership.h"
#include "ps/pull_encoder.h"
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
  bool exact;     // compressed pulls: the parameters, not the public copy
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

// The text of a peer's error message, at most `limit` bytes of it.
std::string error_text(const net::DecodeResult& m, std::size_t limit) {
  return std::string(reinterpret_cast<const char*>(m.payload),
                     std::min<std::size_t>(m.header.payload_bytes, limit));
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
  // Pushes decoded with it, atom by atom (the job's --compress; the wire checks each push's
  // codec field and size against it).
  std::unique_ptr<compress::PushCodec> codec;
  std::vector<float> scratch, atom_scratch;  // what the codec decodes into when it must copy
  // Compressed pulls (compress/pull_codec.h): the public copy and its updates, made with the
  // store; null for float32 pulls.
  compress::PullCodec pull_codec{"none"};
  std::unique_ptr<PullEncoder> pulls;
  // The wire's limits for the job's units (atoms), their pushes encoded with `codec`.
  void set_limits(const std::vector<std::int64_t>& unit_bytes) {
    limits.unit_bytes = unit_bytes;
    limits.max_sender = options.workers - 1;
    limits.push_codec = codec->wire_codec();
    limits.push_bytes.clear();
    limits.mixed_bytes.clear();
    std::vector<std::int64_t> floats;
    for (std::int64_t b : unit_bytes) floats.push_back(b / 4);
    limits.pull_bytes = pull_codec.reply_table(floats);
    if (codec->mixed()) {
      for (std::size_t k = 0; k < codec->size(); ++k) {
        limits.mixed_bytes.emplace_back();
        for (std::int64_t b : unit_bytes)
          limits.mixed_bytes.back().push_back(
              static_cast<std::int64_t>(codec->encoded_bytes(k, b / 4, 0)));
      }
    } else if (codec->names()[0] != "none") {
      for (std::int64_t b : unit_bytes)
        limits.push_bytes.push_back(static_cast<std::int64_t>(codec->encoded_bytes(0, b / 4, 0)));
      limits.push_bytes_at = [c = codec.get(), unit_bytes](std::uint32_t u, std::int64_t it) {
        return static_cast<std::int64_t>(c->encoded_bytes(0, unit_bytes.at(u) / 4, it));
      };
    }
  }
  std::uint64_t dense_bytes(int first, int last) const {
    std::uint64_t b = 0;
    for (int u = first; u <= last; ++u)
      b += static_cast<std::uint64_t>(limits.unit_bytes[static_cast<std::size_t>(u)]);
    return b;
  }
  // A push's gradients of units first..last, decoded (InvalidInput naming rank and unit).
  const float* decode_push(const net::DecodeResult& m);
  std::unique_ptr<ParameterStore> store;
  // backup:auto: the policy whose B the chooser sets, and the versions it was told of.
  std::shared_ptr<const AdaptiveBackupPolicy> adaptive;
  std::unique_ptr<BackupChooser> chooser;
  std::int64_t ready_version = 0;
  std::deque<PendingPull> pending;
  std::int64_t trace_from = 0, trace_count = 0;
  std::vector<PsEvent> events;
  // Per iteration, the largest compute time and predicted iteration time any worker sent
  // with its pushes (compute_us, predicted_us), for the pull replies of the next; only the
  // last few iterations are kept.
  struct Slowest {
    std::uint64_t compute_us = 0;
    std::map<int, double> predicted_us;  // by rank (0: none sent)
  };
  std::map<std::int64_t, Slowest> slowest;
  std::unique_ptr<PlanAgreement> agreement;  // the job's full-duplex plans
  std::string failure;                       // why the job stopped (empty: it runs)
  Clock::time_point failed_at;
  std::set<int> told;             // the ranks that have heard it
  std::int64_t newest = 0;        // the highest iteration any pull request or push named
  net::UpdateReport last_update;  // every push ack carries it (the aggregation)
  std::map<int, std::int64_t> joined_at;  // rank -> the iteration it joined the running job at
  std::set<int> dropped_before_init;      // ranks dropped before the store existed
  // Ranks that said goodbye before the job's end -> the round after their last push. The
  // rounds wait for them until a remaining worker needs one of those rounds (a pull past
  // it, a plan offer, a report): when every worker is stopping (Ctrl-C reaches them an
  // iteration apart), no round is made of some workers' pushes only, and the job stops at
  // a round every worker's saved state belongs to.
  std::map<int, std::int64_t> departed;
  std::map<int, std::int64_t> last_pushed;  // rank -> the newest round it pushed
  std::set<int> ever_joined;
  std::map<std::string, std::string> left_behind;  // a dropped peer -> why, until it hears it

  bool traced(std::int64_t iteration) const {
    return iteration >= trace_from && iteration < trace_from + trace_count;
  }

  // Refused connections (net/zmq_router.h), from the I/O and the ZAP threads.
  std::mutex refused_mu;
  LogLimiter refused_lines{20, std::chrono::seconds(10)};
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
    if (!router) return;  // a PsHarness: nobody to send to
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
  // Once the job runs, only that peer hears it: a stranger's hello must not end the job.
  void refuse(const std::string& peer, int rank, const std::string& why) {
    send_error(peer, "refused: " + why);
    if (store) return log_drop("refused a hello as rank " + std::to_string(rank) + ": " + why);
    stop_job("worker " + std::to_string(rank) + " was refused: " + why, rank);
  }
  // Rank `rank`'s peer is gone (silent, or replaced): the job goes on without it.
  void drop_rank(int rank, const std::string& why);
  // The store's updates and the plan agreement no longer wait for `rank`.
  void updates_go_on_without(int rank);
  // The departed ranks' rounds go on without them (a remaining worker needs them).
  void waive_departed();
  void on_goodbye(const net::Header& h);
  // Rank `rank` joins a running job: at the newest version, told so in its welcome.
  void rejoin(int rank, net::Header& welcome);
  std::string config_conflict(const net::Hello& hello) const;
  void on_plans(const std::string& peer, const net::DecodeResult& m);
  void on_replan(const net::DecodeResult& m);
  // arrived: when the message was taken off the socket.
  void handle(const std::string& peer, const net::DecodeResult& m, Clock::time_point arrived);
  void on_hello(const std::string& peer, const net::DecodeResult& m, Clock::time_point arrived);
  void answer_pulls();
  // Can pull `p` be answered now? The policy says when; the exact (final) pull of a job
  // that is not BSP waits for every unit's update of the iterations before it, except under
  // ASP, whose versions count pushes: it reads what there is (the slower ranks' later pushes
  // are in the PS's final weights, not in what rank 0 evaluates).
  bool ready(const PendingPull& p) const {
    if (!p.exact || store->policy().lockstep() || store->policy().asynchronous())
      return store->ready(p.first, p.last, p.iteration);
    for (int u = p.first; u <= p.last; ++u)
      if (store->version(u) < p.iteration) return false;
    return true;
  }
  // backup:auto: the chooser hears of the push and of the versions now ready; a new B is
  // logged, and the updates it makes due are applied (into `advanced`).
  void follow_backups(int rank, std::int64_t iteration, int first, int last,
                      std::vector<int>& advanced) {
    const double now = clock_ms(Clock::now());
    chooser->pushed(rank, iteration, first, last, now);
    for (const std::int64_t oldest = store->oldest_version(); ready_version < oldest;)
      chooser->version_ready(++ready_version, now);
    const std::optional<BackupChooser::Change> change = chooser->decide();
    if (!change) return;
    adaptive->set_backups(change->backups);
    log(change->why);
    for (int u : store->apply_due())
      if (std::find(advanced.begin(), advanced.end(), u) == advanced.end()) advanced.push_back(u);
  }
  // The mode's pace for `rank`'s pull of `iteration` (ps/sync_policy.h), from each
  // worker's newest prediction before it: that of its push of iteration - 1, or where that
  // is not in (SSP lets a fast worker read ahead of a straggler's pushes) of its latest
  // push still kept, if it is still in the job. Under BSP every worker's push of
  // iteration - 1 is in.
  std::uint64_t pace_us(std::int64_t iteration, int rank) const {
    std::map<int, double> newest;
    for (auto s = slowest.lower_bound(iteration); s != slowest.begin();) {
      --s;
      const bool older = s->first < iteration - 1;
      for (const auto& [r, us] : s->second.predicted_us)
        if (!older || (members->peer_of(r) && !members->has_left(r))) newest.try_emplace(r, us);
    }
    std::vector<double> predicted;
    for (const auto& [r, us] : newest) predicted.push_back(us);
    const auto own = newest.find(rank);
    const double pace = store->policy().pace(std::move(predicted), options.workers,
                                             own == newest.end() ? 0 : own->second);
    return static_cast<std::uint64_t>(std::llround(pace));
  }
  void finish() {  // every worker has finished or gone: the final checkpoint and weights
    maybe_checkpoint(/*final=*/true);
    done.set_value(store->snapshot());
  }
  void run();    // the I/O thread: serve(), then the router is left unwatched
  void serve();  // until the job ends (the result or the failure in `done`)
  // One frame from `peer` (admitted under CURVE as `user_id`), decoded and handled; true
  // when it came from one of the job's workers (it holds off the PS's timeout).
  bool on_frame(const std::string& peer, const std::string& user_id, const std::uint8_t* data,
                std::size_t size, Clock::time_point arrived);

  // The store, from the job's initial parameters (rank 0's init, or a checkpoint's).
  void make_store(std::vector<std::vector<float>> units) {
    StoreOptions s;
    s.workers = options.workers;
    s.sgd = options.sgd;
    // dgc's momentum correction applies the momentum on the workers: none here too.
    if (compress::moves_momentum(options.compression)) s.sgd.momentum = 0;
    if (s.sgd.total_iterations <= 0 && job)  // for schedules
      s.sgd.total_iterations = job->total_iterations;
    s.policy = parse_sync_policy(options.sync);
    if (s.policy->asynchronous() && s.sgd.momentum > 0) {
      s.sgd.momentum = asp_momentum(s.sgd.momentum, options.workers);
      log("asp: the PS steps with momentum " + std::to_string(s.sgd.momentum) + ", the job's " +
          std::to_string(options.sgd.momentum) + " less asynchrony's own (1 - 1/" +
          std::to_string(options.workers) + ")");
    }
    if (s.policy->delay_compensation() > 0)
      log("asp: each push corrected for the weights' moves since its rank's read (DC-ASGD, "
          "lambda0 " +
          std::to_string(s.policy->delay_compensation()) + ")");
    adaptive = std::dynamic_pointer_cast<const AdaptiveBackupPolicy>(s.policy);
    const auto n_units = static_cast<int>(units.size());
    store = std::make_unique<ParameterStore>(s, std::move(units));
    if (adaptive) chooser = std::make_unique<BackupChooser>(options.workers, n_units);
    ready_version = 0;
    if (chooser) chooser->version_ready(0, clock_ms(Clock::now()));
  }
  // With compressed pulls: the public copy a checkpoint kept (`kept`, per unit), or the
  // store's parameters as they are now.
  void make_pull_encoder(std::vector<std::vector<float>> kept = {}) {
    if (pull_codec.dense()) return;
    std::vector<std::vector<float>> atoms;
    for (int u = 0; u < store->num_units(); ++u) {
      const auto n = static_cast<std::size_t>(store->unit_floats(u));
      if (static_cast<std::size_t>(u) < kept.size() &&
          kept[static_cast<std::size_t>(u)].size() == n) {
        atoms.push_back(std::move(kept[static_cast<std::size_t>(u)]));
        continue;
      }
      atoms.emplace_back(n);
      store->pull(u, u, store->version(u), atoms.back().data());
    }
    pulls =
        std::make_unique<PullEncoder>(compress::PullCodec(options.pull_compression, options.seed),
                                      options.workers, std::move(atoms), store->oldest_version());
    for (int u = 0; u < store->num_units(); ++u) advance_pulls(u);
  }
  // Unit u's public copy to the store's version (its update encoded): part of the
  // aggregation the workers measure, as it is of the PS's work per update.
  void advance_pulls(int u) {
    if (!pulls) return;
    const std::int64_t v = store->version(u);
    if (v <= pulls->version(u)) return;
    pull_params.resize(static_cast<std::size_t>(store->unit_floats(u)));
    store->pull(u, u, v, pull_params.data());
    pulls->advance(u, v, pull_params.data());
  }
  std::vector<float> pull_params;
  // The reply to `p`, sealed but for its header.
  std::string pull_reply(const PendingPull& p, std::int64_t& version);  // the oldest read
  // Checkpoints (ps/checkpoint.h): one is due when every unit is at the same version and
  // the count or the period says so; the last is written when the job ends.
  std::int64_t last_checkpoint = -1;
  Clock::time_point last_checkpoint_at = Clock::now();
  void maybe_checkpoint(bool final = false);
  // The store's state, with the public copy of compressed pulls.
  std::vector<ParameterStore::UnitState> unit_states() {
    std::vector<ParameterStore::UnitState> s = store->state();
    if (!pulls) return s;
    for (int u = 0; u < store->num_units(); ++u) {
      advance_pulls(u);
      s[static_cast<std::size_t>(u)].public_copy = pulls->public_copy(u);
    }
    return s;
  }
  std::string checkpoint_conflict(const Checkpoint& c) const;
  void resume();
};

void ServerOptions::validate() const {
  if (workers < 1) throw InvalidInput("ps: --workers must be at least 1");
  if (timeout.count() <= 0) throw InvalidInput("ps: timeout must be positive");
  if (peer_timeout.count() < 1000) throw InvalidInput("ps: --peer-timeout must be at least 1 s");
  if (checkpoint_every < 0 || checkpoint_period.count() < 0 || checkpoint_keep < 1)
    throw InvalidInput(
        "ps: --checkpoint-every must be positive, and --keep-checkpoints at least 1");
  if ((resume || checkpoint_every > 0 || checkpoint_period.count() > 0) && checkpoint_dir.empty())
    throw InvalidInput("ps: --resume and --checkpoint-every need --checkpoint-dir");
  net::check_endpoint(listen, "ps: --listen");
  if (!curve && !insecure && !net::is_loopback(listen))
    throw InvalidInput(
        "ps: --listen " + listen +
        " is not loopback: anyone who can reach it could join the job. Make keys with `dynacomm "
        "keygen --out ps` and one `dynacomm keygen --out worker-R` per worker, list \"R "
        "worker-R.pub\" lines in allow.txt, and run `dynacomm ps --key ps.key --allow "
        "allow.txt` (workers: --key worker-R.key --ps-key ps.pub); or --insecure on a network "
        "you trust");
  if (max_message_bytes < (1 << 20)) throw InvalidInput("ps: --max-message must be at least 1 MiB");
  compress::PullCodec pulls(pull_compression);  // InvalidInput naming what is wrong
  StoreOptions s;
  s.workers = workers;
  s.sgd = sgd;
  s.policy = parse_sync_policy(sync);
  s.validate();
  // The public copy moves one update per atom and version, in order: BSP's versions.
  if (s.policy->name() != "bsp" && !pulls.dense())
    throw InvalidInput("ps: --compress-pulls " + pull_compression + " needs --sync bsp (the job's " +
                       sync +
                       (s.policy->lockstep() ? " moves the devices' models between pulls"
                                             : " reads versions out of order") +
                       "; its pulls go in float32)");
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
  std::int64_t model_bytes = 0;
  for (auto b : hello.unit_bytes) model_bytes += b;
  if (model_bytes + static_cast<std::int64_t>(net::kHeaderBytes) > options.max_message_bytes)
    return refuse(peer, rank,
                  "its model is " + std::to_string(model_bytes >> 20) +
                      " MiB, more than this PS's --max-message of " +
                      std::to_string(options.max_message_bytes >> 20) +
                      " MiB (start it with a larger one)");
  if (!job) {
    job = hello;
    trace_from = hello.trace_from;
    trace_count = std::min<std::int64_t>(hello.trace_count, 1000);
    set_limits(hello.unit_bytes);
  }
  // The same rank from a new connection: its process started again (the old one is gone,
  // or will be told it was replaced).
  if (departed.erase(rank)) updates_go_on_without(rank);  // before it is needed again
  const bool again = members->peer_of(rank) && !members->is(rank, peer);
  if (again) drop_rank(rank, "it joined again from a new connection");
  const bool first = !members->is(rank, peer);
  if (const std::string refused = members->join(rank, peer, arrived); !refused.empty())
    return send_error(peer, refused);
  net::Header welcome{net::MessageType::kHello, -1, 0, 0, 0};
  welcome.arrived_us = wire_us(arrived);  // the worker takes the clocks' offset from it
  if (first) agreement->join(rank);
  if (store && first) rejoin(rank, welcome);
  ever_joined.insert(rank);
  if (store && !first) {  // a hello again (the worker times five): the same answer
    welcome.iteration = joined_at[rank];
    welcome.flags = net::kFlagJobRunning;
  }
  send(peer, welcome, nullptr, 0);
}

void PsServer::Impl::rejoin(int rank, net::Header& welcome) {
  // Under ASP a worker's iterations are its own count, not the versions (which count every
  // worker's pushes): it goes on after its own last push, or (none: a first join, or a
  // resumed job) where the others are on average, the newest version over the workers.
  std::int64_t at = store->newest_version();
  if (store->policy().asynchronous()) {
    at = store->next_iteration_of(rank);
    if (at == 0) at = store->newest_version() / options.workers;
  }
  store->join(rank, at);
  if (pulls) pulls->forget(rank);  // a new process: it holds no public copy
  joined_at[rank] = at;
  welcome.iteration = joined_at[rank];
  welcome.flags = net::kFlagJobRunning;
  if (welcome.iteration > 0 || ever_joined.count(rank))  // not a first join at the start
    log("rank " + std::to_string(rank) + " joined the running job at iteration " +
        std::to_string(welcome.iteration));
}

void PsServer::Impl::drop_rank(int rank, const std::string& why) {
  const std::optional<std::string> peer = members->peer_of(rank);
  if (!peer) return;
  members->drop(rank);
  left_behind[*peer] = "rank " + std::to_string(rank) + " left the job at iteration " +
                       std::to_string(newest) + ": " + why + "; start it again to rejoin";
  while (left_behind.size() > 64) left_behind.erase(left_behind.begin());
  pending.erase(std::remove_if(pending.begin(), pending.end(),
                               [&](const PendingPull& p) { return p.peer == *peer; }),
                pending.end());
  std::string remain;
  for (const auto& [r, id] : members->peers())
    if (!members->has_left(r)) remain += (remain.empty() ? "" : ", ") + std::to_string(r);
  log("rank " + std::to_string(rank) + " left the job at iteration " + std::to_string(newest) +
      ": " + why + "; the job goes on with " +
      (remain.empty() ? "no rank yet" : "ranks " + remain) + (store ? "" : " (it may join again)"));
  if (!store) dropped_before_init.insert(rank);
  if (pulls) pulls->forget(rank);
  updates_go_on_without(rank);
}

// A rank that stops before the job's end (interrupted, a target reached) leaves no other
// waiting for pushes it will not make: once one needs them (answer_pulls), their updates go
// on without it. Its round is at most the one after its newest push here (pushes come
// before the goodbye on its connection): a goodbye naming a far-off round would hold the
// others' rounds back for pushes never sent.
void PsServer::Impl::on_goodbye(const net::Header& h) {
  members->leave(h.sender);
  const auto pushed = last_pushed.find(h.sender);
  departed[h.sender] =
      std::min(h.iteration, pushed != last_pushed.end() ? pushed->second + 1 : newest + 1);
}

void PsServer::Impl::waive_departed() {
  const std::map<int, std::int64_t> waived = std::exchange(departed, {});
  for (const auto& [rank, round] : waived) updates_go_on_without(rank);
}

void PsServer::Impl::updates_go_on_without(int rank) {
  if (store) store->leave(rank);
  const PlanAgreement::Completed c = agreement->leave(rank, newest);
  if (c.plans) to_every_worker(net::MessageType::kPlans, newest, net::encode(*c.plans));
  if (c.change)
    to_every_worker(net::MessageType::kReplan, c.change->from_iteration, net::encode(*c.change));
}

const float* PsServer::Impl::decode_push(const net::DecodeResult& m) {
  const net::Header& h = m.header;
  const int first = static_cast<int>(h.first_unit), last = static_cast<int>(h.last_unit);
  std::int64_t floats = 0;
  for (int u = first; u <= last; ++u) floats += store->unit_floats(u);
  std::size_t used = 0;
  if (!codec->mixed() && limits.push_bytes.empty())  // float32: the payload as it is
    return codec->decode({first, h.iteration}, m.payload, h.payload_bytes, floats, scratch, used);
  scratch.resize(static_cast<std::size_t>(floats));
  const std::uint8_t* at = m.payload;
  std::size_t left = h.payload_bytes;
  float* out = scratch.data();
  for (int u = first; u <= last; ++u) {
    const std::int64_t n = store->unit_floats(u);
    try {
      const float* v = codec->decode({u, h.iteration}, at, left, n, atom_scratch, used);
      std::copy(v, v + n, out);
    } catch (const InvalidInput& e) {
      throw InvalidInput("push from rank " + std::to_string(h.sender) + ", iteration " +
                         std::to_string(h.iteration) + ", unit " + std::to_string(u) + ": " +
                         e.what());
    }
    at += used;
    left -= used;
    out += n;
  }
  return scratch.data();
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
void PsServer::Impl::on_plans(const std::string& peer, const net::DecodeResult& m) {
  waive_departed();  // the agreement would wait for their offers
  net::PlanOffer offer = net::decode_plan_offer(m.payload, m.header.payload_bytes);
  const bool late = agreement->agreed();  // a worker that joined the running job
  auto agreed = agreement->offer(m.header.sender, std::move(offer));
  if (!agreed) return;
  if (!late)
    return to_every_worker(net::MessageType::kPlans, m.header.iteration, net::encode(*agreed));
  const std::string text = net::encode(*agreed);
  send(peer, net::Header{net::MessageType::kPlans, -1, m.header.iteration, 0, 0}, text.data(),
       text.size());
  if (const auto& change = agreement->last_change()) {
    const std::string c = net::encode(*change);
    send(peer, net::Header{net::MessageType::kReplan, -1, change->from_iteration, 0, 0}, c.data(),
         c.size());
  }
}

void PsServer::Impl::on_replan(const net::DecodeResult& m) {
  waive_departed();
  net::ReplanReport report = net::decode_replan_report(m.payload, m.header.payload_bytes);
  if (auto change =
          agreement->report(m.header.sender, m.header.iteration, std::move(report), newest))
    to_every_worker(net::MessageType::kReplan, change->from_iteration, net::encode(*change));
}

void PsServer::Impl::maybe_checkpoint(bool final) {
  if (options.checkpoint_dir.empty() || !store || !job) return;
  const std::int64_t at = store->oldest_version();
  if (at <= last_checkpoint || at != store->newest_version()) return;
  const auto now = Clock::now();
  const bool due = final || (options.checkpoint_every > 0 && at % options.checkpoint_every == 0) ||
                   (options.checkpoint_period.count() > 0 &&
                    now - last_checkpoint_at >= options.checkpoint_period);
  if (!due) return;
  last_checkpoint = at;
  last_checkpoint_at = now;
  try {
    const std::string path =
        write_checkpoint(options.checkpoint_dir, Checkpoint{at, *job, options.job, unit_states()},
                         options.checkpoint_keep);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - now).count();
    log("checkpoint of iteration " + std::to_string(at) + ": " + path + " (" +
        std::to_string(static_cast<int>(ms)) + " ms)");
    // Before the pulls of `at` are answered: rank 0 hears of it within that iteration.
    to_every_worker(net::MessageType::kCheckpoint, at, "");
  } catch (const Error& e) {  // the job goes on; the previous checkpoint stays
    log_drop(e.what());
  }
}

namespace {
// A setting as a person reads it: "0.05", not the exact "0.050000000000000003".
std::string shown(const std::string& value) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0') return value;
  char s[32];
  std::snprintf(s, sizeof s, "%.6g", v);
  return s;
}
}  // namespace

// Why checkpoint c cannot resume this PS's job ("" when it can).
std::string PsServer::Impl::checkpoint_conflict(const Checkpoint& c) const {
  if (!options.model.empty() && c.job.model != options.model)
    return "it is of model '" + c.job.model + "', the PS serves '" + options.model + "'";
  if (c.job.workers != options.workers)
    return "it is of a job of " + std::to_string(c.job.workers) + " workers, the PS runs " +
           std::to_string(options.workers);
  for (const auto& [flag, value] : options.job.settings) {
    const std::string* theirs = c.settings.find(flag);
    if (theirs == nullptr || *theirs != value)
      return "it was taken with " + flag + " " + (theirs ? shown(*theirs) : "unset") +
             ", the PS runs " + flag + " " + shown(value);
  }
  for (const auto& [flag, value] : c.settings.settings)
    if (options.job.find(flag) == nullptr)
      return "it was taken with " + flag + " " + shown(value) + ", the PS runs without it";
  if (c.iteration >= c.job.total_iterations && c.job.total_iterations > 0)
    return "its job had finished (iteration " + std::to_string(c.iteration) + " of " +
           std::to_string(c.job.total_iterations) + ")";
  return "";
}

void PsServer::Impl::resume() {
  Checkpoint c = load_latest(
      options.checkpoint_dir, [this](const Checkpoint& k) { return checkpoint_conflict(k); },
      [this](const std::string& line) { log(line); });
  job = c.job;
  trace_from = c.job.trace_from;
  trace_count = std::min<std::int64_t>(c.job.trace_count, 1000);
  set_limits(c.job.unit_bytes);
  std::vector<std::vector<float>> units;
  for (const auto& u : c.units) units.push_back(u.params);
  make_store(std::move(units));
  std::vector<std::vector<float>> kept;  // the public copy of compressed pulls
  for (auto& u : c.units) kept.push_back(std::move(u.public_copy));
  store->restore(std::move(c.units));
  if (chooser) {  // it starts from the checkpoint's versions
    ready_version = store->oldest_version();
    chooser = std::make_unique<BackupChooser>(options.workers, store->num_units(), ready_version);
    chooser->version_ready(ready_version, clock_ms(Clock::now()));
  }
  make_pull_encoder(std::move(kept));
  last_checkpoint = c.iteration;
  newest = c.iteration;
  log("resumed the job at iteration " + std::to_string(c.iteration) + " of " +
      std::to_string(c.job.total_iterations) + " from " + options.checkpoint_dir);
}

std::string PsServer::Impl::pull_reply(const PendingPull& p, std::int64_t& version) {
  version = p.iteration;  // compressed pulls: BSP's
  if (!pulls) {  // the parameters go straight from the store into the frame, then to ZeroMQ
    std::int64_t floats = 0;
    for (int u = p.first; u <= p.last; ++u) floats += store->unit_floats(u);
    std::string frame = net::make_frame(static_cast<std::size_t>(floats) * sizeof(float));
    version = store->pull(p.first, p.last, p.iteration,
                          reinterpret_cast<float*>(&frame[net::kHeaderBytes]), p.rank);
    return frame;
  }
  std::size_t bytes = 0;
  for (int u = p.first; u <= p.last; ++u) {
    advance_pulls(u);  // a unit a leaving rank's goodbye advanced
    bytes += p.exact ? pull_codec.copy_bytes(store->unit_floats(u))
                     : pulls->reply_bytes(p.rank, u, p.iteration);
  }
  std::string frame = net::make_frame(bytes);
  auto* out = reinterpret_cast<std::uint8_t*>(&frame[net::kHeaderBytes]);
  for (int u = p.first; u <= p.last; ++u) {
    if (p.exact) {  // the parameters themselves: the rank holds no public copy after them
      *out++ = compress::PullCodec::kCopy;
      pull_params.resize(static_cast<std::size_t>(store->unit_floats(u)));
      store->pull(u, u, p.iteration, pull_params.data());
      std::memcpy(out, pull_params.data(), pull_params.size() * sizeof(float));
      out += pull_params.size() * sizeof(float);
      pulls->forget(p.rank, u);
      continue;
    }
    const std::size_t n = pulls->reply_bytes(p.rank, u, p.iteration);
    pulls->write(p.rank, u, p.iteration, out);
    out += n;
  }
  return frame;
}

void PsServer::Impl::answer_pulls() {
  if (!store) return;
  if (!departed.empty()) {  // a pull past a departed rank's last round: it goes on without
    std::int64_t oldest = std::numeric_limits<std::int64_t>::max();
    for (const auto& [rank, round] : departed) oldest = std::min(oldest, round);
    for (const PendingPull& p : pending)
      if (!departed.count(p.rank) && p.iteration > oldest) {
        waive_departed();
        break;
      }
  }
  std::vector<char> blocked(static_cast<std::size_t>(options.workers), 0);  // by rank
  for (auto it = pending.begin(); it != pending.end();) {
    char& waits = blocked[static_cast<std::size_t>(it->rank)];
    // The wire has checked the unit range against the job's layout, which is the store's.
    if ((it->in_order && waits) || !ready(*it)) {  // before allocating the reply
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
    std::int64_t version = 0;
    std::string frame = pull_reply(*it, version);
    net::Header h{net::MessageType::kPullReply, -1, it->iteration,
                  static_cast<std::uint32_t>(it->first), static_cast<std::uint32_t>(it->last)};
    h.version = version;
    const auto now = Clock::now();
    h.held_us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(now - it->received).count());
    h.arrived_us = wire_us(it->received);
    if (auto s = slowest.find(it->iteration - 1); s != slowest.end()) {
      h.compute_us = s->second.compute_us;
      h.predicted_us = pace_us(it->iteration, it->rank);
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
  // a rank no other peer holds. Before the job runs, every worker would meet it: the job
  // stops. Once it runs, that rank leaves and the others go on (it may start again).
  if (h.type == net::MessageType::kError && h.sender >= 0 && h.sender < options.workers &&
      (members->is(h.sender, peer) || (!store && !members->peers().count(h.sender)))) {
    const std::string why = error_text(m, 2000);
    if (!store) return stop_job("worker " + std::to_string(h.sender) + " failed: " + why, h.sender);
    drop_rank(h.sender, "it failed: " + why);
    return answer_pulls();
  }
  // A worker left behind (its link was down past the peer timeout) hears why, once, so it
  // can start again and rejoin instead of waiting out its own timeout.
  if (auto gone = left_behind.find(peer);
      gone != left_behind.end() && h.type != net::MessageType::kError) {
    send_error(peer, gone->second);
    left_behind.erase(gone);
    return;
  }
  if (!members->is(h.sender, peer) && h.type == net::MessageType::kError)
    return log_drop("a peer that has not joined says rank " + std::to_string(h.sender) +
                    " failed: " + error_text(m, 500));
  if (!members->is(h.sender, peer))
    return log_drop(std::string("dropped ") + net::to_string(h.type) +
                    " from a peer that has not joined as rank " + std::to_string(h.sender));
  const int first = static_cast<int>(h.first_unit), last = static_cast<int>(h.last_unit);
  try {
    switch (h.type) {
      case net::MessageType::kInit: {
        if (h.sender != 0) return send_error(peer, "init: only rank 0 sends initial parameters");
        if (store) return send_error(peer, "init: the parameters are already initialised");
        // The whole model in one message (the wire checked the payload against first..last).
        if (first != 0 || last + 1 != static_cast<int>(limits.unit_bytes.size()))
          return send_error(peer, "init: units " + std::to_string(first) + ".." +
                                      std::to_string(last) + ", not the whole model (0.." +
                                      std::to_string(limits.unit_bytes.size() - 1) + ")");
        const auto* values = reinterpret_cast<const float*>(m.payload);
        std::vector<std::vector<float>> units;
        for (auto b : limits.unit_bytes) {
          units.emplace_back(values, values + b / 4);
          values += b / 4;
        }
        make_store(std::move(units));
        for (int r = 0; r < options.workers; ++r)  // joined once, and gone since
          if (dropped_before_init.count(r) && !members->peer_of(r)) store->leave(r);
        make_pull_encoder();
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
                           (h.flags & net::kFlagInOrder) != 0, (h.flags & net::kFlagExact) != 0,
                           arrived});
        break;
      }
      case net::MessageType::kPush: {
        if (!store) return send_error(peer, "push before the parameters were initialised");
        // The aggregation the workers fit excludes the decoding (their plans count it per
        // unit, measured) and counts the dense bytes it adds up.
        const auto received = Clock::now();
        const float* grads = decode_push(m);
        const auto start = Clock::now();
        if (const int bad = first_non_finite(*store, first, last, grads); bad >= 0)
          throw InvalidInput("push from rank " + std::to_string(h.sender) + ", iteration " +
                             std::to_string(h.iteration) + ": unit " + std::to_string(bad) +
                             " has NaN or infinite gradients; not applied (has training "
                             "diverged? a lower --lr may help)");
        std::vector<int> advanced = store->push(h.sender, first, last, h.iteration, grads);
        std::int64_t& pushed = last_pushed.try_emplace(h.sender, h.iteration).first->second;
        pushed = std::max(pushed, h.iteration);
        if (chooser) follow_backups(h.sender, h.iteration, first, last, advanced);
        for (int u : advanced) advance_pulls(u);
        newest = std::max(newest, h.iteration);
        const auto end = Clock::now();
        Slowest& s = slowest[h.iteration];
        s.compute_us = std::max(s.compute_us, h.compute_us);
        if (h.predicted_us > 0) s.predicted_us[h.sender] = static_cast<double>(h.predicted_us);
        while (slowest.size() > 8) slowest.erase(slowest.begin());
        net::Header ack{net::MessageType::kPushAck, -1, h.iteration, h.first_unit, h.last_unit};
        ack.held_us = static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(end - received).count());
        ack.compute_us = static_cast<std::uint64_t>(  // the decoding (net/wire.h)
            std::chrono::duration_cast<std::chrono::microseconds>(start - received).count());
        ack.arrived_us = wire_us(arrived);
        if (!advanced.empty())  // this push completed its units: the aggregation
          last_update = {
              last_update.sequence + 1, dense_bytes(first, last),
              static_cast<std::uint64_t>(
                  std::chrono::duration_cast<std::chrono::microseconds>(end - start).count())};
        if (!advanced.empty()) maybe_checkpoint();
        char report[net::kUpdateReportBytes];
        net::put_update_report(report, last_update);
        send(peer, ack, report, sizeof report);
        if (traced(h.iteration)) {
          const std::string what =
              units_name(first, last) + " (it " + std::to_string(h.iteration) + ")";
          events.push_back(
              {h.sender, "push " + what, "ps-push", clock_ms(received), clock_ms(end)});
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
        on_replan(m);
        break;
      case net::MessageType::kShutdown:
        on_goodbye(h);
        break;
      case net::MessageType::kHeartbeat:  // seen, below
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

bool PsServer::Impl::on_frame(const std::string& peer, const std::string& user_id,
                              const std::uint8_t* data, std::size_t size,
                              Clock::time_point arrived) {
  net::DecodeResult m = net::decode(data, size, limits);
  if (!m.ok()) {
    log_drop("dropped a malformed message from " + who(peer) + ": " + m.error);
    return false;
  }
  // Under CURVE a worker speaks only as the rank its key was admitted for.
  if (options.curve && user_id != "rank " + std::to_string(m.header.sender)) {
    log_drop(std::string("dropped a ") + net::to_string(m.header.type) + " claiming rank " +
             std::to_string(m.header.sender) + " from a worker admitted as " +
             (user_id.empty() ? "nobody" : user_id));
    return false;
  }
  handle(peer, m, arrived);
  // Only the job's own workers keep the PS waiting: junk, or a stranger's messages, must
  // not hold off its timeout.
  if (!members->is(m.header.sender, peer)) return false;
  members->seen(m.header.sender, Clock::now());
  return true;
}

void PsServer::Impl::run() {
  serve();
  router->stop_monitor();  // nobody polls it from here on
}

void PsServer::Impl::serve() {
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
      for (int rank : members->silent(Clock::now(), options.peer_timeout)) {
        drop_rank(rank, "nothing heard from it for " +
                            std::to_string(options.peer_timeout.count()) + " ms");
        answer_pulls();
      }
      for (const std::string& peer : router->take_disconnected())
        if (auto rank = members->rank_of(peer); rank && !members->has_left(*rank)) {
          drop_rank(*rank, "its connection closed (its process exited or was killed)");
          answer_pulls();
        }
      if (store && members->finished(Clock::now(), options.peer_timeout)) return finish();
      if (!got) continue;
      if (!in.ok()) {
        log_drop("dropped a message of " + std::to_string(in.parts + 1) + " frames");
        continue;
      }
      received += in.size();
      if (on_frame(in.peer, in.user_id, in.data(), in.size(), in.received))
        last_message = Clock::now();
      if (store && members->finished(Clock::now(), options.peer_timeout)) return finish();
    }
    throw Error("ps: stopped before the workers finished");
  } catch (...) {
    done.set_exception(std::current_exception());
  }
}

PsServer::PsServer(const ServerOptions& options) : PsServer(options, /*socket=*/true) {}

PsServer::PsServer(const ServerOptions& options, bool socket) : impl_(std::make_unique<Impl>()) {
  options.validate();
  impl_->options = options;
  impl_->codec = std::make_unique<compress::PushCodec>(options.compression, options.seed);
  impl_->pull_codec = compress::PullCodec(options.pull_compression, options.seed);
  net::RouterOptions ro;
  ro.curve = impl_->options.curve ? &*impl_->options.curve : nullptr;
  ro.max_message_bytes = options.max_message_bytes;
  // From the ZAP thread too: its lines come through a lock of their own.
  ro.on_refused = [impl = impl_.get()](const std::string& line) {
    std::lock_guard<std::mutex> lock(impl->refused_mu);
    if (auto l = impl->refused_lines.admit(Clock::now(), line)) impl->log(*l);
  };
  if (socket) impl_->router = std::make_unique<net::ZmqRouter>(options.listen, ro);
  impl_->members = std::make_unique<Membership>(options.workers);
  impl_->agreement = std::make_unique<PlanAgreement>(
      options.workers, [impl = impl_.get()](const std::string& line) { impl->log(line); });
  if (options.resume) impl_->resume();
  if (!options.checkpoint_dir.empty()) make_checkpoint_dir(options.checkpoint_dir);
}

PsServer::~PsServer() { stop(); }

const std::string& PsServer::endpoint() const {
  static const std::string none;
  return impl_->router ? impl_->router->endpoint() : none;
}

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
std::int64_t PsServer::late_pushes_dropped() const {
  if (impl_->thread.joinable() || !impl_->store) return 0;
  return impl_->store->dropped();
}
std::vector<PsEvent> PsServer::trace_events() const {
  if (impl_->thread.joinable()) return {};  // owned by the I/O thread until it stops
  return impl_->events;
}

PsHarness::PsHarness(const ServerOptions& options) : server_(options, /*socket=*/false) {
  if (options.curve) throw InvalidInput("ps: a PsHarness has no sockets, so no CURVE");
}
PsHarness::~PsHarness() = default;

bool PsHarness::feed(const std::string& peer, const void* data, std::size_t size) {
  PsServer::Impl& impl = *server_.impl_;
  if (!impl.failure.empty()) return false;
  impl.on_frame(peer, "", static_cast<const std::uint8_t*>(data), size, Clock::now());
  if (impl.store && impl.members->finished()) return false;
  return impl.failure.empty();
}

}  // namespace dynacomm::ps
