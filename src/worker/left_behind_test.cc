#include "worker/left_behind.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"

namespace dynacomm::worker {
namespace {

// Rounds from a pattern of skips: round r+1 follows round r, or jumps 3 ahead on a skip.
std::vector<std::int64_t> rounds_of(const std::vector<bool>& skips) {
  std::vector<std::int64_t> rounds{10};
  for (bool s : skips) rounds.push_back(rounds.back() + (s ? 3 : 1));
  return rounds;
}

// Every pattern of 12 rounds' skips, against the definition: left behind only once at least
// 3 of the last 4 rounds skipped (and always when all 4 did), back only once at most 1 did
// (and always when none did), and a change reported exactly when the verdict changes.
TEST(LeftBehind, FollowsTheLastFourRoundsWithHysteresisOverEveryPattern) {
  constexpr int kRounds = 12;
  for (unsigned bits = 0; bits < (1u << kRounds); ++bits) {
    std::vector<bool> skips;
    for (int i = 0; i < kRounds; ++i) skips.push_back((bits >> i) & 1u);
    LeftBehind watch;
    const std::vector<std::int64_t> rounds = rounds_of(skips);
    EXPECT_FALSE(watch.round(rounds[0]));
    bool verdict = false;
    for (int i = 1; i <= kRounds; ++i) {
      const bool changed = watch.round(rounds[static_cast<std::size_t>(i)]);
      int last4 = 0;
      for (int k = std::max(0, i - 4); k < i; ++k) last4 += skips[static_cast<std::size_t>(k)];
      SCOPED_TRACE("pattern " + std::to_string(bits) + ", round " + std::to_string(i));
      if (i < 4) {
        EXPECT_FALSE(watch.left_behind());
      } else {
        EXPECT_EQ(watch.skipped(), last4);
        if (last4 == 4) {
          EXPECT_TRUE(watch.left_behind());
        }
        if (last4 == 0) {
          EXPECT_FALSE(watch.left_behind());
        }
        if (watch.left_behind() && !verdict) {
          EXPECT_GE(last4, 3);
        }
        if (!watch.left_behind() && verdict) {
          EXPECT_LE(last4, 1);
        }
        if (last4 == 2) {
          EXPECT_EQ(watch.left_behind(), verdict);  // the hysteresis holds
        }
      }
      EXPECT_EQ(changed, watch.left_behind() != verdict);
      verdict = watch.left_behind();
    }
  }
}

// A worker that loses the race every other round stays with the others; one dropped from
// its second round on is left behind at its third skip and back after three rounds on time.
TEST(LeftBehind, AWorkerDroppedNowAndThenStaysWithTheOthers) {
  LeftBehind now_and_then;
  for (std::int64_t r : rounds_of({true, false, true, false, true, false, true, false}))
    EXPECT_FALSE(now_and_then.round(r));
  LeftBehind straggler;
  std::vector<bool> changes;
  for (std::int64_t r : rounds_of({false, true, true, true, true, false, false, false}))
    changes.push_back(straggler.round(r));
  EXPECT_EQ(changes,
            (std::vector<bool>{false, false, false, false, true, false, false, false, true}));
  EXPECT_FALSE(straggler.left_behind());
  EXPECT_THROW(LeftBehind(2), InvalidInput);
}

}  // namespace
}  // namespace dynacomm::worker
