// A PS and workers as threads in one process, over real ZeroMQ on loopback (port 0).
#include "ps/server.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "base/error.h"
#include "compress/pull_codec.h"
#include "compress/push_codec.h"
#include "net/connection.h"

namespace dynacomm::ps {
namespace {

using namespace std::chrono_literals;
using net::Header;
using net::MessageType;

const std::vector<std::int64_t> kUnitFloats = {3, 1, 5, 2};

std::vector<std::int64_t> unit_bytes() {
  std::vector<std::int64_t> b;
  for (auto n : kUnitFloats) b.push_back(n * 4);
  return b;
}

std::vector<std::vector<float>> initial() {
  std::vector<std::vector<float>> v;
  for (std::size_t u = 0; u < kUnitFloats.size(); ++u)
    v.push_back(std::vector<float>(static_cast<std::size_t>(kUnitFloats[u]), 0.25f * (u + 1)));
  return v;
}

// A deterministic "gradient" that depends on the parameters the worker pulled, so a
// wrong or stale pull changes the result.
float fake_grad(int rank, int unit, std::int64_t it, float p) {
  return 0.5f * p + 0.01f * (rank + 1) - 0.001f * unit + 0.0001f * static_cast<float>(it);
}

struct Segments {
  std::vector<std::pair<int, int>> pull, push;  // push in send order
};

// With compressed pulls (compress/pull_codec.h): what a worker holds at the end, the public
// copy and then the parameters themselves (an exact pull).
struct PulledAtEnd {
  std::vector<float> copy, exact;
};

// The wire's limits of pull replies for a job whose pulls go with `pulls`.
net::WireLimits worker_limits(int workers, const compress::PullCodec& pulls) {
  net::WireLimits limits{unit_bytes(), workers - 1, 64 * 1024};
  limits.pull_bytes = pulls.reply_table(kUnitFloats);
  return limits;
}

// A pull reply's units onto `params` (a copy, or an update added).
void take_reply(const compress::PullCodec& pulls, const net::Message& m,
                std::vector<std::vector<float>>& params) {
  const std::uint8_t* at = m.payload();
  std::size_t left = m.header.payload_bytes;
  for (auto u = m.header.first_unit; u <= m.header.last_unit; ++u) {
    const std::size_t used =
        pulls.apply({u, m.header.iteration}, at, left, kUnitFloats[u], params[u].data(), nullptr);
    at += used;
    left -= used;
  }
  ASSERT_EQ(left, 0u);
}

// Pulls every unit at `it` (exact: the parameters themselves) onto `params`, flat.
std::vector<float> pull_all(net::Connection& c, const compress::PullCodec& pulls, int rank,
                            std::int64_t it, bool exact, std::vector<std::vector<float>>& params) {
  Header h{MessageType::kPullRequest, rank, it, 0, 3};
  if (exact) h.flags = net::kFlagExact;
  c.send(h, nullptr, 0);
  net::Message m = c.receive(5s, "the final pull");
  while (m.header.type == MessageType::kPushAck) m = c.receive(5s, "the final pull");
  EXPECT_EQ(m.header.type, MessageType::kPullReply);
  take_reply(pulls, m, params);
  std::vector<float> flat;
  for (auto& u : params) flat.insert(flat.end(), u.begin(), u.end());
  return flat;
}

void run_worker(const std::string& endpoint, int rank, int workers, int iterations,
                const Segments& seg, const std::string& model = "fake",
                const std::string& compression = "none",
                const std::string& pull_compression = "none", PulledAtEnd* end = nullptr,
                std::chrono::milliseconds nap = {},
                const std::function<void()>& welcomed = nullptr) {
  // A mixed job's (auto) method of each unit changes with the unit, the iteration and the
  // rank, as the workers' own choices may.
  compress::PushCodec codec(compression, /*seed=*/1);
  auto method = [&](int u, int it) {
    return codec.mixed() ? static_cast<std::size_t>(u + it + rank) % codec.size() : 0;
  };
  const compress::PullCodec pulls(pull_compression, /*seed=*/1);
  net::Connection c(endpoint, worker_limits(workers, pulls));
  nlohmann::json hello = {{"model", model}, {"workers", workers}, {"unit_bytes", unit_bytes()}};
  std::string text = hello.dump();
  c.send(Header{MessageType::kHello, rank, 0, 0, 0}, text.data(), text.size());
  c.receive(5s, "the welcome");
  if (welcomed) welcomed();
  std::vector<std::vector<float>> params = initial();
  if (rank == 0) {
    std::vector<float> all;
    for (auto& u : params) all.insert(all.end(), u.begin(), u.end());
    c.send(Header{MessageType::kInit, 0, 0, 0, static_cast<std::uint32_t>(params.size() - 1)},
           all.data(), all.size() * 4);
  }
  std::size_t acks = 0;  // every push is acknowledged, in order
  auto on_ack = [&](const net::Message& m) {
    const std::size_t k = acks % seg.push.size();
    EXPECT_EQ(m.header.iteration, static_cast<std::int64_t>(acks / seg.push.size()));
    EXPECT_EQ(m.header.first_unit, static_cast<std::uint32_t>(seg.push[k].first));
    EXPECT_EQ(m.header.last_unit, static_cast<std::uint32_t>(seg.push[k].second));
    EXPECT_LT(m.header.held_us, 5'000'000u);  // the PS's processing time, not a wait
    ++acks;
  };
  for (int it = 0; it < iterations; ++it) {
    for (auto [a, b] : seg.pull)  // pipelined: all requests first
      c.send(Header{MessageType::kPullRequest, rank, it, static_cast<std::uint32_t>(a),
                    static_cast<std::uint32_t>(b)},
             nullptr, 0);
    for (std::size_t k = 0; k < seg.pull.size(); ++k) {
      net::Message m = c.receive(5s, "a pull reply");
      if (m.header.type == MessageType::kPushAck) {
        on_ack(m);
        --k;
        continue;
      }
      ASSERT_EQ(m.header.type, MessageType::kPullReply);
      ASSERT_EQ(m.header.iteration, it);
      take_reply(pulls, m, params);
    }
    std::this_thread::sleep_for(nap);  // a slower device
    for (auto [a, b] : seg.push) {
      std::vector<float> g;
      for (int u = a; u <= b; ++u)
        for (float p : params[u]) g.push_back(fake_grad(rank, u, it, p));
      Header h{MessageType::kPush, rank, it, static_cast<std::uint32_t>(a),
               static_cast<std::uint32_t>(b)};
      h.codec = static_cast<net::Codec>(codec.wire_codec());
      std::string bytes;  // each unit encoded on its own, back to back
      const float* at = g.data();
      for (int u = a; u <= b; ++u) {
        std::string e(codec.encoded_bytes(method(u, it), kUnitFloats[u], it), '\0');
        codec.encode(method(u, it), {u, it}, at, kUnitFloats[u],
                     reinterpret_cast<std::uint8_t*>(e.data()));
        bytes += e;
        at += kUnitFloats[u];
      }
      c.send(h, bytes.data(), bytes.size());
    }
  }
  while (acks < seg.push.size() * static_cast<std::size_t>(iterations)) {
    net::Message m = c.receive(5s, "a push ack");
    ASSERT_EQ(m.header.type, MessageType::kPushAck);
    on_ack(m);
  }
  if (end) {
    end->copy = pull_all(c, pulls, rank, iterations, false, params);
    end->exact = pull_all(c, pulls, rank, iterations, true, params);
  }
  c.send(Header{MessageType::kShutdown, rank, 0, 0, 0}, nullptr, 0);
}

ServerOptions server_options(int workers) {
  ServerOptions o;
  o.workers = workers;
  o.model = "fake";
  o.sgd.lr = 0.1;
  o.sgd.momentum = 0.9;
  o.sgd.weight_decay = 1e-3;
  o.timeout = 10s;
  o.log = [](const std::string&) {};
  return o;
}

// Raw connections of ranks 0..workers-1 to `ps`, each welcomed.
std::vector<std::unique_ptr<net::Connection>> joined(const PsServer& ps, int workers) {
  std::vector<std::unique_ptr<net::Connection>> c;
  for (int r = 0; r < workers; ++r) {
    c.push_back(std::make_unique<net::Connection>(ps.endpoint(),
                                                  net::WireLimits{unit_bytes(), 1, 64 * 1024}));
    std::string text =
        nlohmann::json{{"model", "fake"}, {"workers", workers}, {"unit_bytes", unit_bytes()}}
            .dump();
    c.back()->send(Header{MessageType::kHello, r, 0, 0, 0}, text.data(), text.size());
    c.back()->receive(5s, "the welcome");
  }
  return c;
}

// Rank 0's initial parameters, as a worker sends them after its welcome.
void send_init(net::Connection& c) {
  std::vector<float> all;
  for (auto& u : initial()) all.insert(all.end(), u.begin(), u.end());
  c.send(Header{MessageType::kInit, 0, 0, 0, 3}, all.data(), all.size() * 4);
}

// Rank 0's init, applied before anything else is sent: the PS takes each connection's
// messages in order, but another rank's push may overtake the init, so rank 0 waits for
// its pull of iteration 0, which the PS answers only once the init is in.
void send_init_and_wait(net::Connection& c) {
  send_init(c);
  c.send(Header{MessageType::kPullRequest, 0, 0, 0, 3}, nullptr, 0);
  ASSERT_EQ(c.receive(5s, "iteration 0's parameters").header.type, MessageType::kPullReply);
}

std::vector<float> train(int workers, int iterations, const std::vector<Segments>& plans,
                         const std::string& compression = "none") {
  ServerOptions o = server_options(workers);
  o.compression = compression;
  PsServer ps(o);
  ps.start();
  std::vector<std::thread> threads;
  for (int r = 0; r < workers; ++r)
    threads.emplace_back([&, r] {
      run_worker(ps.endpoint(), r, workers, iterations, plans[r % plans.size()], "fake",
                 compression);
    });
  for (auto& t : threads) t.join();
  return ps.wait();
}

// The same arithmetic without any networking: sum in rank order, average, SGD.
std::vector<float> reference(int workers, int iterations) {
  ServerOptions o = server_options(workers);
  auto params = initial();
  std::vector<std::int64_t> sizes(kUnitFloats.begin(), kUnitFloats.end());
  optim::Sgd sgd(o.sgd, sizes);
  for (int it = 0; it < iterations; ++it)
    for (std::size_t u = 0; u < params.size(); ++u) {
      std::vector<float> sum(params[u].size(), 0.f);
      for (int r = 0; r < workers; ++r)
        for (std::size_t k = 0; k < sum.size(); ++k)
          sum[k] = r == 0 ? fake_grad(r, static_cast<int>(u), it, params[u][k])
                          : sum[k] + fake_grad(r, static_cast<int>(u), it, params[u][k]);
      if (workers > 1)
        for (auto& s : sum) s /= static_cast<float>(workers);
      sgd.step(static_cast<int>(u), params[u].data(), sum.data(), it);
    }
  std::vector<float> flat;
  for (auto& u : params) flat.insert(flat.end(), u.begin(), u.end());
  return flat;
}

const Segments kSequential{{{0, 3}}, {{0, 3}}};
const Segments kLayerwise{{{0, 0}, {1, 1}, {2, 2}, {3, 3}}, {{3, 3}, {2, 2}, {1, 1}, {0, 0}}};
const Segments kMixed{{{0, 1}, {2, 3}}, {{3, 3}, {0, 2}}};

// A job with compressed pulls: the weights and every worker's final copy, per rank.
struct PulledJob {
  std::vector<float> weights;
  std::vector<PulledAtEnd> ends;
};
PulledJob train_pulled(int workers, int iterations, const std::vector<Segments>& plans,
                       const std::string& pull_compression) {
  ServerOptions o = server_options(workers);
  o.pull_compression = pull_compression;
  PsServer ps(o);
  ps.start();
  PulledJob job;
  job.ends.resize(static_cast<std::size_t>(workers));
  std::vector<std::thread> threads;
  for (int r = 0; r < workers; ++r)
    threads.emplace_back([&, r] {
      run_worker(ps.endpoint(), r, workers, iterations, plans[r % plans.size()], "fake", "none",
                 pull_compression, &job.ends[static_cast<std::size_t>(r)]);
    });
  for (auto& t : threads) t.join();
  job.weights = ps.wait();
  return job;
}

// Compressed pulls: every worker's copy is the PS's public copy bit for bit (the same for
// every rank and every segmentation, since updates are per atom), an exact pull gives the
// parameters, and the pulls did compress (the weights are not dense pulls').
TEST(PsCluster, CompressedPullsKeepEveryCopyIdenticalUnderAnySegmentation) {
  for (const std::string method : {"topk:0.4", "qsgd:4", "randomk:0.5", "fp16"}) {
    SCOPED_TRACE(method);
    const PulledJob expected = train_pulled(2, 10, {kSequential}, method);
    EXPECT_EQ(expected.ends[0].copy, expected.ends[1].copy);
    EXPECT_EQ(expected.ends[0].exact, expected.weights);
    EXPECT_EQ(expected.ends[1].exact, expected.weights);
    EXPECT_NE(expected.ends[0].copy, expected.weights);
    EXPECT_NE(expected.weights, reference(2, 10));
    for (const std::vector<Segments>& plans :
         {std::vector<Segments>{kLayerwise}, std::vector<Segments>{kMixed, kLayerwise}}) {
      const PulledJob other = train_pulled(2, 10, plans, method);
      EXPECT_EQ(other.weights, expected.weights);
      EXPECT_EQ(other.ends[0].copy, expected.ends[0].copy);
      EXPECT_EQ(other.ends[1].copy, expected.ends[0].copy);
    }
  }
}

// A job under --sync `mode`: the PS's final weights, what rank 0's final (exact) pull read,
// and the late pushes dropped, with rank `slow` 30 ms slower each iteration.
struct SyncJob {
  std::vector<float> weights, final_pull;
  std::int64_t dropped = 0;
};
SyncJob train_sync(int workers, int iterations, const std::string& mode, int slow = -1) {
  ServerOptions o = server_options(workers);
  o.sync = mode;
  PsServer ps(o);
  ps.start();
  SyncJob job;
  std::vector<std::thread> threads;
  // Every rank joins before rank 0 starts the job: a late hello would join the running job
  // at its newest version, which these fake workers do not follow.
  std::atomic<int> joined{0};
  auto welcomed = [&] {
    ++joined;
    while (joined.load() < workers) std::this_thread::sleep_for(1ms);
  };
  for (int r = 0; r < workers; ++r)
    threads.emplace_back([&, r] {
      PulledAtEnd end;
      run_worker(ps.endpoint(), r, workers, iterations, r % 2 ? kLayerwise : kMixed, "fake", "none",
                 "none", r == 0 ? &end : nullptr, r == slow ? 30ms : 0ms, welcomed);
      if (r == 0) job.final_pull = end.exact;
    });
  for (auto& t : threads) t.join();
  job.weights = ps.wait();
  job.dropped = ps.late_pushes_dropped();
  return job;
}

// Every mode through the real server: ssp:0 is BSP bit for bit; SSP and backup workers end
// with rank 0's final pull equal to the PS's weights; backup drops the slow rank's late
// pushes (backup:auto once it has chosen B = 1); ASP applies every one (none dropped); local
// SGD's rounds are BSP's iterations at the PS; a job that needs BSP refuses the others.
TEST(PsCluster, EverySyncModeRunsAJobThroughTheServer) {
  EXPECT_EQ(train_sync(3, 10, "ssp:0").weights, reference(3, 10));
  for (const std::string mode : {"ssp:2", "backup:1", "asp", "backup:auto", "local:4"}) {
    SCOPED_TRACE(mode);
    // backup:auto decides after its first window (3 iterations, two more ready), then
    // every 10.
    const int iterations = mode == "backup:auto" ? 30 : 12;
    const SyncJob job = train_sync(3, iterations, mode, /*slow=*/2);
    for (float w : job.weights) EXPECT_TRUE(std::isfinite(w));
    if (mode.rfind("local:", 0) == 0) {  // the PS runs local SGD's rounds as BSP's iterations
      EXPECT_EQ(job.weights, reference(3, iterations));
    } else {
      EXPECT_NE(job.weights, reference(3, iterations)) << "the mode changed nothing";
    }
    if (mode != "asp") {
      EXPECT_EQ(job.final_pull, job.weights);
    }
    if (mode.rfind("backup:", 0) == 0) {
      EXPECT_GT(job.dropped, 0);
    } else {
      EXPECT_EQ(job.dropped, 0);
    }
  }
  ServerOptions o = server_options(2);
  o.sync = "asp";
  o.pull_compression = "topk:0.5";
  EXPECT_THROW(o.validate(), InvalidInput);
  o.sync = "ssp:x";
  o.pull_compression = "none";
  EXPECT_THROW(o.validate(), InvalidInput);
}

TEST(PsCluster, AnySegmentationGivesBitIdenticalWeights) {
  const std::vector<float> expected = reference(2, 15);
  EXPECT_EQ(train(2, 15, {kSequential}), expected);
  EXPECT_EQ(train(2, 15, {kLayerwise}), expected);
  EXPECT_EQ(train(2, 15, {kMixed, kLayerwise}), expected);  // workers may even differ
  EXPECT_EQ(train(3, 10, {kMixed, kSequential, kLayerwise}), reference(3, 10));
}

// Compression is per unit (atom), so with a fixed seed the same method gives the same
// weights under every segmentation; and it does compress (the weights are not dense's).
TEST(PsCluster, CompressedPushesGiveTheSameWeightsUnderAnySegmentation) {
  for (const std::string method :
       {"topk:0.4", "qsgd:4", "randomk:0.5", "fp16", "auto:topk:0.4+qsgd:4", "dgc:0.5:2"}) {
    SCOPED_TRACE(method);
    const std::vector<float> expected = train(2, 10, {kSequential}, method);
    EXPECT_EQ(train(2, 10, {kLayerwise}, method), expected);
    EXPECT_EQ(train(2, 10, {kMixed, kLayerwise}, method), expected);
    EXPECT_NE(expected, reference(2, 10));
  }
}

// A pull reply says how long its request waited for the units' update, so the worker can
// tell waiting from transfer, how long the slowest worker computed in the iteration before
// and the slowest prediction of it; the ack of the push that completes the units says so;
// the PS's own events of the traced iterations are kept.
TEST(PsCluster, RepliesCarryTheirWaitAndThePsTracesItsEvents) {
  PsServer ps(server_options(2));
  ps.start();
  std::vector<std::unique_ptr<net::Connection>> c;
  for (int r = 0; r < 2; ++r) {
    c.push_back(std::make_unique<net::Connection>(ps.endpoint(),
                                                  net::WireLimits{unit_bytes(), 1, 64 * 1024}));
    std::string text = nlohmann::json{
        {"model", "fake"},
        {"workers", 2},
        {"unit_bytes", unit_bytes()},
        {"trace_from", 1},
        {"trace_count", 1}}.dump();
    c[r]->send(Header{MessageType::kHello, r, 0, 0, 0}, text.data(), text.size());
    c[r]->receive(5s, "the welcome");
  }
  send_init(*c[0]);
  std::vector<float> zeros(11, 0.0f);  // every unit: 3 + 1 + 5 + 2 floats
  auto push = [&](int r, std::int64_t it, std::uint64_t compute_us = 0,
                  std::uint64_t predicted_us = 0) {
    Header h{MessageType::kPush, r, it, 0, 3};
    h.compute_us = compute_us;
    h.predicted_us = predicted_us;
    c[static_cast<std::size_t>(r)]->send(h, zeros.data(), zeros.size() * 4);
    net::Message ack = c[static_cast<std::size_t>(r)]->receive(5s, "the push ack");
    EXPECT_EQ(ack.header.type, MessageType::kPushAck);
    EXPECT_EQ(ack.header.iteration, it);
    // The PS's latest update: none before rank 1's push completes the units of an
    // iteration; then that push's processing (the aggregation, its decoding left out: the
    // plans count it per unit), whoever's ack carries it, and the dense bytes it adds up.
    const net::UpdateReport u = net::get_update_report(ack.payload());
    EXPECT_EQ(u.sequence, static_cast<std::uint64_t>(it + (r == 1 ? 1 : 0))) << "rank " << r;
    EXPECT_EQ(u.bytes, u.sequence > 0 ? zeros.size() * 4 : 0u);
    if (r == 1) {
      EXPECT_LE(u.us, ack.header.held_us);
    }
  };
  // Each push tells how long its worker computed and what it predicts for the iteration.
  push(0, 0, 100'000, 900'000);
  c[0]->send(Header{MessageType::kPullRequest, 0, 1, 0, 3}, nullptr, 0);  // needs rank 1's push
  std::this_thread::sleep_for(300ms);
  push(1, 0, 250'000, 400'000);
  net::Message reply = c[0]->receive(5s, "the pull reply");
  ASSERT_EQ(reply.header.type, MessageType::kPullReply);
  EXPECT_GE(reply.header.held_us, 250'000u);  // waited for rank 1
  EXPECT_LT(reply.header.held_us, 5'000'000u);
  EXPECT_EQ(reply.header.compute_us, 250'000u);    // the slowest worker of iteration 0
  EXPECT_EQ(reply.header.predicted_us, 900'000u);  // and the slowest prediction (another one)
  push(0, 1);                                      // traced iteration
  push(1, 1);
  for (int r = 0; r < 2; ++r) c[r]->send(Header{MessageType::kShutdown, r, 0, 0, 0}, nullptr, 0);
  ps.wait();
  std::vector<PsEvent> events = ps.trace_events();
  int pulls = 0, pushes = 0, updates = 0;
  for (const PsEvent& e : events) {
    EXPECT_GE(e.end_ms, e.start_ms);
    if (e.category == "ps-pull") {
      ++pulls;
      EXPECT_EQ(e.track, 0);
      EXPECT_GE(e.end_ms - e.start_ms, 250.0);  // the wait is on the timeline
    }
    pushes += e.category == "ps-push";
    if (e.category == "ps-update") {
      ++updates;
      EXPECT_EQ(e.track, 2);
    }
  }
  EXPECT_EQ(pulls, 1);    // only iteration 1 is traced
  EXPECT_EQ(pushes, 2);   // both ranks' pushes of iteration 1
  EXPECT_EQ(updates, 1);  // the second completes the units
}

// Under SSP a fast worker reads ahead of a straggler's pushes, so the pace its pull
// reply predicts takes the straggler's newest prediction, not only those of the pushes of
// the iteration before (which were the fast workers' alone).
TEST(PsCluster, SspPaceKeepsTheStragglersNewestPrediction) {
  ServerOptions o = server_options(2);
  o.sync = "ssp:2";
  PsServer ps(o);
  ps.start();
  std::vector<std::unique_ptr<net::Connection>> c = joined(ps, 2);
  send_init_and_wait(*c[0]);
  std::vector<float> zeros(11, 0.0f);
  auto push = [&](int r, std::int64_t it, std::uint64_t predicted_us) {
    Header h{MessageType::kPush, r, it, 0, 3};
    h.predicted_us = predicted_us;
    c[static_cast<std::size_t>(r)]->send(h, zeros.data(), zeros.size() * 4);
    EXPECT_EQ(c[static_cast<std::size_t>(r)]->receive(5s, "the push ack").header.type,
              MessageType::kPushAck);
  };
  auto pace = [&](std::int64_t it) {
    c[0]->send(Header{MessageType::kPullRequest, 0, it, 0, 3}, nullptr, 0);
    net::Message reply = c[0]->receive(5s, "the pull reply");
    EXPECT_EQ(reply.header.type, MessageType::kPullReply);
    return reply.header.predicted_us;
  };
  push(0, 0, 100'000);
  push(1, 0, 900'000);  // the straggler's only push
  EXPECT_EQ(pace(1), 900'000u);
  push(0, 1, 100'000);
  EXPECT_EQ(pace(2), 900'000u);  // rank 1's push of 1 is not in: its push of 0 counts
  push(0, 2, 120'000);
  EXPECT_EQ(pace(3), 900'000u);
  push(1, 1, 800'000);  // newer: it replaces the older one
  push(0, 3, 100'000);
  EXPECT_EQ(pace(4), 800'000u);
  for (int r = 0; r < 2; ++r) c[r]->send(Header{MessageType::kShutdown, r, 0, 0, 0}, nullptr, 0);
  ps.wait();
}

// A full-duplex plan's pull order: requests flagged in-order are answered in the order they
// came, a later one waiting behind an earlier one whose units are not ready; unflagged ones
// as soon as their units are.
TEST(PsCluster, InOrderRequestsAreAnsweredInArrivalOrder) {
  for (bool in_order : {true, false}) {
    SCOPED_TRACE(in_order ? "in order" : "as ready");
    PsServer ps(server_options(2));
    ps.start();
    std::vector<std::unique_ptr<net::Connection>> c = joined(ps, 2);
    std::vector<float> all;
    for (auto& u : initial()) all.insert(all.end(), u.begin(), u.end());
    c[0]->send(Header{MessageType::kInit, 0, 0, 0, 3}, all.data(), all.size() * 4);
    auto push = [&](int r, std::uint32_t first, std::uint32_t last) {
      std::vector<float> zeros;
      for (auto u = first; u <= last; ++u) zeros.resize(zeros.size() + kUnitFloats[u], 0.0f);
      c[static_cast<std::size_t>(r)]->send(Header{MessageType::kPush, r, 0, first, last},
                                           zeros.data(), zeros.size() * 4);
    };
    // The next pull reply to rank 0 within `wait`, skipping push acks.
    auto reply = [&](std::chrono::milliseconds wait) -> std::optional<net::Message> {
      const auto until = std::chrono::steady_clock::now() + wait;
      net::Message m;
      while (std::chrono::steady_clock::now() < until)
        if (c[0]->poll(net::Clock::now() + 10ms, &m) && m.header.type == MessageType::kPullReply)
          return m;
      return std::nullopt;
    };
    for (std::uint32_t u : {0u, 3u}) {  // iteration 1: unit 0 first, then unit 3
      Header h{MessageType::kPullRequest, 0, 1, u, u};
      if (in_order) h.flags = net::kFlagInOrder;
      c[0]->send(h, nullptr, 0);
    }
    push(0, 3, 3);  // unit 3 reaches version 1; unit 0 does not yet
    // Rank 0's ack: the PS has its init and push before rank 1's push can come.
    EXPECT_EQ(c[0]->receive(5s, "the push ack").header.type, MessageType::kPushAck);
    push(1, 3, 3);
    std::optional<net::Message> m = reply(in_order ? 500ms : 5000ms);
    if (in_order) {
      EXPECT_FALSE(m) << "unit 3 was answered before unit 0, requested first";
    } else {
      ASSERT_TRUE(m);
      EXPECT_EQ(m->header.first_unit, 3u);
    }
    push(0, 0, 2);
    push(1, 0, 2);
    std::vector<std::uint32_t> order;
    if (m) order.push_back(m->header.first_unit);
    while (order.size() < 2) {
      m = reply(5000ms);
      ASSERT_TRUE(m) << "a pull reply is missing";
      order.push_back(m->header.first_unit);
    }
    EXPECT_EQ(order,
              (in_order ? std::vector<std::uint32_t>{0, 3} : std::vector<std::uint32_t>{3, 0}));
    for (int r = 0; r < 2; ++r) c[r]->send(Header{MessageType::kShutdown, r, 0, 0, 0}, nullptr, 0);
    ps.wait();
  }
}

// The job's full-duplex plans: the PS answers every worker once all have offered theirs,
// each strategy with the plan of the worker that predicted itself slowest; a malformed or
// repeated offer is refused, naming what was wrong, and the server carries on.
// Re-planning together: once both workers have reported on the job's plan, the slowest
// one's proposal becomes everyone's plan from three iterations past the newest the PS has
// seen; without a proposal from the slowest, nothing changes; reports about the plan
// before are ignored; a malformed or early report is refused.
TEST(PsCluster, ReplansTheJobFromTheSlowestWorkersProposal) {
  PsServer ps(server_options(2));
  ps.start();
  std::vector<std::unique_ptr<net::Connection>> c = joined(ps, 2);
  auto send = [&](MessageType type, int r, std::int64_t it, const nlohmann::json& j) {
    const std::string text = j.dump();
    c[static_cast<std::size_t>(r)]->send(Header{type, r, it, 0, 0}, text.data(), text.size());
  };
  auto report = [](double current_ms, double proposed_ms, const std::string& tag) {
    nlohmann::json j = {{"current_ms", current_ms}, {"proposal", nullptr}};
    if (proposed_ms > 0)
      j["proposal"] = {{"predicted_ms", proposed_ms}, {"plan", {{"tag", tag}}}, {"why", tag}};
    return j;
  };
  auto refused = [&](int r, const std::string& what) {
    try {
      c[static_cast<std::size_t>(r)]->receive(5s, "the refusal");
      return std::string("accepted");
    } catch (const Error& e) {
      return std::string(e.what()).find(what) != std::string::npos ? std::string()
                                                                   : std::string(e.what());
    }
  };
  send(MessageType::kReplan, 0, 3, report(900, 800, "early"));
  EXPECT_EQ(refused(0, "have not been agreed yet"), "");
  for (int r = 0; r < 2; ++r) send(MessageType::kPlans, r, 3, {{"plans", nlohmann::json::array()}});
  for (int r = 0; r < 2; ++r)
    ASSERT_EQ(c[static_cast<std::size_t>(r)]->receive(5s, "the job's plans").header.type,
              MessageType::kPlans);
  send(MessageType::kReplan, 1, 3, {{"current_ms", -1}});
  EXPECT_EQ(refused(1, "replan report: \"current_ms\" is not a number > 0"), "");
  c[0]->send(Header{MessageType::kPullRequest, 0, 5, 0, 3}, nullptr, 0);  // the newest: 5
  auto no_change = [&](int r) {
    EXPECT_THROW(c[static_cast<std::size_t>(r)]->receive(300ms, "no change"), Timeout);
  };
  // Rank 1 is the slower (1000 ms) and keeps the plan: so does the job.
  send(MessageType::kReplan, 0, 5, report(900, 800, "zero's"));
  send(MessageType::kReplan, 1, 5, report(1000, 0, ""));
  no_change(0);
  // Now rank 1 proposes: everyone runs its plan from iteration 5 + 3.
  send(MessageType::kReplan, 1, 5, report(1000, 700, "one's"));
  for (int r = 0; r < 2; ++r) {
    const net::Message m = c[static_cast<std::size_t>(r)]->receive(5s, "the job's next plan");
    ASSERT_EQ(m.header.type, MessageType::kReplan);
    const auto j = nlohmann::json::parse(
        std::string(reinterpret_cast<const char*>(m.payload()), m.header.payload_bytes));
    EXPECT_EQ(j["plan"]["tag"], "one's") << j.dump();
    EXPECT_EQ(j["rank"], 1);
    EXPECT_EQ(j["from_iteration"], 8);
    EXPECT_EQ(j["predicted_ms"], 700);
    EXPECT_EQ(j["current_ms"], 1000);
    EXPECT_EQ(j["why"], "one's");
  }
  // Reports made before iteration 8 judged the plan before: not counted.
  send(MessageType::kReplan, 0, 7, report(2000, 600, "stale"));
  send(MessageType::kReplan, 1, 8, report(1000, 0, ""));
  no_change(1);
  send(MessageType::kReplan, 0, 8, report(1200, 1100, "zero's again"));
  const net::Message m = c[1]->receive(5s, "the job's next plan");
  ASSERT_EQ(m.header.type, MessageType::kReplan);
  const auto j = nlohmann::json::parse(
      std::string(reinterpret_cast<const char*>(m.payload()), m.header.payload_bytes));
  EXPECT_EQ(j["plan"]["tag"], "zero's again");
  EXPECT_EQ(j["rank"], 0);
  EXPECT_EQ(j["from_iteration"], 8);  // still 5 the newest seen
  ps.stop();
}

TEST(PsCluster, AgreesOnePlanPerStrategyFromTheSlowestWorker) {
  PsServer ps(server_options(2));
  ps.start();
  std::vector<std::unique_ptr<net::Connection>> c = joined(ps, 2);
  auto offer = [&](int r, const nlohmann::json& j) {
    const std::string text = j.dump();
    c[static_cast<std::size_t>(r)]->send(Header{MessageType::kPlans, r, 3, 0, 0}, text.data(),
                                         text.size());
  };
  auto entry = [](int index, double ms, const std::string& tag) {
    return nlohmann::json{{"index", index}, {"predicted_ms", ms}, {"plan", {{"tag", tag}}}};
  };
  try {
    offer(1, nlohmann::json{{"plans", {{{"index", -1}}}}});
    c[1]->receive(5s, "the refusal");
    FAIL() << "a malformed offer was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("plans offer: \"index\" is not an integer"),
              std::string::npos)
        << e.what();
  }
  offer(0, {{"plans", {entry(0, 100, "zero's first"), entry(2, 900, "zero's third")}}});
  offer(1, {{"plans", {entry(0, 700, "one's first"), entry(2, 900, "one's third")}}});
  for (int r = 0; r < 2; ++r) {
    const net::Message m = c[static_cast<std::size_t>(r)]->receive(5s, "the job's plans");
    ASSERT_EQ(m.header.type, MessageType::kPlans);
    const auto j = nlohmann::json::parse(
        std::string(reinterpret_cast<const char*>(m.payload()), m.header.payload_bytes));
    ASSERT_EQ(j["plans"].size(), 2u) << j.dump();
    EXPECT_EQ(j["plans"][0]["index"], 0);
    EXPECT_EQ(j["plans"][0]["rank"], 1);  // 700 ms against 100: rank 1 sets the pace
    EXPECT_EQ(j["plans"][0]["plan"]["tag"], "one's first");
    EXPECT_EQ(j["plans"][1]["rank"], 0);  // a tie: the lower rank
    EXPECT_EQ(j["plans"][1]["plan"]["tag"], "zero's third");
  }
  // An offer after the agreement (a worker that joined again) gets the job's plans, alone.
  offer(0, {{"plans", nlohmann::json::array()}});
  const net::Message again = c[0]->receive(5s, "the job's plans again");
  ASSERT_EQ(again.header.type, MessageType::kPlans);
  EXPECT_NE(std::string(reinterpret_cast<const char*>(again.payload()), again.header.payload_bytes)
                .find("one's first"),
            std::string::npos);
  EXPECT_THROW(c[1]->receive(300ms, "nothing"), Timeout);
  ps.stop();
}

// A hello of `model`, `workers` and (unless null) `config` as `rank`: "welcomed", or the
// error the PS answered.
std::string hello(net::Connection& c, const std::string& model, int workers, int rank,
                  const nlohmann::json& config = nullptr) {
  nlohmann::json h = {{"model", model}, {"workers", workers}, {"unit_bytes", unit_bytes()}};
  if (!config.is_null()) h["config"] = config;
  const std::string text = h.dump();
  c.send(Header{MessageType::kHello, rank, 0, 0, 0}, text.data(), text.size());
  try {
    c.receive(5s, "the welcome");
  } catch (const Error& e) {
    return e.what();
  }
  return "welcomed";
}

// What the PS's wait() threw ("" if it returned).
std::string ps_error(PsServer& ps) {
  try {
    ps.wait();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

net::WireLimits limits(int workers) {
  return net::WireLimits{unit_bytes(), workers - 1, 64 * 1024};
}

// A worker that does not fit the job is refused, and the worker that joined hears at
// once that the job stops, and why (instead of waiting out its timeout).
TEST(PsCluster, RefusesMismatchedWorkersAndTellsTheOthers) {
  struct Case {
    std::string model;
    int workers;
    nlohmann::json config;
    std::string why;
  };
  const Case cases[] = {
      {"resnet18", 2, nullptr, "worker runs model 'resnet18', the PS serves 'fake'"},
      {"fake", 4, nullptr, "worker expects 4 workers, the PS runs a job of 2"},
      {"fake", 2, {{"--batch", "64"}}, "worker runs --batch 64, the job --batch 32"},
  };
  for (const Case& k : cases) {
    ServerOptions o = server_options(2);
    o.job.settings = {{"--batch", "32"}, {"--scheduler", "auto"}};
    PsServer ps(o);
    ps.start();
    net::Connection first(ps.endpoint(), limits(2)), second(ps.endpoint(), limits(2));
    ASSERT_EQ(hello(first, "fake", 2, 0, {{"--batch", "32"}}), "welcomed");
    EXPECT_EQ(hello(second, k.model, k.workers, 1, k.config),
              "the PS at " + ps.endpoint() + " said: refused: " + k.why);
    try {
      first.receive(5s, "a pull reply");
      FAIL() << "worker 0 was not told";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()),
                "the PS at " + ps.endpoint() + " said: worker 1 was refused: " + k.why);
    }
    EXPECT_EQ(ps_error(ps), "ps: worker 1 was refused: " + k.why);
  }
}

// A rank out of range or garbage is refused or dropped without stopping the job.
TEST(PsCluster, RefusesABadRankAndDropsGarbageButGoesOn) {
  std::mutex log_mu;
  std::string log;
  ServerOptions o = server_options(2);
  o.log = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mu);
    log += line + "\n";
  };
  PsServer ps(o);
  ps.start();
  net::Connection c(ps.endpoint(), limits(2));
  EXPECT_NE(hello(c, "fake", 2, 5).find("refused: rank 5"), std::string::npos);
  EXPECT_EQ(hello(c, "fake", 2, 0), "welcomed");
  c.send(Header{MessageType::kPush, 0, 0, 0, 9}, nullptr, 0);  // unit range out of the model
  std::this_thread::sleep_for(100ms);
  EXPECT_GE(ps.messages_dropped(), 1u);
  ps.stop();
  EXPECT_NE(log.find("dropped a malformed message from rank 0: unit range 0..9 is not within the "
                     "model's 0..3"),
            std::string::npos)
      << log;
}

// Before its hello a worker asks for the job's settings; they come back as given.
TEST(PsCluster, HandsTheJobsConfigurationToAnyWorkerThatAsks) {
  ServerOptions o = server_options(2);
  o.job.settings = {{"--model", "fake"}, {"--batch", "32"}};
  PsServer ps(o);
  ps.start();
  net::Connection c(ps.endpoint(), limits(2));
  c.send(Header{MessageType::kJobConfig, 1, 0, 0, 0}, nullptr, 0);
  const net::Message m = c.receive(5s, "the job's configuration");
  ASSERT_EQ(m.header.type, MessageType::kJobConfig);
  const net::JobConfig got = net::decode_job_config(m.payload(), m.header.payload_bytes);
  auto sorted = [](std::vector<std::pair<std::string, std::string>> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(got.settings), sorted(o.job.settings));  // in any order
  ps.stop();
}

// A worker that fails (or refuses the job's settings) says so; the PS tells the others at
// once and stops.
TEST(PsCluster, AWorkersFailureReachesTheOthersAtOnce) {
  PsServer ps(server_options(2));
  ps.start();
  net::Connection first(ps.endpoint(), limits(2)), second(ps.endpoint(), limits(2));
  ASSERT_EQ(hello(first, "fake", 2, 0), "welcomed");
  const std::string why = "--batch 64 conflicts with the job's --batch 32";
  second.send(Header{MessageType::kError, 1, 0, 0, 0}, why.data(), why.size());
  const auto t0 = std::chrono::steady_clock::now();
  try {
    first.receive(5s, "a pull reply");
    FAIL() << "worker 0 was not told";
  } catch (const Timeout&) {
    FAIL() << "worker 0 waited out its timeout";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "the PS at " + ps.endpoint() + " said: worker 1 failed: " + why);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_EQ(ps_error(ps), "ps: worker 1 failed: " + why);
}

TEST(PsCluster, ClearErrorsForPortInUseAndMissingPs) {
  PsServer first(server_options(1));
  ServerOptions o = server_options(1);
  o.listen = first.endpoint();
  try {
    PsServer second(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on " + first.endpoint()),
              std::string::npos);
  }
  // Nothing listens on port 1; the wait names the endpoint and what was awaited.
  net::Connection c("tcp://127.0.0.1:1", net::WireLimits{unit_bytes(), 0, 1024});
  try {
    c.receive(200ms, "the welcome");
    FAIL();
  } catch (const Timeout& e) {
    EXPECT_NE(std::string(e.what()).find("no answer from the PS at tcp://127.0.0.1:1 within 200 ms "
                                         "while waiting for the welcome"),
              std::string::npos);
  }
}

TEST(PsCluster, ServerTimesOutNamingMissingWorkers) {
  ServerOptions o = server_options(2);
  o.timeout = 300ms;
  PsServer ps(o);
  ps.start();
  // A stranger's junk every 20 ms does not hold the timeout off.
  std::atomic<bool> done{false};
  std::thread stranger([&] {
    net::Connection c(ps.endpoint(), limits(2));
    while (!done) {
      c.send(Header{MessageType::kPush, 1, 0, 0, 9}, nullptr, 0);
      std::this_thread::sleep_for(20ms);
    }
  });
  const auto began = std::chrono::steady_clock::now();
  try {
    ps.wait();
    ADD_FAILURE() << "the PS did not time out";
  } catch (const Timeout& e) {
    EXPECT_NE(std::string(e.what()).find("workers not joined: 0, 1"), std::string::npos);
  }
  done = true;
  stranger.join();
  EXPECT_LT(std::chrono::steady_clock::now() - began, 5s) << "the junk kept it waiting";
}

namespace hostile {

// What the PS answered `c` (its error, or "a TYPE" for anything else).
std::string answer(net::Connection& c) {
  try {
    return std::string("a ") + net::to_string(c.receive(5s, "the PS's answer").header.type);
  } catch (const Error& e) {
    return e.what();
  }
}

void send_text(net::Connection& c, MessageType type, int rank, const std::string& text) {
  c.send(Header{type, rank, 0, 0, 0}, text.data(), text.size());
}

void push(net::Connection& c, int rank, std::int64_t it, int first, int last, float value) {
  std::vector<float> g;
  for (int u = first; u <= last; ++u) g.insert(g.end(), kUnitFloats[u], value);
  c.send(Header{MessageType::kPush, rank, it, static_cast<std::uint32_t>(first),
                static_cast<std::uint32_t>(last)},
         g.data(), g.size() * 4);
}

}  // namespace hostile

// A hello is checked field by field: a bad one is refused with why, and the job goes on.
TEST(PsCluster, RefusesAMalformedHelloNamingTheField) {
  PsServer ps(server_options(1));
  ps.start();
  net::Connection c(ps.endpoint(), limits(1));
  const std::string said =
      "the PS at " + ps.endpoint() + " said: hello: malformed job description: ";
  hostile::send_text(c, MessageType::kHello, 0,
                     R"({"model":"fake","workers":1,"unit_bytes":[-4,8]})");
  EXPECT_EQ(hostile::answer(c),
            said + "hello: \"unit_bytes\" holds -4, not a positive multiple of 4 bytes (float32)");
  hostile::send_text(c, MessageType::kHello, 0,
                     R"({"model":"fake","workers":1,"unit_bytes":[4],"total_iterations":"x"})");
  EXPECT_EQ(hostile::answer(c),
            said + "hello: \"total_iterations\" is not an integer in 0..1099511627776");
  hostile::send_text(c, MessageType::kHello, 0,
                     R"({"model":"fake","workers":1,"unit_bytes":[4],"config":)" +
                         std::string(1000, '[') + std::string(1000, ']') + "}");
  EXPECT_EQ(hostile::answer(c), said + "hello: JSON nested deeper than 64");
  EXPECT_EQ(hello(c, "fake", 1, 0), "welcomed") << "the PS goes on";
  ps.stop();
}

// A joined worker's pull for an iteration already passed or far ahead, and a push with NaN,
// are refused to that worker naming why; nothing is applied, and the job goes on.
TEST(PsCluster, RefusesStalePullsAndNonFiniteGradientsAndGoesOn) {
  PsServer ps(server_options(1));
  ps.start();
  net::Connection c(ps.endpoint(), limits(1));
  ASSERT_EQ(hello(c, "fake", 1, 0), "welcomed");
  send_init(c);
  hostile::push(c, 0, 0, 0, 3, 1.0f);  // every unit at version 1
  EXPECT_EQ(hostile::answer(c), "a push-ack");
  const std::string said = "the PS at " + ps.endpoint() + " said: ";
  c.send(Header{MessageType::kPullRequest, 0, 0, 0, 3}, nullptr, 0);
  EXPECT_EQ(hostile::answer(c),
            said + "rank 0: pull of unit 0 for iteration 0, which it has passed (at version 1)");
  c.send(Header{MessageType::kPullRequest, 0, 9, 1, 1}, nullptr, 0);
  EXPECT_EQ(hostile::answer(c),
            said + "rank 0: pull of unit 1 for iteration 9, more than 2 ahead of its version 1");
  hostile::push(c, 0, 1, 2, 2, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(hostile::answer(c),
            said +
                "push from rank 0, iteration 1: unit 2 has NaN or infinite gradients; not "
                "applied (has training diverged? a lower --lr may help)");
  hostile::push(c, 0, 1, 2, 3, std::numeric_limits<float>::infinity());
  EXPECT_NE(hostile::answer(c).find("unit 2 has NaN or infinite"), std::string::npos);
  // Nothing was applied: iteration 1's push of every unit is still welcome, and applied.
  hostile::push(c, 0, 1, 0, 3, 1.0f);
  EXPECT_EQ(hostile::answer(c), "a push-ack");
  c.send(Header{MessageType::kPullRequest, 0, 2, 0, 3}, nullptr, 0);
  const net::Message reply = c.receive(5s, "the pull reply");
  ASSERT_EQ(reply.header.type, MessageType::kPullReply);
  const float* p = reinterpret_cast<const float*>(reply.payload());
  for (std::int64_t i = 0; i < 11; ++i) EXPECT_TRUE(std::isfinite(p[i])) << i;
  c.send(Header{MessageType::kShutdown, 0, 0, 0, 0}, nullptr, 0);
  EXPECT_EQ(ps_error(ps), "");
}

// A flood of junk costs the log a few lines, not one per message.
TEST(PsCluster, AFloodOfJunkWritesAFewLogLines) {
  std::mutex log_mu;
  int lines = 0;
  ServerOptions o = server_options(1);
  o.log = [&](const std::string&) {
    std::lock_guard<std::mutex> lock(log_mu);
    ++lines;
  };
  PsServer ps(o);
  ps.start();
  net::Connection c(ps.endpoint(), limits(1));
  for (int i = 0; i < 3000; ++i) c.send(Header{MessageType::kPush, 0, 0, 0, 9}, nullptr, 0);
  ASSERT_EQ(hello(c, "fake", 1, 0), "welcomed");  // after the flood, in order
  EXPECT_EQ(ps.messages_dropped(), 3000u);
  ps.stop();
  std::lock_guard<std::mutex> lock(log_mu);
  EXPECT_LE(lines, 21);
  EXPECT_GE(lines, 20);
}

// The PS's log lines, for a test to look through (the PS logs from its own threads).
struct LogCapture {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& l) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(l);
    };
  }
  // True once a line holding `text` is logged (waiting up to a second for it).
  bool has(const std::string& text) {
    for (int i = 0; i < 50; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu);
        for (const auto& l : lines)
          if (l.find(text) != std::string::npos) return true;
      }
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
};

// This process's resident memory, in MiB (VmRSS).
double resident_mib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024;
  return 0;
}

// A flood costs the PS bounded memory: 20,000 junk frames of 60 KB (1.2 GB in all) pass
// through it and are dropped one by one, and a frame over --max-message drops its
// connection before ZeroMQ keeps it. The PS goes on serving.
TEST(PsCluster, MemoryStaysBoundedUnderAFlood) {
  ServerOptions o = server_options(1);
  o.max_message_bytes = 4 << 20;
  PsServer ps(o);
  ps.start();
  const double before = resident_mib();
  double peak = before;
  {
    net::Connection c(ps.endpoint(), limits(1));
    c.set_linger(0ms);
    const std::string junk(60000, 'x');
    for (int i = 0; i < 20000; ++i) {
      c.send(std::string(junk));
      if (i % 1000 == 0) peak = std::max(peak, resident_mib());
    }
    c.send(std::string(std::size_t{64} << 20, 'y'));  // over the limit: the connection goes
    for (int i = 0; i < 200 && ps.messages_dropped() < 20000; ++i) {
      peak = std::max(peak, resident_mib());
      std::this_thread::sleep_for(20ms);
    }
  }
  EXPECT_EQ(ps.messages_dropped(), 20000u) << "every junk frame was read and dropped";
  peak = std::max(peak, resident_mib());
  std::printf("resident memory: %.0f MiB before the flood, at most %.0f MiB during it\n", before,
              peak);
  EXPECT_LT(peak - before, 256) << "MiB more while 1.2 GB of junk went through";
  net::Connection next(ps.endpoint(), limits(1));
  EXPECT_EQ(hello(next, "fake", 1, 0), "welcomed") << "the PS goes on";
  ps.stop();
}

// A worker that falls silent leaves the job after the peer timeout, named with its rank and
// why; the others go on without it; started again, it rejoins at the newest version, and
// updates wait for it from there.
TEST(PsCluster, ASilentWorkerLeavesTheJobWhichGoesOnAndItRejoins) {
  ServerOptions o = server_options(2);
  o.peer_timeout = 1s;
  LogCapture log;
  o.log = log.sink();
  auto logged = [&](const std::string& text) { return log.has(text); };
  PsServer ps(o);
  ps.start();
  auto c = joined(ps, 2);
  send_init_and_wait(*c[0]);
  auto pull = [](net::Connection& w, int rank, std::int64_t it) {
    w.send(Header{MessageType::kPullRequest, rank, it, 0, 3}, nullptr, 0);
  };
  for (int r = 0; r < 2; ++r) hostile::push(*c[r], r, 0, 0, 3, 1.0f);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(hostile::answer(*c[r]), "a push-ack");
  // Iteration 1: rank 1 says nothing more. Rank 0's pull of iteration 2 is answered once
  // rank 1 has left, about a second later.
  hostile::push(*c[0], 0, 1, 0, 3, 2.0f);
  EXPECT_EQ(hostile::answer(*c[0]), "a push-ack");
  const auto t0 = std::chrono::steady_clock::now();
  pull(*c[0], 0, 2);
  std::optional<net::Message> reply;
  while (!reply && std::chrono::steady_clock::now() - t0 < 5s) {  // a live worker's heartbeats
    c[0]->send(Header{MessageType::kHeartbeat, 0, 0, 0, 0}, nullptr, 0);
    try {
      reply = c[0]->receive(200ms, "iteration 2's parameters");
    } catch (const Timeout&) {
    }
  }
  ASSERT_TRUE(reply) << "rank 0 is still waiting";
  EXPECT_EQ(reply->header.type, MessageType::kPullReply);
  EXPECT_GT(std::chrono::steady_clock::now() - t0, 700ms);
  EXPECT_TRUE(
      logged("rank 1 left the job at iteration 2: nothing heard from it for 1000 ms; the "
             "job goes on with ranks 0"));
  // Rank 1 starts again, on a new connection: it joins at iteration 2.
  net::Connection back(ps.endpoint(), limits(2));
  const std::string text =
      nlohmann::json{{"model", "fake"}, {"workers", 2}, {"unit_bytes", unit_bytes()}}.dump();
  back.send(Header{MessageType::kHello, 1, 0, 0, 0}, text.data(), text.size());
  const net::Message welcome = back.receive(5s, "the welcome");
  EXPECT_EQ(welcome.header.type, MessageType::kHello);
  EXPECT_EQ(welcome.header.flags, net::kFlagJobRunning);
  EXPECT_EQ(welcome.header.iteration, 2);
  EXPECT_TRUE(logged("rank 1 joined the running job at iteration 2"));
  // Its old connection is not rank 1 any more: it hears why once (to start again), and
  // nothing it sends is applied.
  hostile::push(*c[1], 1, 2, 0, 3, 100.0f);
  EXPECT_NE(hostile::answer(*c[1]).find("rank 1 left the job at iteration 2: nothing heard from it "
                                        "for 1000 ms; start it again to rejoin"),
            std::string::npos);
  hostile::push(*c[1], 1, 2, 0, 3, 100.0f);
  EXPECT_THROW(c[1]->receive(300ms, "nothing"), Timeout);
  // Iteration 2 waits for the rejoined rank 1 again.
  hostile::push(*c[0], 0, 2, 0, 3, 1.0f);
  EXPECT_EQ(hostile::answer(*c[0]), "a push-ack");
  pull(*c[0], 0, 3);
  EXPECT_THROW(c[0]->receive(300ms, "iteration 3, not yet"), Timeout);
  pull(back, 1, 2);
  EXPECT_EQ(hostile::answer(back), "a pull-reply");
  hostile::push(back, 1, 2, 0, 3, 1.0f);
  EXPECT_EQ(hostile::answer(back), "a push-ack");
  EXPECT_EQ(hostile::answer(*c[0]), "a pull-reply") << "iteration 3, now both have pushed";
  c[0]->send(Header{MessageType::kShutdown, 0, 0, 0, 0}, nullptr, 0);
  back.send(Header{MessageType::kShutdown, 1, 0, 0, 0}, nullptr, 0);
  EXPECT_EQ(ps_error(ps), "");
}

// A worker that reports a failure once the job runs, or whose connection closes (its
// process exited or was killed), leaves the job at once, not after the peer timeout; the
// others go on without waiting for it.
TEST(PsCluster, AWorkerThatFailsOrWhoseConnectionClosesLeavesAtOnce) {
  ServerOptions o = server_options(3);
  o.peer_timeout = 3s;
  LogCapture log;
  o.log = log.sink();
  PsServer ps(o);
  ps.start();
  auto c = joined(ps, 3);
  send_init_and_wait(*c[0]);
  for (int r = 0; r < 3; ++r) hostile::push(*c[r], r, 0, 0, 3, 1.0f);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(hostile::answer(*c[r]), "a push-ack");
  hostile::push(*c[0], 0, 1, 0, 3, 1.0f);
  EXPECT_EQ(hostile::answer(*c[0]), "a push-ack");
  c[0]->send(Header{MessageType::kPullRequest, 0, 2, 0, 3}, nullptr, 0);
  EXPECT_THROW(c[0]->receive(200ms, "iteration 2, not yet"), Timeout);
  const std::string why = "out of memory";
  c[2]->send(Header{MessageType::kError, 2, 0, 0, 0}, why.data(), why.size());
  EXPECT_TRUE(
      log.has("rank 2 left the job at iteration 2: it failed: out of memory; the job "
              "goes on with ranks 0, 1"));
  const auto t0 = std::chrono::steady_clock::now();
  c[1].reset();  // rank 1's process is gone: its socket closes
  const net::Message m = c[0]->receive(5s, "iteration 2's parameters");
  EXPECT_EQ(m.header.type, MessageType::kPullReply);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s) << "not at once";
  EXPECT_TRUE(log.has("rank 1 left the job at iteration 2: its connection closed"));
  // The job ends once the dropped ranks have had the peer timeout to come back.
  const auto goodbye = std::chrono::steady_clock::now();
  c[0]->send(Header{MessageType::kShutdown, 0, 0, 0, 0}, nullptr, 0);
  EXPECT_EQ(ps_error(ps), "");
  EXPECT_GT(std::chrono::steady_clock::now() - goodbye, 1s);
}

// A rank's new connection takes its place at once (its process was started again); the
// job ends with those that finished once the others have left it.
TEST(PsCluster, ARankJoiningAgainReplacesItsOldConnection) {
  ServerOptions o = server_options(2);
  LogCapture log;
  o.log = log.sink();
  PsServer ps(o);
  ps.start();
  auto c = joined(ps, 2);
  send_init_and_wait(*c[0]);
  hostile::push(*c[1], 1, 0, 0, 1, 5.0f);  // half of its iteration 0, then it is killed
  EXPECT_EQ(hostile::answer(*c[1]), "a push-ack");
  net::Connection back(ps.endpoint(), limits(2));
  EXPECT_EQ(hello(back, "fake", 2, 1), "welcomed");
  EXPECT_TRUE(log.has("rank 1 left the job at iteration 0: it joined again from a new connection"));
  // At version 0 still: it pushes all of iteration 0 again, and its new push is the one used.
  hostile::push(back, 1, 0, 0, 3, 1.0f);
  hostile::push(*c[0], 0, 0, 0, 3, 1.0f);
  EXPECT_EQ(hostile::answer(back), "a push-ack");
  EXPECT_EQ(hostile::answer(*c[0]), "a push-ack");
  c[0]->send(Header{MessageType::kPullRequest, 0, 1, 0, 3}, nullptr, 0);
  const net::Message m = c[0]->receive(5s, "iteration 1's parameters");
  ASSERT_EQ(m.header.type, MessageType::kPullReply);
  const float* p = reinterpret_cast<const float*>(m.payload());
  // The same gradient 1.0 from both: p = p0 - lr * (1 + weight decay * p0); momentum's first
  // step is the gradient itself. A 5.0 from the replaced connection would show.
  EXPECT_NEAR(p[0], 0.25f - 0.1f * (1.0f + 1e-3f * 0.25f), 1e-6);
  // Rank 1 leaves for good; rank 0 finishes; the job ends.
  back.send(Header{MessageType::kShutdown, 1, 0, 0, 0}, nullptr, 0);
  c[0]->send(Header{MessageType::kShutdown, 0, 0, 0, 0}, nullptr, 0);
  EXPECT_EQ(ps_error(ps), "");
}

// Ctrl-C reaches the workers an iteration apart: rank 1 stops after round 0, rank 0 after
// pushing round 1 too. No worker needs round 1, so it is not made of rank 0's push alone:
// the job ends at round 1's start, where both saved their state, exactly as when both stop
// there. Once a remaining worker needs the round (it pulls past it), the round goes on
// without the one that left. A goodbye naming a far-off round (a confused or hostile
// worker) holds no round back: the PS takes at most the round after its newest push.
TEST(PsCluster, WorkersStoppingARoundApartEndTheJobAtTheRoundAllMade) {
  auto job = [](bool rank0_goes_on, bool rank0_pushes_round1, std::int64_t rank1_says = 1) {
    PsServer ps(server_options(2));
    ps.start();
    auto c = joined(ps, 2);
    send_init_and_wait(*c[0]);
    for (int r = 0; r < 2; ++r) hostile::push(*c[r], r, 0, 0, 3, 1.0f);
    for (int r = 0; r < 2; ++r) EXPECT_EQ(hostile::answer(*c[r]), "a push-ack");
    c[1]->send(Header{MessageType::kShutdown, 1, /*round after its last push=*/rank1_says, 0, 0},
               nullptr, 0);
    if (rank0_pushes_round1) {
      hostile::push(*c[0], 0, 1, 0, 3, 2.0f);
      EXPECT_EQ(hostile::answer(*c[0]), "a push-ack");
    }
    if (rank0_goes_on) {
      c[0]->send(Header{MessageType::kPullRequest, 0, 2, 0, 3}, nullptr, 0);
      EXPECT_EQ(hostile::answer(*c[0]), "a pull-reply") << "round 1 waits for rank 1 still";
    }
    c[0]->send(Header{MessageType::kShutdown, 0, rank0_pushes_round1 ? 2 : 1, 0, 0}, nullptr, 0);
    return ps.wait();
  };
  const std::vector<float> both_at_1 = job(false, false);
  EXPECT_EQ(job(false, true), both_at_1) << "round 1 was made of rank 0's push alone";
  const std::vector<float> went_on = job(true, true);
  EXPECT_NE(went_on, both_at_1) << "rank 0 went on: round 1 is its push";
  EXPECT_EQ(job(true, true, std::int64_t{1} << 40), went_on) << "the far-off round held it back";
}

// CURVE: only keys on the allow-list get in, each only as the rank it was admitted for; an
// unknown key, a plaintext client and a client pinning the wrong server key are refused
// and logged, and get nothing.
TEST(PsCluster, CurveAdmitsOnlyListedKeysEachAsItsRank) {
  const net::CurveKeyPair ps_keys = net::make_keypair(), k0 = net::make_keypair(),
                          k1 = net::make_keypair(), stranger = net::make_keypair();
  ServerOptions o = server_options(2);
  o.curve = net::CurveServer{ps_keys, {}};
  o.curve->allowed.admit(0, k0.public_key);
  o.curve->allowed.admit(1, k1.public_key);
  LogCapture log;
  o.log = log.sink();
  auto logged = [&](const std::string& text) { return log.has(text); };
  PsServer ps(o);
  ps.start();
  const net::CurveClient c0{k0, ps_keys.public_key}, c1{k1, ps_keys.public_key},
      unknown{stranger, ps_keys.public_key}, wrong_server{k0, stranger.public_key};
  net::Connection w0(ps.endpoint(), limits(2), &c0);
  ASSERT_EQ(hello(w0, "fake", 2, 0), "welcomed");
  for (const net::CurveClient* keys :
       {&unknown, &wrong_server, static_cast<const net::CurveClient*>(nullptr)}) {
    net::Connection c(ps.endpoint(), limits(2), keys);
    c.set_linger(0ms);
    const std::string text =
        nlohmann::json{{"model", "fake"}, {"workers", 2}, {"unit_bytes", unit_bytes()}}.dump();
    c.send(Header{MessageType::kHello, 1, 0, 0, 0}, text.data(), text.size());
    EXPECT_THROW(c.receive(500ms, "nothing"), Timeout);
  }
  EXPECT_TRUE(logged("its key " + stranger.public_key + " is not on the allow-list"));
  EXPECT_TRUE(logged("a plaintext client (this PS requires CURVE keys)"));
  EXPECT_TRUE(logged("a client whose keys do not fit (the wrong server key?)"));
  // Rank 1's key speaking as rank 0: dropped, and nothing it sends is applied.
  net::Connection w1(ps.endpoint(), limits(2), &c1);
  ASSERT_EQ(hello(w1, "fake", 2, 1), "welcomed");
  send_init(w0);
  hostile::push(w1, 0, 0, 0, 3, 100.0f);  // as rank 0
  EXPECT_TRUE(logged("dropped a push claiming rank 0 from a worker admitted as rank 1"));
  hostile::push(w0, 0, 0, 0, 3, 1.0f);
  EXPECT_EQ(hostile::answer(w0), "a push-ack") << "rank 0's own push is not a duplicate";
  w0.send(Header{MessageType::kShutdown, 0, 0, 0, 0}, nullptr, 0);
  w1.send(Header{MessageType::kShutdown, 1, 0, 0, 0}, nullptr, 0);
  ps.stop();
}

// Listening beyond loopback without keys is refused, with the commands that make them.
TEST(PsCluster, ANonLoopbackAddressNeedsKeysOrInsecure) {
  ServerOptions o = server_options(1);
  o.listen = "tcp://0.0.0.0:0";
  try {
    o.validate();
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("is not loopback: anyone who can reach it could join"),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("dynacomm keygen --out ps"), std::string::npos);
  }
  o.insecure = true;
  EXPECT_NO_THROW(o.validate());
  o.insecure = false;
  o.curve = net::CurveServer{net::make_keypair(), {}};
  EXPECT_NO_THROW(o.validate());
}

// Found by fuzz_ps_session (fuzz/corpus/ps_session/partial-init): an init of part of the
// model was read as the whole of it, past the message's end. Now it is refused.
TEST(PsCluster, RefusesAnInitOfPartOfTheModel) {
  PsServer ps(server_options(1));
  ps.start();
  net::Connection c(ps.endpoint(), limits(1));
  ASSERT_EQ(hello(c, "fake", 1, 0), "welcomed");
  const std::vector<float> unit0(3, 1.0f);
  c.send(Header{MessageType::kInit, 0, 0, 0, 0}, unit0.data(), unit0.size() * 4);
  EXPECT_EQ(hostile::answer(c),
            "the PS at " + ps.endpoint() + " said: init: units 0..0, not the whole model (0..3)");
  send_init(c);
  hostile::push(c, 0, 0, 0, 3, 1.0f);
  EXPECT_EQ(hostile::answer(c), "a push-ack") << "the whole model's init was taken";
  c.send(Header{MessageType::kShutdown, 0, 0, 0, 0}, nullptr, 0);
  EXPECT_EQ(ps_error(ps), "");
}

}  // namespace
}  // namespace dynacomm::ps
