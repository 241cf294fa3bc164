#include "plan/model/duplex.h"

#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "plan/model/simulate.h"
#include "plan/model/slicing.h"
#include "plan/planners/planner.h"
#include "plan/test_util.h"

namespace dynacomm::plan {
namespace {

ModelProfile units(std::vector<std::int64_t> bytes, double f, double g) {
  return testing::hand_profile(bytes, f, g);
}

// 8 Mbit/s: 1,000,000 bytes take 1000 ms.
LinkProfile link(double latency = 0) { return {8e6, 8e6, 0, 0, latency}; }

TEST(DuplexSimulator, OneUnitCannotOverlapAnything) {
  // pull 0-1000, forward 1000-1100, backward -1300, push 1300-2300; the next pull waits
  // for the push: period 2300.
  const ModelProfile p = units({1'000'000}, 100, 200);
  const Plan plan{"seq", {{0, 0}}, {{0, 0}}};
  DuplexResult r = simulate_duplex(p, link(), plan);
  ASSERT_TRUE(r.converged);
  EXPECT_EQ(r.cycle, 1);
  EXPECT_DOUBLE_EQ(r.period_ms, 2300);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[0], 1000);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[1], 3300);
  // Latency 5 ms each way and 10 ms of aggregation: the push arrives 5 ms later, is
  // servable 10 ms after that, and the reply takes 5 ms more: 2300 + 5 + 10 + 5.
  LinkProfile aggregating = link(5);
  aggregating.aggregation_ms = 10;
  r = simulate_duplex(p, aggregating, plan);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[0], 1010);
  EXPECT_DOUBLE_EQ(r.period_ms, 2320);
  // The same 10 ms as 4 ms per push and 6 ms per MB of it.
  aggregating.aggregation_ms = 4;
  aggregating.aggregation_ms_per_mb = 6;
  EXPECT_DOUBLE_EQ(simulate_duplex(p, aggregating, plan).period_ms, 2320);
}

TEST(DuplexSimulator, CompressedPushesTakeTheirBytesAndTheirDecoding) {
  // As above, the push compressed to 100,000 bytes (100 ms) and decoded in 7 ms at the PS;
  // the aggregation (4 ms + 6 ms per MB) is of the dense MB it decodes to: pull 0-1000,
  // forward -1100, backward -1300, push -1400, + 5 ms away, + 7 + 10 ms, + 5 ms back.
  ModelProfile p = units({1'000'000}, 100, 200);
  p.units[0].push_bytes = 100'000;
  p.units[0].decode_ms = 7;
  LinkProfile aggregating = link(5);
  aggregating.aggregation_ms = 4;
  aggregating.aggregation_ms_per_mb = 6;
  const DuplexResult r = simulate_duplex(p, aggregating, Plan{"seq", {{0, 0}}, {{0, 0}}});
  ASSERT_TRUE(r.converged);
  EXPECT_DOUBLE_EQ(r.period_ms, 1000 + 100 + 200 + 100 + 5 + 7 + 10 + 5);
  // The bound: compute against each link's bytes (the uplink's now 100 ms).
  EXPECT_DOUBLE_EQ(ideal_duplex_ms(p, aggregating), 1000);
}

TEST(DuplexSimulator, PullOrderDecidesTheOverlap) {
  // Two units of 1 MB, no compute. Ascending pulls: unit 0's pull waits for unit 0's push,
  // which goes last, so nothing overlaps: 4 transfers of 1000 ms per iteration.
  const ModelProfile p = units({1'000'000, 1'000'000}, 0, 0);
  Plan segments{"layerwise", {{0, 0}, {1, 1}}, {{1, 1}, {0, 0}}};
  DuplexResult r = simulate_duplex(p, link(), segments);
  ASSERT_TRUE(r.converged);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[0], 1000);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[1], 5000);
  EXPECT_DOUBLE_EQ(r.period_ms, 4000);
  // Top unit first: its pull runs while unit 0 is still being pushed: 3000 ms.
  segments.full_duplex = true;
  segments.pull_order = {1, 0};
  r = simulate_duplex(p, link(), segments);
  ASSERT_TRUE(r.converged);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[0], 2000);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[1], 5000);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[2], 8000);
  EXPECT_DOUBLE_EQ(r.period_ms, 3000);
}

