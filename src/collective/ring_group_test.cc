// The ring over c10d Gloo on loopback, its ranks as threads (gloo's BaseTest::spawn): sums
// right, the same bits for every bucket plan, and a missing peer is a Timeout naming it.
#include "collective/ring_group.h"

#include <c10/util/Half.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "base/error.h"
#include "net/free_port.h"
#include "plan/model/gossip.h"

namespace dynacomm::collective {
namespace {

using std::chrono::milliseconds;

// Runs fn(rank) on `size` threads, each in a group of its own; rethrows the first failure.
void spawn(int size, const std::function<void(RingGroup&)>& fn,
           milliseconds timeout = milliseconds(20000), bool half_wire = false,
           bool stepwise = false) {
  const int port = net::free_tcp_port();
  std::vector<std::exception_ptr> errors(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      try {
        // Joining waits for threads started on a busy machine: the step timeout is the test's.
        RingGroupOptions o{"127.0.0.1", port, "127.0.0.1",         r,         size,
                           timeout,     {},   milliseconds(60000), half_wire, stepwise};
        auto group = RingGroup::connect(o);
        fn(*group);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

std::vector<float> gradient(int rank, std::int64_t n) {
  std::mt19937 rng(1234 + rank);
  // Magnitudes over many orders, so that the order of addition shows in the bits.
  std::uniform_real_distribution<float> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-12, 12);
  std::vector<float> g(n);
  for (auto& x : g) x = std::ldexp(mantissa(rng), exponent(rng));
  return g;
}

// Buckets as (offset, count) over n elements, in backward order (top first).
using Buckets = std::vector<std::pair<std::int64_t, std::int64_t>>;

Buckets cut(std::int64_t n, const std::vector<std::int64_t>& sizes) {
  Buckets b;
  std::int64_t end = n;
  for (std::int64_t s : sizes) {
    if (end == 0) break;
    const std::int64_t c = std::min(s, end);
    b.push_back({end - c, c});
    end -= c;
  }
  if (end > 0) b.push_back({0, end});
  return b;
}

std::vector<std::vector<float>> run(int size, std::int64_t n, const Buckets& buckets,
                                    bool half_wire = false, bool stepwise = false) {
  std::vector<std::vector<float>> out(size);
  spawn(
      size,
      [&](RingGroup& g) {
        std::vector<float> x = gradient(g.rank(), n);
        for (auto [offset, count] : buckets)
          g.allreduce_sum(x.data() + offset, count, offset, "test bucket");
        out[g.rank()] = std::move(x);
        // Whole blocks for every owner: each rank sends 2(P-1)/P of the elements.
        if (n % (size * RingGroup::kBlock) == 0 && n / size % 2 == 0) {
          EXPECT_EQ(g.bytes_sent(), 2 * (size - 1) * n / size * (half_wire ? 2 : 4));
        }
      },
      milliseconds(20000), half_wire, stepwise);
  return out;
}

float through_half(float x) { return static_cast<float>(c10::Half(x)); }

float unchanged(float x) { return x; }

// Element i of owner g summed in the ring's order, ((x_{g-1} + x_{g-2}) + ...) + x_g in
// float, every partial sum through `wire` before it travels and the result too (the owner
// rounds its finished chunk as the others receive it).
std::vector<float> ring_order_sums(const std::vector<std::vector<float>>& x, std::int64_t n,
                                   float (*wire)(float)) {
  const int size = static_cast<int>(x.size());
  std::vector<float> sums(n);
  for (std::int64_t i = 0; i < n; ++i) {
    const int g = static_cast<int>((i / RingGroup::kBlock) % size);
    float s = x[(g + size - 1) % size][i];
    for (int k = 2; k <= size; ++k) s = wire(s) + x[(g + size - k) % size][i];
    sums[i] = size == 1 ? s : wire(s);
  }
  return sums;
}

// Every plan's sums, on every rank, are `expected` bit for bit.
void expect_every_plan_gives(int size, std::int64_t n, const std::vector<Buckets>& plans,
                             const std::vector<float>& expected, bool half_wire = false,
                             bool stepwise = false) {
  for (const Buckets& plan : plans) {
    std::vector<std::vector<float>> got = run(size, n, plan, half_wire, stepwise);
    for (int r = 0; r < size; ++r)
      ASSERT_EQ(0, std::memcmp(got[r].data(), expected.data(), n * sizeof(float)))
          << "rank " << r << ", " << plan.size() << " buckets"
          << (stepwise ? ", step by step" : "");
  }
}

// Gloo's ring in one call and dynacomm's own steps alike.
TEST(RingGroup, SumsInTheOrderFixedByEachElementsOwnerForEveryBucketPlan) {
  const std::int64_t n = 3000;
  for (bool stepwise : {false, true})
    for (int size : {1, 2, 3, 4}) {
      SCOPED_TRACE(std::to_string(size) + " ranks" + (stepwise ? ", step by step" : ""));
      std::vector<std::vector<float>> x(size);
      for (int r = 0; r < size; ++r) x[r] = gradient(r, n);
      const std::vector<float> expected = ring_order_sums(x, n, unchanged);
      expect_every_plan_gives(size, n,
                              {cut(n, {n}), cut(n, {1, 7, 300, 1000}), cut(n, {2999}),
                               cut(n, {100, 100, 100, 100, 100, 100, 100, 100, 100, 100})},
                              expected, /*half_wire=*/false, stepwise);
    }
}

// A bucket over 1 MiB per owner, which Gloo's ring may cut into several segments per chunk:
// the bits still follow the owners (with 4 ranks, the direction of the ring shows too).
TEST(RingGroup, BucketsOfManyGlooSegmentsSumInTheOwnersOrder) {
  const int size = 4;
  const std::int64_t n = 4 * 700000 + 123;
  std::vector<std::vector<float>> x(size);
  for (int r = 0; r < size; ++r) x[r] = gradient(r, n);
  const std::vector<float> expected = ring_order_sums(x, n, unchanged);
  expect_every_plan_gives(size, n, {cut(n, {n}), cut(n, {1000, 900000})}, expected);
}

// --compress fp16: every step's partial sums travel as half and are added in float, the
// owner rounds its finished chunk as the others receive it. The bits are exactly those, on
// every rank and for every bucket plan; and the sum stays within half's precision.
TEST(RingGroup, HalfOnTheWireRoundsAtEveryStepAlikeForEveryBucketPlan) {
  const std::int64_t n = 3072;  // a multiple of 3 x 256: every rank sends as much
  for (int size : {2, 3}) {
    SCOPED_TRACE(std::to_string(size) + " ranks");
    std::vector<std::vector<float>> x(size);
    for (int r = 0; r < size; ++r) x[r] = gradient(r, n);
    const std::vector<float> expected = ring_order_sums(x, n, through_half);
    for (std::int64_t i = 0; i < n; ++i) {  // within half's precision of the exact sum
      double exact = 0, magnitude = 0;
      for (int r = 0; r < size; ++r) {
        exact += x[r][i];
        magnitude += std::abs(x[r][i]);
      }
      ASSERT_NEAR(expected[i], exact, size * magnitude / 1024 + 1e-7) << i;
    }
    expect_every_plan_gives(size, n, {cut(n, {n}), cut(n, {1, 7, 300, 1000})}, expected,
                            /*half_wire=*/true);
  }
}

// The root's bits, signed zeros and NaN among them, both ways of running the ring, and with
// half on the wire too (the broadcast stays float32); its bytes are not the training's.
std::vector<float> root_values(int root, std::int64_t n) {
  std::vector<float> x = gradient(root, n);
  x[3] = 0.f;
  x[700] = -0.f;
  x[2000] = std::nanf("");
  return x;
}

TEST(RingGroup, BroadcastsRootsBitsAndPublishesPlans) {
  const std::int64_t n = 3000;
  for (int root : {0, 2})
    for (bool half_wire : {false, true})
      for (bool stepwise : {false, true})
        spawn(
            4,
            [&](RingGroup& g) {
              std::vector<float> x =
                  g.rank() == root ? root_values(root, n) : gradient(g.rank() + 10, n);
              g.broadcast(x.data(), n, root, "initial weights");
              const std::vector<float> want = root_values(root, n);
              EXPECT_EQ(0, std::memcmp(x.data(), want.data(), n * sizeof(float)))
                  << "rank " << g.rank() << ", root " << root;
              EXPECT_EQ(g.bytes_sent(), 0);
              if (g.rank() == 0) g.publish("plan/1", "3,1");
              EXPECT_EQ(g.read("plan/1"), "3,1");
            },
            milliseconds(20000), half_wire, stepwise);
}

TEST(RingGroup, APeerThatNeverJoinsIsATimeoutNamingTheGroup) {
  const int port = net::free_tcp_port();
  try {
    RingGroup::connect({"127.0.0.1", port, "127.0.0.1", 0, 2, milliseconds(1500), {}});
    FAIL() << "joined a group of 2 alone";
  } catch (const Timeout& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 of 2"), std::string::npos) << e.what();
  } catch (const Error& e) {
    FAIL() << "not a Timeout: " << e.what();
  }
}

// Rank 1 stays in the group but never sends (silent: a Timeout) or leaves it (an Error).
TEST(RingGroup, APeerThatStopsMidJobIsAnErrorNamingItsRank) {
  for (bool leaves : {false, true}) {
    std::string message;
    bool timeout = false;
    spawn(
        2,
        [&](RingGroup& g) {
          if (g.rank() == 1) {
            if (!leaves) std::this_thread::sleep_for(milliseconds(5000));
            return;
          }
          std::vector<float> x(1000, 1.f);
          try {
            g.allreduce_sum(x.data(), 1000, 0, "iteration 3 bucket 0");
          } catch (const Timeout& e) {
            message = e.what();
            timeout = true;
          } catch (const Error& e) {
            message = e.what();
          }
        },
        milliseconds(1500));
    EXPECT_EQ(timeout, !leaves) << message;
    EXPECT_NE(message.find("iteration 3 bucket 0"), std::string::npos) << message;
    EXPECT_NE(message.find("rank 1"), std::string::npos) << message;
  }
}

// Gossip's exchange (plan/model/gossip.h) over Gloo's send/recv: each rank receives its
// neighbours' models exactly, and one D-PSGD mixing step keeps the ranks' average (up to
// float rounding) while it pulls the models together.
TEST(RingGroup, GossipMixingKeepsTheAverageOfTheModels) {
  for (plan::Topology t : {plan::Topology::kRing, plan::Topology::kTorus}) {
    const int p = t == plan::Topology::kRing ? 5 : 6;
    const std::int64_t n = 3000;
    std::vector<std::vector<float>> mixed(p);
    spawn(p, [&](RingGroup& g) {
      const std::vector<int> peers = plan::gossip_neighbours(t, g.rank(), p);
      const std::vector<float> mine = gradient(g.rank(), n);
      std::vector<std::vector<float>> from(peers.size(), std::vector<float>(n));
      std::vector<float*> into;
      for (auto& f : from) into.push_back(f.data());
      g.exchange(mine.data(), n, peers, into, "iteration 0");
      for (std::size_t k = 0; k < peers.size(); ++k)
        EXPECT_EQ(from[k], gradient(peers[k], n)) << "rank " << g.rank() << " from " << peers[k];
      std::vector<double> out(n, 0.0);
      for (const auto& [j, w] : plan::mixing_weights(t, g.rank(), p)) {
        const std::vector<float>& x =
            j == g.rank() ? mine : from[std::find(peers.begin(), peers.end(), j) - peers.begin()];
        for (std::int64_t i = 0; i < n; ++i) out[i] += w * x[i];
      }
      mixed[g.rank()].assign(out.begin(), out.end());
    });
    std::vector<std::vector<float>> x0(p);
    for (int r = 0; r < p; ++r) x0[r] = gradient(r, n);
    double spread_before = 0, spread_after = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double before = 0, after = 0, largest = 0;
      for (int r = 0; r < p; ++r) {
        before += x0[r][i];
        after += mixed[r][i];
        largest = std::max(largest, double(std::abs(x0[r][i])));
      }
      // The mixed models are stored as float: each carries up to half an ulp of `largest`.
      EXPECT_NEAR(after / p, before / p, 1e-6 * (1 + largest));
      for (int r = 0; r < p; ++r) {
        spread_before += std::pow(x0[r][i] - before / p, 2);
        spread_after += std::pow(mixed[r][i] - after / p, 2);
      }
    }
    EXPECT_LT(spread_after, 0.8 * spread_before) << plan::topology_name(t);
  }
}

TEST(RingGroup, AGossipPeerThatNeverSendsIsATimeoutNamingIt) {
  std::string message;
  spawn(
      3,
      [&](RingGroup& g) {
        if (g.rank() == 2) return;
        if (g.rank() == 1) {
          std::this_thread::sleep_for(milliseconds(3000));
          return;
        }
        std::vector<float> x(100, 1.f), a(100), b(100);
        try {
          g.exchange(x.data(), 100, {1, 2}, {a.data(), b.data()}, "iteration 9");
        } catch (const Timeout& e) {
          message = e.what();
        }
      },
      milliseconds(1000));
  EXPECT_NE(message.find("gossip iteration 9"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 1"), std::string::npos) << message;
}

TEST(RingGroup, EmulatedLinkPacesEachStep) {
  // 2 ranks, 4 MB over 80 Mbit/s: each of the 2 steps moves 2 MB: 200 ms each at least.
  const int port = net::free_tcp_port();
  std::vector<double> ms(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      RingGroupOptions o{"127.0.0.1", port, "127.0.0.1", r, 2, milliseconds(20000), {80e6, 80e6, 5}};
      auto g = RingGroup::connect(o);
      std::vector<float> x(1 << 20, 1.f);
      auto t0 = std::chrono::steady_clock::now();
      g->allreduce_sum(x.data(), 1 << 20, 0, "paced");
      ms[r] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      EXPECT_EQ(x[12345], 2.f);
    });
  for (auto& t : threads) t.join();
  for (double m : ms) EXPECT_GE(m, 2 * (2 * 1048576 * 8e3 / 80e6 + 5));
}

}  // namespace
}  // namespace dynacomm::collective
