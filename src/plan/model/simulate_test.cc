#include "plan/model/simulate.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace dynacomm::plan {
namespace {

ModelProfile profile_of(std::vector<std::int64_t> bytes, std::vector<double> fwd,
                        std::vector<double> bwd) {
  ModelProfile p;
  p.model = "hand";
  p.batch = 1;
  for (std::size_t i = 0; i < bytes.size(); ++i)
    p.units.push_back({"u" + std::to_string(i), bytes[i] / 4, bytes[i], fwd[i], bwd[i]});
  return p;
}

void expect_event(const Timeline& t, EventKind kind, int index, double start, double end) {
  for (const Event& e : t.events) {
    if (e.kind != kind || e.index != index) continue;
    EXPECT_DOUBLE_EQ(e.start_ms, start) << to_string(kind) << " " << index;
    EXPECT_DOUBLE_EQ(e.end_ms, end) << to_string(kind) << " " << index;
    return;
  }
  ADD_FAILURE() << "no " << to_string(kind) << " event " << index;
}

// 2 units of 1000 bytes on 8 Mbit/s links (1 ms each), 1 ms per transmission, 0.5 ms away.
// Worked by hand:
//   pull 0: 1.0 .. 3.0     forward 0: 3 .. 5
//   pull 1: 3.0 .. 5.0     forward 1: 5 .. 8
//   backward 1: 8 .. 13    push [1]: 13 .. 15
//   backward 0: 13 .. 17   push [0]: 17 .. 19      iteration: 19 + 0.5 = 19.5
TEST(Simulate, LayerwiseByHand) {
  ModelProfile p = profile_of({1000, 1000}, {2, 3}, {4, 5});
  LinkProfile link{8e6, 8e6, 1, 1, 0.5};
  Timeline t;
  double ms = simulate(p, link, Plan{"layerwise", {{0, 0}, {1, 1}}, {{1, 1}, {0, 0}}}, &t);
  EXPECT_DOUBLE_EQ(ms, 19.5);
  EXPECT_DOUBLE_EQ(t.iteration_ms, 19.5);
  EXPECT_DOUBLE_EQ(t.forward_end_ms, 8);
  EXPECT_DOUBLE_EQ(t.backward_end_ms, 17);
  expect_event(t, EventKind::kPull, 0, 1, 3);
  expect_event(t, EventKind::kPull, 1, 3, 5);
  expect_event(t, EventKind::kForward, 0, 3, 5);
  expect_event(t, EventKind::kForward, 1, 5, 8);
  expect_event(t, EventKind::kBackward, 1, 8, 13);
  expect_event(t, EventKind::kBackward, 0, 13, 17);
  expect_event(t, EventKind::kPush, 0, 13, 15);
  expect_event(t, EventKind::kPush, 1, 17, 19);
  EXPECT_EQ(t.events.size(), 8u);
}

// Compressed pushes: unit 1's gradient goes as 250 bytes (0.25 ms), unit 0's stays dense;
// pulls carry the dense 1000 bytes. From the layerwise case above:
//   backward 1: 8 .. 13    push [1]: 13 .. 14.25
//   backward 0: 13 .. 17   push [0]: 17 .. 19      iteration: 19.5 (unit 0 sets the end)
// and with unit 0 compressed to 500 bytes too: push [0] 17 .. 18.5, iteration 19.
TEST(Simulate, CompressedPushesCarryTheirEncodedBytesAndPullsTheDenseOnes) {
  ModelProfile p = profile_of({1000, 1000}, {2, 3}, {4, 5});
  p.units[1].push_bytes = 250;
  LinkProfile link{8e6, 8e6, 1, 1, 0.5};
  const Plan layerwise{"layerwise", {{0, 0}, {1, 1}}, {{1, 1}, {0, 0}}};
  Timeline t;
  EXPECT_DOUBLE_EQ(simulate(p, link, layerwise, &t), 19.5);
  expect_event(t, EventKind::kPull, 1, 3, 5);
  expect_event(t, EventKind::kPush, 0, 13, 14.25);
  p.units[0].push_bytes = 500;
  EXPECT_DOUBLE_EQ(simulate(p, link, layerwise, &t), 19);
  expect_event(t, EventKind::kPush, 1, 17, 18.5);
  EXPECT_EQ(p.total_bytes(), 2000);
  EXPECT_EQ(p.total_push_bytes(), 750);
}

// The same model sent in one piece each way:
//   pull: 1 .. 4 (1 ms + 2 KB)   forward 4 .. 9   backward 9 .. 18   push: 18 .. 21   +0.5
TEST(Simulate, SequentialByHand) {
  ModelProfile p = profile_of({1000, 1000}, {2, 3}, {4, 5});
  LinkProfile link{8e6, 8e6, 1, 1, 0.5};
  Timeline t;
  EXPECT_DOUBLE_EQ(simulate(p, link, Plan{"sequential", {{0, 1}}, {{0, 1}}}, &t), 21.5);
  expect_event(t, EventKind::kPull, 0, 1, 4);
  expect_event(t, EventKind::kForward, 1, 6, 9);
  expect_event(t, EventKind::kPush, 0, 18, 21);
}

// Three units, asymmetric link (8 Mbit/s down, 4 Mbit/s up), 2 ms per pull, 1 ms per push,
// no latency. The uplink is the bottleneck, so the second push waits for the link, not
// for its gradients:
//   pull [0,1]: 0 .. 6      forward 0: 6 .. 7, forward 1: 7 .. 8
//   pull [2]:   6 .. 16     forward 2: 16 .. 17
//   backward 2: 17 .. 18, 1: 18 .. 19, 0: 19 .. 20
//   push [2]:   18 .. 35 (1 + 16 ms)   push [0,1]: 35 .. 44 (1 + 8 ms)   iteration 44
TEST(Simulate, UplinkBoundByHand) {
  ModelProfile p = profile_of({1000, 3000, 8000}, {1, 1, 1}, {1, 1, 1});
  LinkProfile link{8e6, 4e6, 2, 1, 0};
  Timeline t;
  EXPECT_DOUBLE_EQ(simulate(p, link, Plan{"x", {{0, 1}, {2, 2}}, {{2, 2}, {0, 1}}}, &t), 44);
  expect_event(t, EventKind::kPull, 0, 0, 6);
  expect_event(t, EventKind::kPull, 1, 6, 16);
  expect_event(t, EventKind::kForward, 0, 6, 7);
  expect_event(t, EventKind::kForward, 2, 16, 17);
  expect_event(t, EventKind::kBackward, 0, 19, 20);
  expect_event(t, EventKind::kPush, 0, 18, 35);
  expect_event(t, EventKind::kPush, 1, 35, 44);
}

// LayerwiseByHand with compute 2x slower while the downlink is busy, 3x while the uplink is:
//   pull 0: 1 .. 3, pull 1: 3 .. 5 (the downlink is busy until 5)
//   forward 0: 3 .. 6 (1 ms of its 2 done by 5 at half speed, the other 1 after)
//   forward 1: 6 .. 9                 backward 1: 9 .. 14 (uplink idle)
//   push [1]: 14 .. 16                backward 0: 14 .. 19 1/3 (2/3 ms of work by 16)
//   push [0]: 19 1/3 .. 21 1/3        iteration 21 5/6
TEST(Simulate, ComputeUnderABusyLinkByHand) {
  ModelProfile p = profile_of({1000, 1000}, {2, 3}, {4, 5});
  LinkProfile link{8e6, 8e6, 1, 1, 0.5};
  link.compute_stretch_down = 2;
  link.compute_stretch_up = 3;
  Timeline t;
  const Plan layerwise{"layerwise", {{0, 0}, {1, 1}}, {{1, 1}, {0, 0}}};
  EXPECT_NEAR(simulate(p, link, layerwise, &t), 21.5 + 1.0 / 3, 1e-12);
  expect_event(t, EventKind::kForward, 0, 3, 6);
  expect_event(t, EventKind::kForward, 1, 6, 9);
  expect_event(t, EventKind::kBackward, 1, 9, 14);
  expect_event(t, EventKind::kPush, 0, 14, 16);
  for (const Event& e : t.events) {
    if (e.kind == EventKind::kBackward && e.index == 0) {
      EXPECT_DOUBLE_EQ(e.start_ms, 14);
      EXPECT_NEAR(e.end_ms, 19 + 1.0 / 3, 1e-12);
    }
  }
  // Sequential overlaps nothing: the stretch changes nothing.
  const Plan sequential{"sequential", {{0, 1}}, {{0, 1}}};
  EXPECT_DOUBLE_EQ(simulate(p, link, sequential), 21.5);
}

TEST(Simulate, ComputeEndIsPiecewise) {
  EXPECT_DOUBLE_EQ(compute_end(0, 2, 10, 3), 6);     // all under the busy link
  EXPECT_DOUBLE_EQ(compute_end(9, 2, 10, 2), 11.5);  // 0.5 ms of work by 10, 1.5 after
  EXPECT_DOUBLE_EQ(compute_end(12, 2, 10, 2), 14);   // the link is free already
  EXPECT_DOUBLE_EQ(compute_end(0, 2, 10, 1), 2);     // no stretch
}

TEST(Simulate, RejectsPlanForAnotherModel) {
  ModelProfile p = profile_of({1000, 1000}, {2, 3}, {4, 5});
  LinkProfile link{8e6, 8e6, 1, 1, 0.5};
  EXPECT_THROW(simulate(p, link, Plan{"x", {{0, 2}}, {{0, 2}}}), InvalidInput);
}

TEST(Ideal, IsLayerwiseWithoutOverhead) {
  ModelProfile p = profile_of({1000, 1000}, {2, 3}, {4, 5});
  LinkProfile link{8e6, 8e6, 1, 1, 0.5};
  // Worked as LayerwiseByHand with 0 ms per transmission: pulls arrive at 2 and 3,
  // forward 2..4, 4..7, backward 7..12, 12..16, pushes 12..13, 16..17; +0.5.
  EXPECT_DOUBLE_EQ(ideal_ms(p, link), 17.5);
}

}  // namespace
}  // namespace dynacomm::plan