TEST(DuplexSimulator, PriorityPushesTheLowestReadyFirstAndPullsAsReady) {
  // Units of 1, 1 and 2 MB, no forward time, backward 100 ms each; credit of one byte
  // (one push at a time). Iteration 0 pulls all at once: ready together, lowest first:
  // 0-1000, 1000-2000, 2000-4000; forward waits for them (starts at 1000, ends at 4000);
  // backward ends unit 2 at 4100, unit 1 at 4200, unit 0 at 4300. Pushes: at 4100 only
  // unit 2 is ready: 4100-6100; then units 1 and 0 are, and the lower goes first: unit 0
  // 6100-7100 (its ack waits behind unit 2's reply, until 8100), unit 1 8100-9100.
  // Iteration 1's pulls as each is ready: unit 2 (6100) 6100-8100, unit 0 (7100)
  // 8100-9100, unit 1 (9100) 9100-10100: forward starts at 9100.
  ModelProfile p = units({1'000'000, 1'000'000, 2'000'000}, 0, 100);
  Plan plan{"priority", {{0, 0}, {1, 1}, {2, 2}}, {{2, 2}, {1, 1}, {0, 0}}};
  plan.full_duplex = true;
  plan.credit_bytes = 1;
  DuplexResult r = simulate_duplex(p, link(), plan);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[0], 1000);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[1], 9100);
  // Aggregating 50 ms per MB: unit 2 servable at 6200, its reply 6200-8200; unit 0 in at
  // 7100, servable 7150, its reply behind unit 2's: 8200-9200.
  LinkProfile aggregating = link();
  aggregating.aggregation_ms_per_mb = 50;
  EXPECT_DOUBLE_EQ(simulate_duplex(p, aggregating, plan).forward_start_ms[1], 9200);
  // In plan order instead (pushes 2, 1, 0; pulls in order 0, 1, 2): unit 0 arrives at
  // the PS last (8100), so iteration 1's pulls run 8100-9100, then 1 and 2: same start,
  // but the downlink is busy until 12100 and iteration 2 starts later.
  plan.credit_bytes = 0;
  DuplexResult fifo = simulate_duplex(p, link(), plan);
  EXPECT_DOUBLE_EQ(fifo.forward_start_ms[1], 9100);
  EXPECT_GT(fifo.forward_start_ms[2], r.forward_start_ms[2]);
}

TEST(DuplexSimulator, AnAckQueuedBehindPullRepliesHoldsBackTheCredit) {
  // Units of 1, 1 and 4 MB, no forward time, backward 100 ms each; downlink 16 Mbit/s
  // (1 MB in 500 ms), uplink 8 Mbit/s (1 MB in 1000 ms); credit of one byte (one push
  // unacknowledged at a time). Iteration 0 pulls all at once, lowest first: 0-500,
  // 500-1000, 1000-3000; forward 500-3000; backward ends unit 2 at 3100, 1 at 3200, 0 at
  // 3300. Pushes: unit 2 3100-7100; its ack comes straight back (the downlink is idle)
  // and its reply goes 7100-9100. Unit 0 7100-8100: its ack leaves behind that reply and
  // reaches the worker at 9100, so unit 1 waits for it: 9100-10100. Replies: unit 0 (ready
  // at 8100) 9100-9600, unit 1 10100-10600. Iteration 1: forward 9600-10600, backward ends
  // 10700, 10800, 10900; pushes unit 2 10700-14700, unit 0 14700-15700 (ack at 16700,
  // behind unit 2's reply 14700-16700), unit 1 16700-17700; unit 0's reply 16700-17200:
  // iteration 2 starts at 17200.
  ModelProfile p = units({1'000'000, 1'000'000, 4'000'000}, 0, 100);
  const LinkProfile l{16e6, 8e6, 0, 0, 0};
  Plan plan{"priority", {{0, 0}, {1, 1}, {2, 2}}, {{2, 2}, {1, 1}, {0, 0}}};
  plan.full_duplex = true;
  plan.credit_bytes = 1;
  const DuplexResult r = simulate_duplex(p, l, plan);
  ASSERT_GE(r.forward_start_ms.size(), 3u);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[0], 500);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[1], 9600);
  EXPECT_DOUBLE_EQ(r.forward_start_ms[2], 17200);
  // A credit of all three pushes hands each over as its gradients come, and the link's
  // queue is first come first served: unit 2 3100-7100, unit 1 7100-8100, unit 0
  // 8100-9100; replies unit 2 7100-9100, unit 1 9100-9600, unit 0 9600-10100: iteration 1
  // starts 500 ms later than with the one-byte credit, whose wait for the ack let unit 0
  // overtake. In the steady state the wide credit, never waiting, is the faster.
  plan.credit_bytes = 6'000'000;
  const DuplexResult wide = simulate_duplex(p, l, plan);
  EXPECT_DOUBLE_EQ(wide.forward_start_ms[1], 10100);
  EXPECT_LT(wide.period_ms, r.period_ms);
}

