// The synchronisation modes (ps/sync_policy.h) through the store: their guarantees as
// properties over random arrival orders with threads, and BSP where the maths says so.
#include "ps/sync_policy.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <mutex>
#include <random>
#include <thread>

#include "base/error.h"
#include "ps/store.h"

namespace dynacomm::ps {
namespace {

using namespace std::chrono_literals;

// lr 1 and plain SGD: an update moves a parameter by minus the mean gradient, so with
// gradients of -1 the parameter counts the unit's updates: it is the version read.
StoreOptions counting(int workers, const std::string& sync) {
  StoreOptions o;
  o.workers = workers;
  o.sgd.lr = 1;
  o.sgd.momentum = 0;
  o.sgd.weight_decay = 0;
  o.wait_timeout = 10s;
  o.policy = parse_sync_policy(sync);
  return o;
}

TEST(SyncPolicy, ParsesEachModeAndRefusesTheRestNamingThem) {
  EXPECT_EQ(parse_sync_policy("bsp")->name(), "bsp");
  EXPECT_EQ(parse_sync_policy("ssp:3")->name(), "ssp:3");
  EXPECT_EQ(parse_sync_policy("ssp:0")->name(), "ssp:0");
  EXPECT_EQ(parse_sync_policy("backup:1")->name(), "backup:1");
  EXPECT_EQ(parse_sync_policy("asp")->name(), "asp");
  EXPECT_EQ(parse_sync_policy("asp")->delay_compensation(), 0);
  EXPECT_EQ(parse_sync_policy("asp:dc=2")->name(), "asp:dc=2");
  EXPECT_EQ(parse_sync_policy("asp:dc=2")->delay_compensation(), 2);
  EXPECT_EQ(parse_sync_policy("asp:dc=0.5")->name(), "asp:dc=0.5");
  EXPECT_EQ(parse_sync_policy("asp:dc=0")->name(), "asp");
  EXPECT_EQ(parse_sync_policy("bsp")->delay_compensation(), 0);
  EXPECT_TRUE(is_asp("asp:dc=0"));
  EXPECT_FALSE(is_asp("aspx"));
  EXPECT_EQ(parse_sync_policy("backup:auto")->name(), "backup:auto");
  EXPECT_TRUE(parse_sync_policy("backup:auto")->drops_late_pushes());
  EXPECT_TRUE(parse_sync_policy("asp")->asynchronous());
  EXPECT_TRUE(parse_sync_policy("backup:2")->drops_late_pushes());
  EXPECT_EQ(parse_sync_policy("ssp:3")->push_ahead(), 3);
  EXPECT_EQ(parse_sync_policy("local:8")->name(), "local:8");
  EXPECT_EQ(parse_sync_policy("local:8,warmup=100")->name(), "local:8,warmup=100");
  EXPECT_TRUE(parse_sync_policy("local:8")->lockstep());  // BSP over rounds
  EXPECT_TRUE(parse_sync_policy("bsp")->lockstep());
  EXPECT_FALSE(parse_sync_policy("ssp:0")->lockstep());
  for (const char* bad : {"",
                          "ssp",
                          "ssp:",
                          "ssp:-1",
                          "ssp:x",
                          "ssp:1.5",
                          "backup",
                          "asp:1",
                          "asp:dc=",
                          "asp:dc=-1",
                          "asp:dc=x",
                          "asp:dc=nan",
                          "asp:dc=1e9",
                          "bsp:2",
                          "local",
                          "ssp:99999999999999999999",
                          "backup:autox",
                          "local:0",
                          "local:8,warmup",
                          "local:8,k=2"}) {
    try {
      parse_sync_policy(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("--sync"), std::string::npos) << e.what();
    }
  }
}

// Each mode's pace from the workers' predictions: BSP's and SSP's the slowest's, backup:B's
// the (N-B)-th fastest's (the worker's own if it is slower, whose pushes are dropped), ASP's
// the worker's own; local SGD's rounds are BSP's.
TEST(SyncPolicy, EachModesPaceFollowsFromTheWorkersPredictions) {
  const std::vector<double> p = {350, 5300, 340, 360};  // rank 1 on a slow link
  EXPECT_EQ(parse_sync_policy("bsp")->pace(p, 4, 340), 5300);
  EXPECT_EQ(parse_sync_policy("ssp:2")->pace(p, 4, 340), 5300);
  EXPECT_EQ(parse_sync_policy("local:8")->pace(p, 4, 340), 5300);
  EXPECT_EQ(parse_sync_policy("backup:1")->pace(p, 4, 340), 360);
  EXPECT_EQ(parse_sync_policy("backup:1")->pace(p, 4, 5300), 5300);
  EXPECT_EQ(parse_sync_policy("backup:2")->pace(p, 4, 340), 350);
  EXPECT_EQ(parse_sync_policy("backup:1")->pace({350, 340}, 4, 340), 350);  // 2 of 3 in
  EXPECT_EQ(parse_sync_policy("asp")->pace(p, 4, 340), 340);
  const AdaptiveBackupPolicy automatic;
  EXPECT_EQ(automatic.pace(p, 4, 340), 5300);  // B = 0 until the PS chooses
  automatic.set_backups(1);
  EXPECT_EQ(automatic.pace(p, 4, 340), 360);
  EXPECT_EQ(parse_sync_policy("bsp")->pace({}, 4, 340), 0);
}

TEST(SyncPolicy, AspMomentumIsTheJobsLessAsynchronysOwn) {
  EXPECT_NEAR(asp_momentum(0.9, 4), 0.15, 1e-12);
  EXPECT_NEAR(asp_momentum(0.9, 1), 0.9, 1e-12);  // one worker: no asynchrony
  EXPECT_EQ(asp_momentum(0.5, 4), 0.0);
  EXPECT_EQ(asp_momentum(0.0, 8), 0.0);
}

// SSP's bound, over random arrival orders: every pull for iteration t reads a version in
// t-S..t, and the fast workers do run ahead (some read is older than t), for S = 1..3.
TEST(SyncPolicy, SspNeverAnswersAPullWithAVersionOlderThanItsBound) {
  constexpr int kWorkers = 4, kIterations = 40, kUnits = 3;
  for (int s = 1; s <= 3; ++s)
    for (unsigned seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE("ssp:" + std::to_string(s) + " seed " + std::to_string(seed));
      ParameterStore store(counting(kWorkers, "ssp:" + std::to_string(s)),
                           std::vector<std::vector<float>>(kUnits, {0.f}));
      std::atomic<int> bad{0}, stale{0};
      std::vector<std::thread> threads;
      for (int r = 0; r < kWorkers; ++r)
        threads.emplace_back([&, r] {
          std::mt19937 rng(seed * 100 + static_cast<unsigned>(r));
          // Rank 0 is slow, the others' pace varies.
          std::uniform_int_distribution<int> us(0, r == 0 ? 3000 : 600);
          const float minus_one = -1;
          for (int t = 0; t < kIterations; ++t) {
            std::vector<float> read(kUnits);
            store.pull(0, kUnits - 1, t, read.data(), r);
            for (float v : read) {
              bad += v < static_cast<float>(t - s) || v > static_cast<float>(t);
              stale += v < static_cast<float>(t);
            }
            std::this_thread::sleep_for(std::chrono::microseconds(us(rng)));
            for (int u = kUnits - 1; u >= 0; --u) store.push(r, u, u, t, &minus_one);
          }
        });
      for (auto& t : threads) t.join();
      EXPECT_EQ(bad.load(), 0);
      EXPECT_GT(stale.load(), 0) << "nobody ran ahead: this was BSP";
      EXPECT_EQ(store.snapshot(), std::vector<float>(kUnits, kIterations));
    }
}

// A gradient that depends on the parameters read, so a read of another version changes
// the result.
void train_dependent(ParameterStore& store, int workers, int iterations, unsigned seed) {
  std::vector<std::thread> threads;
  for (int r = 0; r < workers; ++r)
    threads.emplace_back([&, r] {
      std::mt19937 rng(seed + static_cast<unsigned>(r));
      std::uniform_int_distribution<int> us(0, 500);
      for (int t = 0; t < iterations; ++t) {
        std::vector<float> p(4);
        store.pull(0, 1, t, p.data(), r);
        std::this_thread::sleep_for(std::chrono::microseconds(us(rng)));
        std::vector<float> g(4);
        for (int k = 0; k < 4; ++k) g[k] = 0.3f * p[k] + 0.01f * (r + 1) - 0.002f * k;
        store.push(r, 1, 1, t, g.data() + 1);
        store.push(r, 0, 0, t, g.data());
      }
    });
  for (auto& t : threads) t.join();
}

TEST(SyncPolicy, SspZeroAndBackupZeroAreBspBitForBit) {
  StoreOptions o = counting(3, "bsp");
  o.sgd.lr = 0.1;
  o.sgd.momentum = 0.9;
  o.sgd.weight_decay = 1e-3;
  const std::vector<std::vector<float>> init = {{0.5f}, {1.f, -2.f, 0.25f}};
  ParameterStore reference(o, init);
  train_dependent(reference, 3, 25, 1);
  for (const char* mode : {"ssp:0", "backup:0"}) {
    SCOPED_TRACE(mode);
    o.policy = parse_sync_policy(mode);
    for (unsigned seed : {2u, 3u}) {  // other arrival orders
      ParameterStore store(o, init);
      train_dependent(store, 3, 25, seed);
      EXPECT_EQ(store.snapshot(), reference.snapshot());
    }
  }
}

// ASP: each push is its own update, once; a second push of an iteration (or an older one)
// is refused and changes nothing; the step's rate is lr / staleness.
TEST(SyncPolicy, AspAppliesEveryPushExactlyOnceScaledByItsStaleness) {
  {
    ParameterStore store(counting(3, "asp"), {{0.f}});
    float out = 0;
    for (int r = 0; r < 3; ++r) store.pull(0, 0, 0, &out, r);  // all read version 0
    const float g = -6;
    EXPECT_EQ(store.push(0, 0, 0, 0, &g), std::vector<int>{0});  // staleness 1: +6
    EXPECT_EQ(store.push(1, 0, 0, 0, &g), std::vector<int>{0});  // 2: +3
    EXPECT_EQ(store.push(2, 0, 0, 0, &g), std::vector<int>{0});  // 3: +2
    EXPECT_EQ(store.snapshot(), std::vector<float>{11});
    EXPECT_EQ(store.version(0), 3);
    EXPECT_THROW(store.push(2, 0, 0, 0, &g), InvalidInput);  // the same push again
    EXPECT_EQ(store.snapshot(), std::vector<float>{11});
    store.pull(0, 0, 1, &out, 2);  // fresh again
    EXPECT_EQ(out, 11);
    EXPECT_EQ(store.push(2, 0, 0, 1, &g), std::vector<int>{0});
    EXPECT_EQ(store.snapshot(), std::vector<float>{17});
  }
  // Threads, random orders: every push applied once (the version counts them), with the
  // delay compensation too.
  for (const char* mode : {"asp", "asp:dc=2"}) {
    SCOPED_TRACE(mode);
    constexpr int kWorkers = 4, kPushes = 50;
    ParameterStore store(counting(kWorkers, mode), {{0.f}, {0.f, 0.f}});
    std::vector<std::thread> threads;
    for (int r = 0; r < kWorkers; ++r)
      threads.emplace_back([&, r] {
        std::mt19937 rng(static_cast<unsigned>(r));
        std::uniform_int_distribution<int> us(0, 300);
        const float g[3] = {-1, -1, -1};
        std::vector<float> p(3);
        for (int t = 0; t < kPushes; ++t) {
          store.pull(0, 1, t, p.data(), r);
          std::this_thread::sleep_for(std::chrono::microseconds(us(rng)));
          store.push(r, 0, 1, t, g);
        }
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(store.version(0), kWorkers * kPushes);
    EXPECT_EQ(store.version(1), kWorkers * kPushes);
    for (float w : store.snapshot()) EXPECT_TRUE(std::isfinite(w));
  }
}

// asp:dc=L's delay compensation (ps/delay_compensation.h) in the store: a push is corrected for
// the weights' moves since its rank's read, then stepped at lr / staleness.
TEST(SyncPolicy, AspCorrectsEachPushForTheMovesSinceItsRanksRead) {
  ParameterStore store(counting(2, "asp:dc=2"), {{0.f}});
  float out = 0;
  store.pull(0, 0, 0, &out, 0);
  store.pull(0, 0, 0, &out, 1);
  const float g = -6;
  store.push(0, 0, 0, 0, &g);  // read what it lands on: uncorrected, staleness 1
  EXPECT_EQ(store.snapshot(), std::vector<float>{6});
  store.push(1, 0, 0, 0, &g);  // read 0, lands on 6, staleness 2
  const double ms = 0.95 * (0.05 * 36) + 0.05 * 36;
  const double corrected = -6 + 2 / std::sqrt(ms) * 36 * (6 - 0);
  EXPECT_NEAR(store.snapshot()[0], 6 - corrected / 2, 1e-4);
  EXPECT_LT(store.snapshot()[0], 0);  // without the correction: 9
  // A push with no read since the rank joined again is not corrected.
  store.join(1, store.newest_version());
  const float before = store.snapshot()[0];
  store.push(1, 0, 0, 2, &g);
  EXPECT_FLOAT_EQ(store.snapshot()[0], before + 6);
}

// backup:B: the update comes with the first N-B pushes, the later ones are dropped (not
// refused), and the dropped worker reads the new version.
TEST(SyncPolicy, BackupWaitsForNMinusBAndDropsTheLateOnes) {
  ParameterStore store(counting(4, "backup:1"), {{0.f}});
  const float g0 = -1, g1 = -2, g2 = -6, g3 = -100;
  EXPECT_TRUE(store.push(2, 0, 0, 0, &g2).empty());
  EXPECT_TRUE(store.push(0, 0, 0, 0, &g0).empty());
  EXPECT_EQ(store.push(1, 0, 0, 0, &g1), std::vector<int>{0});  // 3 of 4: due
  EXPECT_EQ(store.snapshot(), std::vector<float>{3});            // mean of 1, 2, 6
  EXPECT_TRUE(store.push(3, 0, 0, 0, &g3).empty());              // late: dropped
  EXPECT_EQ(store.dropped(), 1);
  EXPECT_EQ(store.snapshot(), std::vector<float>{3});
  float out = 0;
  store.pull(0, 0, 0, &out, 3);  // it asks for 0 and reads 1: it goes on from there
  EXPECT_EQ(out, 3);
  EXPECT_THROW(store.push(3, 0, 0, 2, &g3), InvalidInput);  // ahead of the version
}

// Over random arrival orders: no update waits for more than N-B pushes (with N-B in, the
// unit's version moves at once), and none mixes iterations: every push of iteration t is
// t+1, so a mixed mean would not be a whole number.
TEST(SyncPolicy, BackupNeverWaitsForMoreThanNMinusBAndNeverMixesIterations) {
  constexpr int kWorkers = 4, kIterations = 30;
  for (int b = 1; b <= 2; ++b) {
    SCOPED_TRACE("backup:" + std::to_string(b));
    ParameterStore store(counting(kWorkers, "backup:" + std::to_string(b)), {{0.f}});
    std::mutex mu;
    std::vector<int> in(kIterations, 0);  // pushes of each iteration made before its update
    std::atomic<int> overdue{0};
    std::vector<std::thread> threads;
    for (int r = 0; r < kWorkers; ++r)
      threads.emplace_back([&, r] {
        std::mt19937 rng(static_cast<unsigned>(7 * r + b));
        std::uniform_int_distribution<int> us(0, r == 0 ? 2000 : 400);
        for (int t = 0; t < kIterations; ++t) {
          float p = 0;
          store.pull(0, 0, t, &p, r);
          std::this_thread::sleep_for(std::chrono::microseconds(us(rng)));
          const float g = -static_cast<float>(t + 1);
          std::lock_guard<std::mutex> lock(mu);  // counts the pushes each update had before it
          const std::int64_t before = store.version(0);
          const bool advanced = !store.push(r, 0, 0, t, &g).empty();
          if (before == t) ++in[static_cast<std::size_t>(t)];
          if (advanced) overdue += in[static_cast<std::size_t>(t)] != kWorkers - b;
        }
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(overdue.load(), 0);
    EXPECT_EQ(store.version(0), kIterations);
    float p = 0;
    store.pull(0, 0, kIterations, &p);
    EXPECT_EQ(p, kIterations * (kIterations + 1) / 2);  // sum of t+1: no mean was mixed
    EXPECT_EQ(store.dropped(), static_cast<std::int64_t>(b) * kIterations);
  }
}

// Every mode validates pushes and pulls like BSP: a bad rank, an iteration outside what the
// mode allows, a bad unit range: InvalidInput, nothing applied.
TEST(SyncPolicy, EveryModeRefusesBadPushesAndPullsAndAppliesNothing) {
  for (const char* mode : {"bsp", "ssp:2", "backup:1", "asp", "local:4"}) {
    SCOPED_TRACE(mode);
    ParameterStore store(counting(2, mode), {{0.f}, {0.f}});
    const float g[2] = {-1, -1};
    float out[2];
    EXPECT_THROW(store.push(2, 0, 1, 0, g), InvalidInput);
    EXPECT_THROW(store.push(-1, 0, 1, 0, g), InvalidInput);
    EXPECT_THROW(store.push(0, 1, 2, 0, g), InvalidInput);
    EXPECT_THROW(store.pull(0, 2, 0, out), InvalidInput);
    EXPECT_THROW(store.pull(0, 1, 0, out, 5), InvalidInput);
    EXPECT_THROW(store.push(0, 0, 1, -1, g), InvalidInput);
    if (std::string(mode) != "asp") {
      EXPECT_THROW(store.push(0, 0, 1, 3, g), InvalidInput) << "beyond what the mode allows";
    }
    EXPECT_EQ(store.snapshot(), (std::vector<float>{0, 0}));
    EXPECT_EQ(store.version(0), 0);
    EXPECT_NE(store.unanswerable(0, 1, -1), "");
    EXPECT_NE(store.unanswerable(0, 5, 0), "");
  }
}

}  // namespace
}  // namespace dynacomm::ps
