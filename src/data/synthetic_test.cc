#include "data/synthetic.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace dynacomm::data {
namespace {

TEST(Synthetic, ShapeRangeAndDeterminism) {
  SyntheticSource a(3, 8, 9, 1000, 5), b(3, 8, 9, 1000, 5);
  Batch x = a.next(4), y = b.next(4);
  EXPECT_EQ(x.images.size(), 4u * 3 * 8 * 9);
  EXPECT_EQ(x.images, y.images);
  EXPECT_EQ(x.labels, y.labels);
  for (auto l : x.labels) {
    EXPECT_GE(l, 0);
    EXPECT_LT(l, 1000);
  }
  EXPECT_NE(a.next(4).images, x.images);
  EXPECT_THROW(SyntheticSource(0, 1, 1, 1, 1), InvalidInput);
  EXPECT_THROW(a.next(0), InvalidInput);
}

}  // namespace
}  // namespace dynacomm::data