TEST(DuplexWorkers, TheLastWorkersGradientReleasesTheUnit) {
  // One unit of 1 MB, forward 100 ms; one sample's backward takes 200 ms, the other's
  // 700. Alone, the fast sample's period is 2300 ms (pull 1000, forward 100, backward 200,
  // push 1000) and the slow one's 2800. Two workers take the samples in turn, one of them
  // always the slow one: the unit is released only when its push is in, both forward
  // passes start together, and every period is 2800. One worker alternating the two
  // samples: 2300 and 2800, 2550 in the mean.
  ModelProfile fast = units({1'000'000}, 100, 200), slow = units({1'000'000}, 100, 700);
  const Plan plan{"seq", {{0, 0}}, {{0, 0}}};
  EXPECT_DOUBLE_EQ(simulate_duplex_workers_ms({fast, slow}, 2, link(), plan), 2800);
  EXPECT_DOUBLE_EQ(simulate_duplex_workers_ms({fast, slow}, 1, link(), plan), 2550);
  EXPECT_DOUBLE_EQ(simulate_duplex_workers_ms({fast}, 3, link(), plan), 2300);
  EXPECT_THROW(simulate_duplex_workers_ms({}, 2, link(), plan), InvalidInput);
  EXPECT_THROW(simulate_duplex_workers_ms({fast}, 0, link(), plan), InvalidInput);
  EXPECT_THROW(simulate_duplex_workers_ms({fast, units({2'000'000}, 100, 200)}, 2, link(), plan),
               InvalidInput);
}

TEST(DuplexWorkers, WorkersAlikeAreTheOneWorkerModel) {
  // One sample for every worker: each worker's gradients arrive together, so the model of
  // one worker holds, for plans in pull order and by priority, whole units and slices.
  std::mt19937_64 rng(23), aggregation_rng(24);
  int compared = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const ModelProfile p = testing::random_profile(rng, 1, 6);
    LinkProfile l = testing::random_link(rng);
    if (trial % 2) testing::add_random_aggregation(aggregation_rng, l);
    Plan plan;
    ModelProfile run = p;
    switch (trial % 4) {
      case 0:
        plan = make_plan("layerwise", p, l, {});
        break;
      case 1:
        plan = make_plan("dynacomm", p, l, {});
        plan.full_duplex = true;
        break;
      case 2:
        plan = plan_duplex(p, l);
        break;
      default: {
        std::int64_t biggest = 0;
        for (const auto& u : p.units) biggest = std::max(biggest, u.params);
        const Slicing slicing = Slicing::make(p, std::max<std::int64_t>(1, biggest / 3));
        run = slicing.atom_profile(p);
        plan = priority_plan(slicing, 2 * slicing.atoms[0].params * 4 + 1);
        plan.atom_params = 0;
      }
    }
    const DuplexResult one = simulate_duplex(run, l, plan);
    if (!one.converged || one.transient > 10 || 24 % one.cycle != 0) continue;
    ++compared;
    for (int workers : {1, 3})
      EXPECT_NEAR(simulate_duplex_workers_ms({run}, workers, l, plan), one.period_ms,
                  1e-6 * one.period_ms)
          << "trial " << trial << ", " << workers << " workers, plan " << plan.scheduler;
  }
  EXPECT_GT(compared, 80) << "too few cases reached their steady state early";
}

