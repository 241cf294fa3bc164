#include "ps/store.h"

#include <gtest/gtest.h>

#include <thread>

#include "base/error.h"

namespace dynacomm::ps {
namespace {

StoreOptions options(int workers) {
  StoreOptions o;
  o.workers = workers;
  o.sgd.lr = 0.5;
  o.sgd.momentum = 0;
  o.sgd.weight_decay = 0;
  o.wait_timeout = std::chrono::milliseconds(2000);
  return o;
}

TEST(ParameterStore, AveragesInRankOrderAndAppliesSgd) {
  ParameterStore store(options(2), {{1.f, 2.f}, {3.f}});
  std::vector<float> out(3);
  store.pull(0, 1, 0, out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3}));
  std::vector<float> g0{1, 1, 1}, g1{3, 5, 7};
  EXPECT_TRUE(store.push(1, 0, 1, 0, g1.data()).empty());  // arrival order: 1 then 0
  EXPECT_EQ(store.version(0), 0);
  EXPECT_EQ(store.push(0, 0, 1, 0, g0.data()), (std::vector<int>{0, 1}));
  // mean gradient {2, 3, 4}; p -= 0.5 * g
  store.pull(0, 1, 1, out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 0.5, 1}));
}

TEST(ParameterStore, ALeavingRankNoLongerHoldsUpdatesAndCountsWhereItPushed) {
  ParameterStore store(options(3), {{0.f}, {0.f}});
  const float a[2] = {2, 2}, b[2] = {4, 4}, c = 6;
  store.push(2, 0, 0, 0, &c);  // rank 2 pushes unit 0, then is lost
  EXPECT_EQ(store.push(0, 0, 1, 0, a), std::vector<int>{});
  EXPECT_EQ(store.push(1, 0, 1, 0, b), std::vector<int>{0});  // unit 0: all three
  EXPECT_EQ(store.leave(2), std::vector<int>{1});             // unit 1: the two that remain
  std::vector<float> out(2);
  store.pull(0, 1, 1, out.data());
  EXPECT_EQ(out, (std::vector<float>{-0.5f * 4, -0.5f * 3}));  // means (2+4+6)/3, (2+4)/2
  EXPECT_FALSE(store.present(2));
  EXPECT_THROW(store.push(2, 0, 0, 1, &c), InvalidInput);
  EXPECT_EQ(store.push(0, 0, 1, 1, a), std::vector<int>{});
  EXPECT_EQ(store.push(1, 0, 1, 1, b), (std::vector<int>{0, 1}));  // two are the job now
  EXPECT_EQ(store.newest_version(), 2);
}

TEST(ParameterStore, ARankRejoinsAtTheNewestVersionAndReplacesItsEarlierPushes) {
  ParameterStore store(options(2), {{0.f}, {0.f}});
  const float one[2] = {1, 1}, three[2] = {3, 3}, bad = 100;
  store.push(0, 0, 1, 0, one);
  store.push(1, 0, 1, 0, three);  // version 1 everywhere
  store.push(1, 0, 0, 1, &bad);   // rank 1's old self pushed unit 0 of iteration 1, then died
  store.leave(1);                 // rank 0 alone now: unit 0 is due once rank 0 pushes
  store.join(1, store.newest_version());  // back at version 1, before rank 0 pushed
  EXPECT_TRUE(store.present(1));
  EXPECT_EQ(store.push(0, 0, 1, 1, one), std::vector<int>{});          // waits for rank 1 again
  EXPECT_EQ(store.push(1, 0, 1, 1, three), (std::vector<int>{0, 1}));  // replaces the 100
  std::vector<float> out(2);
  store.pull(0, 1, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{-2.f, -2.f}));  // -0.5 * 2, twice
  EXPECT_THROW(store.join(1, -1), InvalidInput);
  EXPECT_THROW(store.leave(2), InvalidInput);
}

TEST(ParameterStore, ARankThatJoinsLateIsNotNeededForVersionsBeforeIt) {
  ParameterStore store(options(2), {{0.f}, {0.f}});
  const float g[2] = {2, 2};
  store.leave(1);
  store.push(0, 0, 0, 0, g);  // unit 0 to version 1 alone; unit 1 still at 0
  store.join(1, store.newest_version());
  EXPECT_THROW(store.push(1, 1, 1, 0, g), InvalidInput);      // before it joined
  EXPECT_EQ(store.push(0, 1, 1, 0, g), std::vector<int>{1});  // not waiting for rank 1
  EXPECT_EQ(store.push(0, 0, 1, 1, g), std::vector<int>{});   // version 1: waits for it
}

TEST(ParameterStore, PullWaitsOnlyForItsOwnUnits) {
  ParameterStore store(options(1), {{1.f}, {1.f}});
  float g = 1, out = 0;
  store.push(0, 1, 1, 0, &g);  // only unit 1 advances
  EXPECT_TRUE(store.try_pull(1, 1, 1, &out));
  EXPECT_FALSE(store.try_pull(0, 1, 1, &out));
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    store.push(0, 0, 0, 0, &g);
  });
  std::vector<float> both(2);
  store.pull(0, 1, 1, both.data());  // blocks until unit 0 catches up
  later.join();
  EXPECT_EQ(both, (std::vector<float>{0.5f, 0.5f}));
}

