#include "optim/sgd.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace dynacomm::optim {
namespace {

// Two steps worked by hand with PyTorch's rule (lr 0.1, momentum 0.9, weight decay 0.01):
//   p0 = 1, g = 0.5:  d = 0.51, v = 0.51,               p = 1 - 0.051        = 0.949
//   g = 0.5 again:    d = 0.5 + 0.00949 = 0.50949,
//                     v = 0.9 * 0.51 + 0.50949 = 0.96849, p = 0.949 - 0.096849 = 0.852151
TEST(Sgd, MatchesPyTorchRuleByHand) {
  SgdOptions o;
  o.lr = 0.1;
  o.momentum = 0.9;
  o.weight_decay = 0.01;
  Sgd sgd(o, {1});
  float p = 1.f, g = 0.5f;
  sgd.step(0, &p, &g, 0);
  EXPECT_NEAR(p, 0.949f, 1e-6);
  sgd.step(0, &p, &g, 1);
  EXPECT_NEAR(p, 0.852151f, 1e-6);
}

TEST(Sgd, CosineScheduleAndValidation) {
  SgdOptions o;
  o.lr = 0.2;
  o.schedule = LrSchedule::kCosine;
  o.total_iterations = 100;
  EXPECT_DOUBLE_EQ(o.lr_at(0), 0.2);
  EXPECT_NEAR(o.lr_at(50), 0.1, 1e-12);
  EXPECT_NEAR(o.lr_at(100), 0.0, 1e-12);
  o.total_iterations = 0;
  EXPECT_NO_THROW(o.validate());            // may be filled in later...
  EXPECT_THROW(Sgd(o, {1}), InvalidInput);  // ...but the optimizer needs it
  SgdOptions bad;
  bad.momentum = 1.0;
  EXPECT_THROW(bad.validate(), InvalidInput);
  bad = SgdOptions{};
  bad.lr = -1;
  EXPECT_THROW(Sgd(bad, {1}), InvalidInput);
  EXPECT_THROW(parse_lr_schedule("linear"), InvalidInput);
}

}  // namespace
}  // namespace dynacomm::optim
