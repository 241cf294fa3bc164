#include "plan/estimate/compute_stretch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace dynacomm::plan {
namespace {

// Spans drawn from the model itself, with noise: the fit finds its parameters back.
std::vector<UnitSpan> draw(double a, double a_down, double a_up, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> cpu(0.5, 40), share(0.2, 1), jitter(-noise, noise);
  std::vector<UnitSpan> spans;
  for (int i = 0; i < 400; ++i) {
    const double c = cpu(rng);
    // A third idle, a third under the downlink, a third under the uplink, partly.
    const double d = i % 3 == 1 ? share(rng) : 0, u = i % 3 == 2 ? share(rng) : 0;
    const double wall = c * (a * (1 - d - u) + a_down * d + a_up * u) * (1 + jitter(rng));
    spans.push_back({wall, c, d * wall, u * wall});
  }
  return spans;
}

TEST(ComputeStretch, FindsTheModelsParametersBack) {
  const ComputeStretch s = fit_compute_stretch(draw(1.04, 1.10, 1.30, 0.0, 1));
  EXPECT_NEAR(s.idle_wall_per_cpu, 1.04, 1e-9);
  EXPECT_NEAR(s.down, 1.10 / 1.04, 1e-9);
  EXPECT_NEAR(s.up, 1.30 / 1.04, 1e-9);
  EXPECT_TRUE(s.fitted_down);
  EXPECT_TRUE(s.fitted_up);
  EXPECT_EQ(s.spans, 400u);
  // With 5% noise on every span, within a few percent.
  const ComputeStretch n = fit_compute_stretch(draw(1.04, 1.10, 1.30, 0.05, 2));
  EXPECT_NEAR(n.idle_wall_per_cpu, 1.04, 0.02);
  EXPECT_NEAR(n.down, 1.10 / 1.04, 0.03);
  EXPECT_NEAR(n.up, 1.30 / 1.04, 0.03);
}

// Each span's busy time per direction: every transfer's overlap with its window, by hand.
TEST(ComputeStretch, BusyTimesAreEachTransfersOverlapWithTheWindow) {
  std::vector<UnitSpan> spans = {{10, 9, 0, 0}, {20, 18, 1, 0}};
  const std::vector<std::pair<double, double>> windows = {{0, 10}, {10, 30}};
  add_busy_times(spans, windows,
                 {{5, 15, false},     // across both: 5 + 5 down
                  {0, 40, true},      // over both: 10 + 20 up
                  {30, 35, false},    // starts where the second ends: nothing
                  {-5, -1, true},     // before both: nothing
                  {12, 14, false}});  // inside the second, beside the first one: + 2 down
  EXPECT_DOUBLE_EQ(spans[0].busy_down_ms, 5);
  EXPECT_DOUBLE_EQ(spans[0].busy_up_ms, 10);
  EXPECT_DOUBLE_EQ(spans[1].busy_down_ms, 1 + 5 + 2);  // added to what it had
  EXPECT_DOUBLE_EQ(spans[1].busy_up_ms, 20);
  EXPECT_DOUBLE_EQ(spans[1].wall_ms, 20);  // the rest untouched
}

// Online: the idle share is the warm-up's, given; only the stretches are fitted, also from
// spans that are all busy (a plan that overlaps everything has no idle span to fit a from).
TEST(ComputeStretch, WithTheIdleShareGivenFitsTheStretchesAlone) {
  std::vector<UnitSpan> busy;
  for (const UnitSpan& s : draw(2.0, 2.4, 2.6, 0.0, 3))
    if (s.busy_down_ms > 0 || s.busy_up_ms > 0) busy.push_back(s);
  const ComputeStretch s = fit_compute_stretch(busy, 2.0);
  EXPECT_DOUBLE_EQ(s.idle_wall_per_cpu, 2.0);
  EXPECT_NEAR(s.down, 1.2, 1e-9);
  EXPECT_NEAR(s.up, 1.3, 1e-9);
  // Without it the same spans have no idle one: a = 1, and the stretches come out against
  // that (clamped), not the model's.
  const ComputeStretch f = fit_compute_stretch(busy);
  EXPECT_DOUBLE_EQ(f.idle_wall_per_cpu, 1.0);
  EXPECT_GT(f.up, 2.0);
  // A given share that is not a number is ignored: fitted from the idle spans.
  EXPECT_NEAR(
      fit_compute_stretch(draw(1.04, 1.10, 1.30, 0.0, 1), std::numeric_limits<double>::quiet_NaN())
          .idle_wall_per_cpu,
      1.04, 1e-9);
}

TEST(ComputeStretch, ADirectionWithTooLittleBusyTimeIsNotTold) {
  std::vector<UnitSpan> spans;
  for (int i = 0; i < 100; ++i) spans.push_back({10.5, 10, 0, 0});
  spans.push_back({30, 10, 0, 9});  // one span under the uplink: 1% of the work
  const ComputeStretch s = fit_compute_stretch(spans);
  EXPECT_NEAR(s.idle_wall_per_cpu, 1.05, 1e-12);
  EXPECT_FALSE(s.fitted_up);
  EXPECT_FALSE(s.fitted_down);
  EXPECT_DOUBLE_EQ(s.up, 1);
  EXPECT_DOUBLE_EQ(s.down, 1);
}

TEST(ComputeStretch, StaysWithinItsBoundsAndSkipsBadSpans) {
  std::vector<UnitSpan> spans;
  for (int i = 0; i < 50; ++i) spans.push_back({10, 10, 0, 0});
  // Busy spans computing *faster* than idle ones: no stretch below 1.
  for (int i = 0; i < 50; ++i) spans.push_back({8, 10, 0, 8});
  // Garbage: not finite, negative, too short to time.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  spans.push_back({nan, 10, 0, 0});
  spans.push_back({10, -1, 0, 0});
  spans.push_back({1e9, 0.1, 0, 0});
  spans.push_back({10, 10, std::numeric_limits<double>::infinity(), 0});
  const ComputeStretch s = fit_compute_stretch(spans);
  EXPECT_EQ(s.spans, 100u);
  EXPECT_DOUBLE_EQ(s.idle_wall_per_cpu, 1);
  EXPECT_DOUBLE_EQ(s.up, 1);
  // No idle span at all: a = 1; nothing at all: the neutral figures.
  EXPECT_DOUBLE_EQ(fit_compute_stretch({{12, 10, 0, 12}}).idle_wall_per_cpu, 1);
  const ComputeStretch none = fit_compute_stretch({});
  EXPECT_EQ(none.spans, 0u);
  EXPECT_DOUBLE_EQ(none.down, 1);
  EXPECT_DOUBLE_EQ(none.up, 1);
}

}  // namespace
}  // namespace dynacomm::plan