TEST(ParameterStore, ErrorsNameUnitRankAndIteration) {
  StoreOptions o = options(2);
  o.wait_timeout = std::chrono::milliseconds(50);
  ParameterStore store(o, {{1.f}, {1.f}});
  float g = 1, out;
  store.push(0, 0, 0, 0, &g);
  try {
    store.pull(0, 0, 1, &out);
    FAIL();
  } catch (const Timeout& e) {
    EXPECT_NE(std::string(e.what()).find("pull of unit 0 for iteration 1 timed out"),
              std::string::npos);
  }
  EXPECT_THROW(store.push(0, 0, 0, 0, &g), InvalidInput);  // duplicate
  EXPECT_THROW(store.push(2, 0, 0, 0, &g), InvalidInput);  // no such rank
  EXPECT_THROW(store.push(1, 1, 1, 3, &g), InvalidInput);  // wrong iteration
  EXPECT_THROW(store.pull(0, 2, 0, &out), InvalidInput);   // no unit 2
  EXPECT_THROW(ParameterStore(options(0), {{1.f}}), InvalidInput);
}

// A peer's pull for an iteration already passed, or far in the future, is refused at
// once with why (the server answers it with an error instead of holding it forever).
TEST(ParameterStore, SaysWhichPullsCanNeverBeAnswered) {
  ParameterStore store(options(1), {{1.f}, {1.f}});
  float g = 1;
  store.push(0, 0, 1, 0, std::vector<float>{g, g}.data());  // both units at version 1
  EXPECT_EQ(store.unanswerable(0, 1, 1), "");
  EXPECT_EQ(store.unanswerable(0, 1, 3), "") << "two ahead: an early request, kept";
  EXPECT_NE(store.unanswerable(0, 1, 0).find("which it has passed (at version 1)"),
            std::string::npos);
  EXPECT_NE(store.unanswerable(1, 1, 4).find("more than 2 ahead of its version 1"),
            std::string::npos);
  EXPECT_NE(store.unanswerable(0, 2, 1).find("not within 0..1"), std::string::npos);
  EXPECT_NE(store.unanswerable(0, 0, -1).find("negative"), std::string::npos);
}

// Many iterations from concurrent worker threads with different segmentations give the
// same parameters as a sequential reference: arrival order never matters.
TEST(ParameterStore, ConcurrentWorkersMatchSequentialReference) {
  const int workers = 3, units = 5, iterations = 20;
  std::vector<std::vector<float>> init;
  for (int u = 0; u < units; ++u) init.push_back(std::vector<float>(u + 1, 0.1f * u));
  auto grad_of = [](int rank, int unit, int it, std::size_t k) {
    return 0.01f * (rank + 1) + 0.001f * unit - 0.0001f * it + 0.00001f * k;
  };
  StoreOptions o = options(workers);
  o.sgd.momentum = 0.9;
  ParameterStore store(o, init);
  std::vector<std::thread> threads;
  for (int r = 0; r < workers; ++r) {
    threads.emplace_back([&, r] {
      for (int it = 0; it < iterations; ++it) {
        std::vector<float> params(15);
        store.pull(0, units - 1, it, params.data());
        // Rank r pushes unit by unit from the top, or all at once, by rank.
        for (int u = units - 1; u >= 0; --u) {
          if (r == 0 && u > 0) continue;
          int first = r == 0 ? 0 : u, last = r == 0 ? units - 1 : u;
          std::vector<float> g;
          for (int v = first; v <= last; ++v)
            for (int k = 0; k <= v; ++k) g.push_back(grad_of(r, v, it, k));
          store.push(r, first, last, it, g.data());
        }
      }
    });
  }
  for (auto& t : threads) t.join();

  optim::Sgd sgd(o.sgd, {1, 2, 3, 4, 5});
  for (int it = 0; it < iterations; ++it)
    for (int u = 0; u < units; ++u) {
      std::vector<float> sum(u + 1, 0.f);
      for (int r = 0; r < workers; ++r)
        for (int k = 0; k <= u; ++k) sum[k] += grad_of(r, u, it, k);
      for (auto& s : sum) s /= static_cast<float>(workers);
      sgd.step(u, init[u].data(), sum.data(), it);
    }
  std::vector<float> expected;
  for (auto& v : init) expected.insert(expected.end(), v.begin(), v.end());
  EXPECT_EQ(store.snapshot(), expected);  // bit for bit
  EXPECT_EQ(store.version(0), iterations);
}

}  // namespace
}  // namespace dynacomm::ps

namespace dynacomm::ps {
namespace {

// The seam: a policy other than BSP decides when an update is due, and the store averages
// the pushes it has (here the first of two workers' alone), never a stale buffer.
struct FirstPushWins : BspPolicy {
  bool update_due(int received, int) const override { return received >= 1; }
};

TEST(ParameterStore, ThePolicyDecidesWhenAnUpdateIsDue) {
  StoreOptions o = options(2);
  o.policy = std::make_shared<FirstPushWins>();
  ParameterStore store(o, {{1.f}});
  float g1 = 2, g0 = 4, out = 0;
  EXPECT_EQ(store.push(1, 0, 0, 0, &g1), (std::vector<int>{0}));
  store.pull(0, 0, 1, &out);
  EXPECT_EQ(out, 0.f);  // 1 - 0.5 * 2
  EXPECT_THROW(store.push(0, 0, 0, 0, &g0), InvalidInput) << "version 0 is closed";
  EXPECT_EQ(store.push(0, 0, 0, 1, &g0), (std::vector<int>{0}));
  store.pull(0, 0, 2, &out);
  EXPECT_EQ(out, -2.f);  // 0 - 0.5 * 4: rank 1's old gradient is not in it
}

}  // namespace
}  // namespace dynacomm::ps
