#include "ps/backup_chooser.h"

#include <gtest/gtest.h>

#include <random>

namespace dynacomm::ps {
namespace {

constexpr double kNever = BackupChooser::kNever;

TEST(BackupChooser, BestIsTheLeastMedianTimePerGradient) {
  // A straggler 10x behind: waiting for 3 of 4 costs 110 / 3 per gradient, for all 4
  // 1000 / 4.
  EXPECT_EQ(BackupChooser::best({{100, 110, 105, 1000}, {90, 120, 100, 1100}}, nullptr), 1);
  // Equal workers: every gradient is worth its wait.
  EXPECT_EQ(BackupChooser::best({{100, 100, 100, 100}}, nullptr), 0);
  // One never pushes: B = 0 would wait forever.
  std::vector<double> cost;
  EXPECT_EQ(BackupChooser::best({{100, 100, kNever}}, &cost), 1);
  EXPECT_EQ(cost[0], kNever);
  EXPECT_DOUBLE_EQ(cost[1], 50);
  EXPECT_DOUBLE_EQ(cost[2], 100);
}

// Against a reference written from the definition, over random delays.
TEST(BackupChooser, BestMatchesTheDefinitionOnRandomDelays) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> ms(10, 1000);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 1 + trial % 6, iterations = 1 + trial % 7;
    std::vector<std::vector<double>> delays(static_cast<std::size_t>(iterations));
    for (auto& d : delays)
      for (int r = 0; r < n; ++r) d.push_back(rng() % 9 == 0 ? kNever : ms(rng));
    int expected = 0;
    double least = kNever;
    for (int b = 0; b < n; ++b) {
      std::vector<double> waits;
      for (const auto& d : delays) {  // the (n-b)-th smallest: count how many are below
        for (double x : d) {
          int below = 0, equal = 0;
          for (double y : d) below += y < x, equal += y == x;
          if (below < n - b && below + equal >= n - b) {
            waits.push_back(x);
            break;
          }
        }
      }
      std::sort(waits.begin(), waits.end());
      const double c = waits[waits.size() / 2] / (n - b);
      if (c < least) least = c, expected = b;
    }
    EXPECT_EQ(BackupChooser::best(delays, nullptr), expected) << "trial " << trial;
  }
}

// Window by window: a straggler appears (B 0 -> 1), then goes (back to 0); a small gain is
// no change. Versions are ready every 100 ms; pushes come 50 ms after, a straggler's 2 s.
TEST(BackupChooser, ChangesBOnlyAfterAWindowAndOnlyForAClearGain) {
  BackupChooser c(4, /*units=*/2, /*from=*/0, /*window=*/10, 0.05, /*first_window=*/10);
  auto iteration = [&](std::int64_t t, double straggler_ms) {
    c.version_ready(t, 100.0 * t);
    for (int r = 0; r < 4; ++r) {
      const double at = 100.0 * t + (r == 3 ? straggler_ms : 50 + r);
      c.pushed(r, t, 0, 0, at);
      c.pushed(r, t, 1, 1, at);
    }
  };
  for (std::int64_t t = 0; t < 11; ++t) {
    iteration(t, 2000);
    EXPECT_FALSE(c.decide()) << "before the window is complete, at " << t;
  }
  iteration(11, 2000);  // two versions past the window's last
  const auto change = c.decide();
  ASSERT_TRUE(change);
  EXPECT_EQ(change->backups, 1);
  EXPECT_EQ(c.backups(), 1);
  EXPECT_NE(change->why.find("B 0 -> 1"), std::string::npos) << change->why;
  EXPECT_FALSE(c.decide()) << "one decision per window";
  for (std::int64_t t = 12; t < 22; ++t) iteration(t, 52);  // the straggler is back
  ASSERT_TRUE(c.decide());
  EXPECT_EQ(c.backups(), 0);
  // 4 equal workers but one 20% slower: 60/4 against 50/3 per gradient: B stays 0.
  for (std::int64_t t = 22; t < 32; ++t) iteration(t, 60);
  EXPECT_FALSE(c.decide());
  EXPECT_EQ(c.backups(), 0);
}

// The first window is short (the default's 3 iterations): a straggler there is dropped
// after iteration 4 (two versions past it), not after 11; later windows are 10 long. A
// resumed job's chooser starts its short window where the job resumes.
TEST(BackupChooser, TheFirstWindowIsShort) {
  for (const std::int64_t from : {std::int64_t{0}, std::int64_t{40}}) {
    BackupChooser c(4, /*units=*/1, from);
    auto iteration = [&](std::int64_t t, double straggler_ms) {
      c.version_ready(t, 100.0 * t);
      for (int r = 0; r < 4; ++r) c.pushed(r, t, 0, 0, 100.0 * t + (r == 3 ? straggler_ms : 50));
    };
    for (std::int64_t t = from; t < from + 4; ++t) {
      iteration(t, 2000);
      EXPECT_FALSE(c.decide()) << "from " << from << ", at " << t;
    }
    iteration(from + 4, 2000);
    const auto change = c.decide();
    ASSERT_TRUE(change) << "from " << from;
    EXPECT_EQ(change->backups, 1);
    EXPECT_NE(
        change->why.find("iterations " + std::to_string(from) + ".." + std::to_string(from + 2)),
        std::string::npos)
        << change->why;
    // The next window is iterations from+3 .. from+12, decided at from+14.
    for (std::int64_t t = from + 5; t < from + 14; ++t) {
      iteration(t, 52);
      EXPECT_FALSE(c.decide()) << "from " << from << ", at " << t;
    }
    iteration(from + 14, 52);
    ASSERT_TRUE(c.decide()) << "from " << from;
    EXPECT_EQ(c.backups(), 0);
  }
}

}  // namespace
}  // namespace dynacomm::ps
