#include "worker/codec_times.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace dynacomm::worker {
namespace {

// Two units of 1000 and 250 floats, the first in atoms of 300, 300, 300 and 100.
plan::Slicing slicing() {
  plan::ModelProfile p;
  p.model = "m";
  p.batch = 1;
  p.units = {{"a", 1000, 4000, 1, 1}, {"b", 250, 1000, 1, 1}};
  return plan::Slicing::make(p, 300);
}

// As measured at the warm-up's end: dense, fp16, top-k per unit.
plan::CodecOptions warmup() {
  return {{{"none", 4000, 0, 0}, {"fp16", 2000, 1.0, 0.5}, {"topk:0.01,ef", 100, 4.0, 0.2}},
          {{"none", 1000, 0, 0}, {"fp16", 500, 0.5, 0.25}, {"topk:0.01,ef", 30, 2.0, 0.1}}};
}

// Unit 0 pushed with `method` in two pushes (atoms 0-1, then 2-3), unit 1 in a third,
// each atom's encoding taking its share of `unit0_ms` / `unit1_ms`.
std::vector<PushCosts> iteration(std::int64_t it, int method, double unit0_ms, double unit1_ms,
                                 double decode_ms = -1) {
  return {{it, {{0, method, 300, unit0_ms * 0.3}, {0, method, 300, unit0_ms * 0.3}}, decode_ms},
          {it, {{0, method, 300, unit0_ms * 0.3}, {0, method, 100, unit0_ms * 0.1}}, decode_ms},
          {it, {{1, method, 250, unit1_ms}}, decode_ms}};
}

TEST(CodecTimes, TheMethodInUseTakesTheMedianOfItsRecentPushes) {
  CodecTimes t(slicing(), /*mixed=*/true, warmup(), /*window=*/5);
  plan::CodecOptions o = warmup();
  // Two iterations are not enough for a unit's own median: the ratio scales it.
  t.add(iteration(10, 2, 8.0, 4.0));
  t.add(iteration(11, 2, 8.0, 4.0));
  t.apply(o);
  EXPECT_NEAR(t.encode_ratio(), 2.0, 1e-9);
  EXPECT_NEAR(o[0][2].encode_ms, 8.0, 1e-9);
  // Then the median of the recent ones (an outlier does not move it), a unit split over
  // two pushes summed.
  t.add(iteration(12, 2, 100.0, 3.0));
  t.add(iteration(13, 2, 6.0, 3.0));
  t.add(iteration(14, 2, 6.0, 3.0));
  t.apply(o);
  EXPECT_NEAR(o[0][2].encode_ms, 8.0, 1e-9);
  EXPECT_NEAR(o[1][2].encode_ms, 3.0, 1e-9);
  // Older pushes leave the window: five of 6 ms.
  for (std::int64_t it = 15; it < 18; ++it) t.add(iteration(it, 2, 6.0, 3.0));
  t.apply(o);
  EXPECT_NEAR(o[0][2].encode_ms, 6.0, 1e-9);
  // Dense costs nothing, whatever was measured; bytes are not the times' to change.
  EXPECT_EQ(o[0][0].encode_ms, 0);
  EXPECT_EQ(o[0][2].push_bytes, 100);
}

TEST(CodecTimes, MethodsNotInUseFollowTheRatioOfThoseInUse) {
  CodecTimes t(slicing(), true, warmup());
  for (std::int64_t it = 0; it < 4; ++it) t.add(iteration(it, 2, 12.0, 6.0, 1.2));
  plan::CodecOptions o = warmup();
  t.apply(o);
  EXPECT_NEAR(t.encode_ratio(), 3.0, 1e-9);
  // fp16 was never pushed: its warm-up figure, three times over.
  EXPECT_NEAR(o[0][1].encode_ms, 3.0, 1e-9);
  EXPECT_NEAR(o[1][1].encode_ms, 1.5, 1e-9);
  // The PS decoded each push in 1.2 ms: the first push carries 60% of unit 0 (0.12 ms at
  // the warm-up's figure), the second 40% (0.08), the third unit 1 (0.1). Median ratio 12.
  EXPECT_NEAR(t.decode_ratio(), 12.0, 1e-9);
  EXPECT_NEAR(o[0][1].decode_ms, 6.0, 1e-9);
  EXPECT_NEAR(o[1][2].decode_ms, 1.2, 1e-9);
  EXPECT_EQ(t.decode_samples(), 12u);
}

TEST(CodecTimes, OneMethodJobsCountTheCodecsMethodAsOptionOne) {
  plan::CodecOptions w = warmup();
  for (auto& unit : w) unit.resize(2);  // none and the job's fp16
  CodecTimes t(slicing(), /*mixed=*/false, w);
  for (std::int64_t it = 0; it < 3; ++it) t.add(iteration(it, 0, 5.0, 2.5));
  plan::CodecOptions o = w;
  t.apply(o);
  EXPECT_NEAR(o[0][1].encode_ms, 5.0, 1e-9);
  EXPECT_NEAR(o[1][1].encode_ms, 2.5, 1e-9);
  EXPECT_EQ(o[0][0].encode_ms, 0);
}

TEST(CodecTimes, NothingOddIsTakenAndAnInactiveOneChangesNothing) {
  CodecTimes none;
  plan::CodecOptions o = warmup();
  none.add(iteration(0, 2, 50, 50, 50));
  none.apply(o);
  EXPECT_EQ(o[0][2].encode_ms, 4.0);
  EXPECT_EQ(o[0][2].decode_ms, 0.2);

  CodecTimes t(slicing(), true, warmup());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  t.add({{0, {{7, 2, 250, 1.0}}, 1.0},    // no unit 7
         {0, {{1, 9, 250, 1.0}}, 1.0},    // no method 9
         {0, {{1, 2, 250, -1.0}}, 1.0},   // a negative time
         {0, {{1, 2, 250, nan}}, 1.0},    // not a number
         {0, {{1, 2, 0, 1.0}}, 1.0},      // no parameters
         {0, {}, 1.0}});                  // no atoms
  t.add({{1, {{1, 2, 250, 2.0}}, nan}});  // a decoding not said
  t.add({{2, {{1, 0, 250, 5.0}}, 5.0}});  // dense: no encoding, nothing expected to decode
  EXPECT_EQ(t.encode_samples(), 1u);
  EXPECT_EQ(t.decode_samples(), 0u);
  // A unit whose last atoms never came is not counted.
  t.add({{3, {{0, 2, 300, 99.0}}, -1}});
  EXPECT_EQ(t.encode_samples(), 1u);
  // Options of another shape are left alone.
  plan::CodecOptions other = {{{"none", 1, 0, 0}}};
  t.apply(other);
  EXPECT_EQ(other[0][0].encode_ms, 0);
}

}  // namespace
}  // namespace dynacomm::worker