TEST(DuplexWorkers, PredictionChargesTheStretchAsTheOneWorkerModelDoes) {
  // One sample: the workers alike, so the stretch's fixed point is predict_duplex_ms's.
  std::mt19937_64 rng(29);
  int compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const ModelProfile p = testing::random_profile(rng, 1, 6);
    LinkProfile l = testing::random_link(rng);
    l.compute_stretch_down = 1.3;
    l.compute_stretch_up = 1.6;
    const Plan plan = trial % 2 ? plan_duplex(p, l) : make_plan("layerwise", p, l, {});
    const DuplexResult one = simulate_duplex(p, l, plan);
    if (!one.converged || one.transient > 10 || 24 % one.cycle != 0) continue;
    ++compared;
    const double expected = predict_duplex_ms(p, l, plan);
    const double got = predict_duplex_workers_ms({p}, 2, l, plan);
    EXPECT_NEAR(got, expected, 1e-3 * expected) << "trial " << trial;
    LinkProfile idle = l;
    idle.compute_stretch_down = idle.compute_stretch_up = 1;
    EXPECT_GE(got, predict_duplex_workers_ms({p}, 2, idle, plan) * (1 - 1e-9)) << "trial " << trial;
  }
  EXPECT_GT(compared, 30) << "too few cases reached their steady state early";
}

TEST(DuplexSimulator, NeverSlowerThanPhaseSeparatedAndNeverBelowItsResources) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const ModelProfile p = testing::random_profile(rng, 1, 12);
    LinkProfile l = testing::random_link(rng);
    const std::string name = trial % 3 == 0   ? "sequential"
                             : trial % 3 == 1 ? "layerwise"
                                              : "dynacomm";
    const Plan plan = make_plan(name, p, l, {});
    const DuplexResult r = simulate_duplex(p, l, plan);
    ASSERT_TRUE(r.converged) << "trial " << trial;
    const double tol = 1e-6 * r.period_ms;
    EXPECT_GE(r.period_ms + tol, testing::resource_bound_ms(p, l, plan)) << "trial " << trial;
    // The phase-separated iteration (which also pays the request's latency) bounds it.
    EXPECT_LE(r.period_ms, simulate(p, l, plan) + tol) << "trial " << trial;
  }
}

TEST(DuplexSimulator, PredictionChargesComputeUnderABusyLinkAtItsFixedPoint) {
  // Compute-bound: 4 units of 100 ms on the link each way, 300 ms of compute each.
  const ModelProfile p = units({100'000, 100'000, 100'000, 100'000}, 100, 200);
  const Plan plan = make_plan("layerwise", p, link(), PlannerOptions{});
  const double raw = simulate_duplex(p, link(), plan).period_ms;
  EXPECT_DOUBLE_EQ(predict_duplex_ms(p, link(), plan), raw);  // no stretch: the simulator's
  LinkProfile busy = link();
  busy.compute_stretch_up = 1.5;
  busy.compute_stretch_down = 1.2;
  const double period = predict_duplex_ms(p, busy, plan);
  EXPECT_GT(period, raw * 1.05);
  // The fixed point: every unit stretched by the links' busy shares of that very period.
  const double f = 1 + 0.2 * std::min(1.0, 400 / period) + 0.5 * std::min(1.0, 400 / period);
  ModelProfile stretched = p;
  for (auto& u : stretched.units) {
    u.forward_ms *= f;
    u.backward_ms *= f;
  }
  EXPECT_NEAR(simulate_duplex(stretched, busy, plan).period_ms, period, 1e-3 * period);
  // The bound charges the stretch the same way, and stays a bound.
  EXPECT_GT(ideal_duplex_ms(p, busy), ideal_duplex_ms(p, link()));
  EXPECT_LE(ideal_duplex_ms(p, busy), period * (1 + 1e-9));
  // Link-bound (4 s of transfers, 60 ms of compute): at most the compute's own stretch.
  const ModelProfile light = units({1'000'000, 1'000'000}, 10, 20);
  const Plan lw = make_plan("layerwise", light, link(), PlannerOptions{});
  const double light_raw = simulate_duplex(light, link(), lw).period_ms;
  EXPECT_GE(predict_duplex_ms(light, busy, lw), light_raw);
  EXPECT_LE(predict_duplex_ms(light, busy, lw), light_raw + 0.7 * 60);
}

