// dynacomm-fd on the shipped profiles: planning a real model's 100+ units takes seconds,
// so these run with the exhaustive tests.
#include <gtest/gtest.h>

#include "plan/duplex.h"
#include "plan/planner.h"
#include "plan/simulate.h"
#include "plan/slicing.h"

namespace dynacomm::plan {
namespace {

TEST(SlicedPlanners, DynacommFdPrefersACreditThatLateAcksDoNotStall) {
  // mobilenetv2 at 95/96 Mbit/s, 10 ms: P3's slices under priority are predicted the same
  // with P3's credit (4 slices) as with 8 (806.1 ms); with every ack 20 ms late (acks
  // queue behind other workers' bursts of parameters on a real downlink) 4 slices stall
  // the uplink (862.2 ms) and 8 do not. dynacomm-fd takes the credit that holds up.
  const ModelProfile p = load_model_profile(DYNACOMM_PROFILES_DIR "/mobilenetv2-1x28x28-b32.json");
  const LinkProfile l{95e6, 96e6, 0, 0, 10};
  PlannerOptions o;
  o.fd_slice_params = {40'000};  // P3's (the search over whole units still runs)
  const Plan fd = make_plan("dynacomm-fd", p, l, o);
  const Plan p3 = make_plan("p3", p, l, o);
  ASSERT_NEAR(predict_ms(p, l, fd), predict_ms(p, l, p3), 1e-6);
  DuplexOptions late;
  late.ack_delay_ms = 20;
  auto late_ms = [&](const Plan& plan) {
    const ModelProfile atoms = Slicing::make(p, plan.atom_params).atom_profile(p);
    return simulate_duplex(atoms, l, plan, late).period_ms;
  };
  EXPECT_GT(fd.credit_bytes, p3.credit_bytes);
  EXPECT_NEAR(late_ms(fd), predict_ms(p, l, fd), 1e-6);
  EXPECT_GT(late_ms(p3), predict_ms(p, l, p3) * 1.05);
}

}  // namespace
}  // namespace dynacomm::plan