TEST(DuplexSimulator, RejectsABadPullOrder) {
  const ModelProfile p = units({10, 10}, 1, 1);
  Plan segments{"layerwise", {{0, 0}, {1, 1}}, {{1, 1}, {0, 0}}};
  segments.full_duplex = true;
  for (std::vector<int> bad : {std::vector<int>{0, 0}, {0}, {0, 2}}) {
    segments.pull_order = bad;
    EXPECT_THROW(simulate_duplex(p, link(), segments), InvalidInput);
  }
}

using testing::duplex_period;

// The family dynacomm-fd searches holds the optimum over every pull order: exhaustive
// search of the family equals brute force over all orders and segmentations.
TEST(DuplexPlanner, FamilySearchMatchesBruteForceOverEveryOrder) {
  std::mt19937_64 rng(21), aggregation_rng(25);
  for (int trial = 0; trial < 40; ++trial) {
    const ModelProfile p = testing::random_profile(rng, 1, 5);
    LinkProfile l = testing::random_link(rng);
    if (trial % 2) testing::add_random_aggregation(aggregation_rng, l);
    const double exact = duplex_period(p, l, plan_duplex(p, l));  // L <= 8: exhaustive family
    const double brute = duplex_period(p, l, brute_force_duplex(p, l));
    EXPECT_NEAR(exact, brute, 1e-9 * brute)
        << "trial " << trial << ", " << p.units.size() << " units";
  }
}

// Above the exhaustive size the planner runs a bounded local search; checked against the
// exhaustive family search where both can run.
TEST(DuplexPlanner, LocalSearchStaysCloseToTheExhaustiveOptimum) {
  std::mt19937_64 rng(22);
  DuplexPlannerOptions heuristic;
  heuristic.exact_up_to = 0;
  double worst = 1;
  for (int trial = 0; trial < 40; ++trial) {
    const ModelProfile p = testing::random_profile(rng, 2, 6);
    const LinkProfile l = testing::random_link(rng);
    const double h = duplex_period(p, l, plan_duplex(p, l, heuristic));
    const double exact = duplex_period(p, l, plan_duplex_exhaustive(p, l));
    EXPECT_GE(h, exact * (1 - 1e-9));
    worst = std::max(worst, h / exact);
  }
  EXPECT_LE(worst, 1.02) << "local search within 2% of the optimum on every case";
}

// On a real model's profile the full-duplex plan beats the phase-separated optimum run the
// same way, and never loses to it.
TEST(DuplexPlanner, BeatsThePhaseSeparatedPlanOnACommunicationBoundLink) {
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 10; ++trial) {
    ModelProfile p = testing::random_profile(rng, 15, 30);
    LinkProfile l = testing::random_link(rng);
    const Plan fd = plan_duplex(p, l);
    const Plan ps = make_plan("dynacomm", p, l, {});
    EXPECT_LE(duplex_period(p, l, fd), duplex_period(p, l, ps) * (1 + 1e-9)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace dynacomm::plan
